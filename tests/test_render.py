"""The chat answer and error messages in fa/tr/en: content, language hygiene and length."""
from __future__ import annotations

import itertools
import re

import pytest

from bot.advisor.advice import AdviceRequest, advise
from bot.advisor.knowledge import InputError, UnknownModel, load_knowledge
from bot.present.render import MESSAGE_LIMIT, duration, money, number, render_advice, render_error, tokens

KB = load_knowledge()
LANGS = ("fa", "tr", "en")

# Latin-script words a Persian or Turkish answer may carry: product, model and technical names.
LATIN_TERMS = {
    "gb", "gpu", "gpus", "lora", "qlora", "cuda", "logits", "micro", "batch", "rank", "gradient", "checkpointing",
    "full", "fine", "tuning", "epoch", "zero", "fsdp", "bf16", "adam", "master", "b", "x", "kdv", "framework",
    "optimizer", "llama", "mistral", "qwen2", "gemma", "phi", "mini", "medium", "yi", "codellama",
}
for card in KB.gpus:
    LATIN_TERMS.update(card.name.lower().split())
    LATIN_TERMS.add(card.id)


def advice_for(**values):
    values.setdefault("method", "qlora")
    values.setdefault("seq_len", 2048)
    if "size_b" not in values:
        values.setdefault("model", "llama-3.1-8b")
    return advise(AdviceRequest(**values))


@pytest.mark.parametrize("lang", LANGS)
def test_answer_has_memory_parts_cards_prices_and_test_advice(lang):
    advice = advice_for(budget_usd=50, examples=5000, avg_tokens=600, epochs=3)
    text = render_advice(advice, lang)
    assert "Llama 3.1 8B" in text
    assert number(advice.estimate.per_gpu_gib, lang, 1) in text
    for card in advice.fitting_cards[:3]:
        assert card.name in text
        assert money(card.price_usd_hour, lang) in text and money(card.price_usd_hour_with_vat, lang) in text
    assert advice.fitting_cards[3].name not in text.split("\n\n")[1]  # top 3 only in the card list
    assert KB.text("part_weights", lang) in text
    assert KB.text("test_first", lang) in text
    assert tokens(9e6, lang, KB) in text
    assert duration(advice.best.hours, lang, KB) in text


def test_turkish_uses_decimal_comma_and_kdv_persian_names_vat():
    advice = advice_for()
    tr, fa = render_advice(advice, "tr"), render_advice(advice, "fa")
    assert "$0,74" in tr and "KDV" in tr and "$0.74" not in tr
    assert "$0.74" in fa and "مالیات بر ارزش افزوده" in fa


SAMPLES = [dict(budget_usd=50, total_tokens=20e6), dict(size_b=70, method="full", budget_usd=1000),
           dict(model="qwen2.5-72b", method="lora", budget_unlimited=True), dict(size_b=20, budget_usd=5)]
# English words of the English answer that never belong in a Turkish one.
ENGLISH_ONLY = {"the", "and", "per", "with", "about", "incl", "excl", "budget", "memory", "cards", "estimate",
                "assumed", "largest", "parts", "cheapest", "training", "tokens", "hours", "needed", "range", "on"}


def test_no_stray_english_in_persian():
    for values in SAMPLES:
        text = render_advice(advice_for(**values), "fa")
        words = {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9]*", text)}
        assert words <= LATIN_TERMS, words - LATIN_TERMS


def test_no_stray_english_in_turkish():
    for values in SAMPLES:
        text = render_advice(advice_for(**values), "tr")
        words = {w.lower() for w in re.findall(r"\w+", text)}
        assert not words & ENGLISH_ONLY, words & ENGLISH_ONLY
        assert "ı" in text and "ş" in text  # written in Turkish, not ASCII-folded


@pytest.mark.parametrize("lang", LANGS)
def test_ascii_digits_only(lang):
    text = render_advice(advice_for(size_b=13, method="lora", budget_usd=20), lang)
    assert not re.search(r"[\u06f0-\u06f9\u0660-\u0669]", text)


def test_every_answer_fits_a_chat_bubble():
    longest = 0
    for preset, method, lang in itertools.product(KB.models, ("full", "lora", "qlora"), LANGS):
        advice = advise(AdviceRequest(model=preset.id, method=method, seq_len=4096, budget_usd=100,
                                      examples=20000, avg_tokens=800, epochs=2))
        longest = max(longest, len(render_advice(advice, lang)))
    print(f"longest answer: {longest} characters")
    assert longest < MESSAGE_LIMIT * 0.6


@pytest.mark.parametrize("lang", LANGS)
def test_no_single_card_gives_multi_gpu_plan_and_quote_offer(lang):
    advice = advice_for(size_b=70, method="full")
    text = render_advice(advice, lang)
    assert KB.text("quote_offer", lang) in text
    assert KB.text("no_single_card", lang, total=number(advice.estimate.per_gpu_gib, lang, 0),
                   largest="180") in text
    if advice.multi_gpu:
        assert f"{advice.multi_gpu.count}" in text and advice.multi_gpu.name in text
    else:
        assert KB.text("multi_gpu_none", lang, count=8) in text
    assert KB.text("quote_offer", lang) not in render_advice(advice, lang, quote_offer=False)


@pytest.mark.parametrize("lang", LANGS)
def test_full_fine_tuning_mentions_pure_bf16(lang):
    advice = advice_for(model="qwen2.5-1.5b", method="full")
    text = render_advice(advice, lang)
    bf16 = KB.text("full_bf16_note", lang, bf16=number(advice.pure_bf16_estimate.per_gpu_gib, lang, 1))
    assert bf16 in text
    assert "bf16" not in render_advice(advice_for(), lang)


@pytest.mark.parametrize("lang", LANGS)
def test_size_only_names_the_preset_used(lang):
    assert KB.text("preset_by_size", lang, size="13", model="Llama 2 13B") in render_advice(advice_for(size_b=13), lang)
    text = render_advice(advice_for(size_b=20), lang)
    assert KB.text("preset_by_size_nearest", lang, size="20", model="Gemma 2 27B") in text


@pytest.mark.parametrize("lang", LANGS)
def test_budget_lines(lang):
    over = advice_for(total_tokens=50e6, budget_usd=1)
    assert money(1, lang, whole_if_round=True) in render_advice(over, lang)
    verdict = over.budget_verdict
    names = {c.card_id: c.name for c in over.cards}
    assert names[verdict.cheapest_card] in render_advice(over, lang)
    unknown = render_advice(advice_for(budget_usd=20), lang)
    assert KB.text("volume_unknown", lang) in unknown
    unlimited = advice_for(budget_unlimited=True)
    fastest = max(unlimited.fitting_cards, key=lambda c: c.tokens_per_second)
    assert KB.text("budget_unlimited", lang, card=fastest.name) in render_advice(unlimited, lang)


@pytest.mark.parametrize("lang", LANGS)
def test_errors_are_one_line_in_the_users_language(lang):
    errors = []
    for values in ({"seq_len": 0}, {"method": "dpo"}, {"budget_usd": -1}, {"model": None, "size_b": 5000},
                   {"lora_rank": 3000, "method": "lora", "model": "llama-3.2-1b"}, {"model": "llama"},
                   {"model": "xyzzy"}):
        base = {"model": "llama-3.1-8b", "method": "qlora", "seq_len": 2048, **values}
        with pytest.raises(InputError) as info:
            advise(AdviceRequest(**base))
        errors.append(info.value)
    for error in errors:
        text = render_error(error, lang)
        assert text and "\n" not in text and "{" not in text
    assert ("1.000.000" if lang == "tr" else "1,000,000") in render_error(errors[0], lang)
    assert "dpo" in render_error(errors[1], lang)
    assert "2048" in render_error(errors[4], lang)
    assert "Llama 3.1 8B" in render_error(errors[5], lang)  # suggestions by display name
    assert isinstance(errors[6], UnknownModel) and "xyzzy" in render_error(errors[6], lang)


def test_unexpected_errors_get_a_generic_apology_and_bad_lang_is_refused():
    assert render_error(RuntimeError("boom"), "fa") == KB.text("error_internal", "fa")
    with pytest.raises(ValueError):
        render_advice(advice_for(), "de")


@pytest.mark.parametrize("value,lang,expected", [
    (1234.5, "en", "1,234.5"), (1234.5, "tr", "1.234,5"), (2.0, "fa", "2"), (0.74, "tr", "0,74"),
])
def test_number_formatting(value, lang, expected):
    assert number(value, lang, 2) == expected


def test_durations_and_token_counts():
    assert duration(0.2, "en", KB) == "12 min"
    assert duration(5.04, "tr", KB) == "5 saat"
    assert duration(72, "fa", KB) == "3 روز"
    assert tokens(20e6, "en", KB) == "20 million" and tokens(1.5e9, "tr", KB) == "1,5 milyar"


@pytest.mark.parametrize("lang", LANGS)
def test_budget_fits_variants(lang):
    some = advice_for(total_tokens=20e6, budget_usd=5)
    within, total = len(some.budget_verdict.cards_within), len(some.fitting_cards)
    assert 0 < within < total
    cheapest = next(c for c in some.cards if c.card_id == some.budget_verdict.cheapest_card)
    assert KB.text("budget_fits", lang, budget="5", count=within, total=total, card=cheapest.name,
                   cost=money(cheapest.cost_usd_with_vat, lang)) in render_advice(some, lang)
    everything = advice_for(total_tokens=20e6, budget_usd=500)
    assert len(everything.budget_verdict.cards_within) == len(everything.fitting_cards)
    assert KB.text("budget_fits_all", lang, budget="500", card=cheapest.name,
                   cost=money(cheapest.cost_usd_with_vat, lang)) in render_advice(everything, lang)
    multi = advice_for(size_b=70, method="full", total_tokens=20e6, budget_usd=100000)
    if multi.multi_gpu is not None:
        assert KB.text("budget_fits_multi", lang, budget=money(100000, lang, whole_if_round=True),
                       cost=money(multi.multi_gpu.cost_usd_with_vat, lang)) in render_advice(multi, lang)
