"""The chat answer and error messages in fa/tr/en: content, language hygiene and length."""
from __future__ import annotations

import itertools
import re

import pytest

from bot.advisor.advice import AdviceRequest, advise
from bot.advisor.knowledge import InputError, UnknownModel, load_knowledge
from bot.present.render import (MESSAGE_LIMIT, RLM, duration, gb, money, number, render_advice, render_error,
                                tokens, usd)

KB = load_knowledge()
LANGS = ("fa", "tr", "en")

# Latin-script words a Persian or Turkish answer may carry: product, model and technical names.
LATIN_TERMS = {
    "gb", "gpu", "gpus", "lora", "qlora", "cuda", "logits", "micro", "batch", "rank", "gradient", "checkpointing",
    "full", "fine", "tuning", "epoch", "zero", "fsdp", "bf16", "adam", "master", "b", "x", "kdv", "framework",
    "optimizer", "llama", "mistral", "qwen2", "gemma", "phi", "mini", "medium", "yi", "codellama",
    "states", "mixed", "precision", "loss", "oom", "adamw", "liger", "kernel", "cross", "entropy", "ffn",
    # training stacks and multi-GPU terms (knowledge/stacks.yml)
    "unsloth", "axolotl", "transformers", "peft", "trl", "torchtune", "nemo", "automodel", "nvidia", "ddp", "nvlink",
    "pcie", "expert", "moe",
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
    for card in advice.shortlist:
        assert card.name in text
        assert money(card.price_usd_hour, lang) in text and money(card.price_usd_hour_with_vat, lang) in text
    assert KB.text("part_weights", lang) in text
    assert KB.text("test_first", lang) in text
    assert tokens(9e6, lang, KB) in text
    assert duration(advice.recommendation.card.hours, lang, KB) in text


def _lead(text: str) -> str:
    return text.split("\n")[0]


@pytest.mark.parametrize("lang", LANGS)
def test_the_first_line_recommends_one_card_with_both_prices_and_why(lang):
    advice = advice_for()  # 8B QLoRA: A40 holds it with room to spare at the lowest hourly price
    card = advice.recommendation.card
    assert card.card_id == "a40" and advice.recommendation.reason == "cheapest_safe"
    lead = _lead(render_advice(advice, lang))
    assert lead == KB.text("rec_cheapest_safe", lang, card="A40", vram="48", price=money(0.74, lang),
                           price_vat=money(0.89, lang))
    # a card that is cheaper per token is named next, with its hourly price (the reviews: "H100 ... 4.99")
    faster = advice.recommendation.faster
    if faster is not None:
        second = render_advice(advice, lang).split("\n")[1]
        assert faster.name in second and money(faster.price_usd_hour, lang) in second


@pytest.mark.parametrize("lang", LANGS)
def test_dominated_cards_are_left_out_of_the_list_and_named_once(lang):
    advice = advice_for()
    text = render_advice(advice, lang)
    listed = [line for line in text.split("\n") if re.match(rf"^{RLM}?\d+\. ", line)]
    assert [line.split(". ")[1].split(" (")[0] for line in listed] == [c.name for c in advice.shortlist][:len(listed)]
    assert listed and listed[0].split(". ")[1].startswith("A40")
    for dropped in ("L4", "RTX 4090", "B200"):
        assert dropped in advice.dominated or dropped.lower().replace(" ", "") in advice.dominated
    dominated_names = [c.name for c in advice.cards if c.card_id in advice.dominated]
    assert KB.text("dominated_cards", lang, names=KB.text("list_separator", lang).join(dominated_names)) in text


@pytest.mark.parametrize("lang", LANGS)
def test_a_card_under_the_upper_bound_is_tight_and_the_risk_is_said(lang):
    advice = advice_for(model="qwen2.5-32b", method="lora")  # 75.7 GB, range up to 87.6: A100/H100 only tight
    statuses = {c.card_id: c.status for c in advice.cards}
    assert statuses["a100"] == statuses["h100"] == "tight" and statuses["rtx-pro-6000"] == "fits"
    assert advice.recommendation.card.card_id == "rtx-pro-6000"  # the cheapest card that holds the top of the range
    text = render_advice(advice, lang)
    a100 = next(line for line in text.split("\n") if "A100 (80 GB)" in line)
    assert KB.text("card_tight", lang, high=gb(advice.estimate.high_gib, lang)) in a100
    assert KB.text("tight_remedy_lora", lang) in text


@pytest.mark.parametrize("lang", LANGS)
def test_full_fine_tuning_offers_the_cheaper_single_gpu_routes(lang):
    advice = advice_for(model="llama-3.1-8b", method="full")
    kinds = [alt.kind for alt in advice.alternatives]
    assert kinds[0] == "bf16" and "lora" in kinds
    text = render_advice(advice, lang)
    assert KB.text("alternatives_header", lang) in text
    bf16 = advice.alternatives[0]
    assert bf16.card_name in text and gb(bf16.per_gpu_gib, lang) in text
    assert bf16.price_usd_hour < advice.recommendation.card.price_usd_hour


@pytest.mark.parametrize("lang", LANGS)
def test_tiny_budget_is_told_in_minutes_with_a_cheaper_start(lang):
    advice = advice_for(model="qwen2.5-32b", method="lora", budget_usd=2)
    assert advice.budget.tiny and advice.budget.hours < 1
    text = render_advice(advice, lang)
    assert KB.text("duration_minutes", lang, n=str(int(advice.budget.hours * 60 + 0.999))) in text
    assert advice.budget_alternative.kind == "qlora" and advice.budget_alternative.card_id == "a40"
    assert "A40" in text.split(KB.text("duration_minutes", lang, n=str(int(advice.budget.hours * 60 + 0.999))))[1]


@pytest.mark.parametrize("lang", LANGS)
def test_over_budget_says_how_much_is_missing_and_what_fits(lang):
    advice = advice_for(method="lora", total_tokens=500e6, budget_usd=60, stack="hf")
    assert advice.budget.missing_usd > 0
    text = render_advice(advice, lang)
    assert money(advice.budget.missing_usd, lang) in text
    if advice.budget_alternative is not None:
        assert advice.budget_alternative.cost_usd_with_vat <= 60
        assert advice.budget_alternative.card_name in text
    else:
        assert KB.text("budget_over_fix_volume", lang, share=str(int(advice.budget.volume_share * 100))) in text


@pytest.mark.parametrize("lang", LANGS)
def test_budget_in_hours_and_per_month(lang):
    advice = advice_for(budget_usd=50)
    assert advice.budget.card_id == "a40" and not advice.budget.tiny
    assert duration(advice.budget.hours, lang, KB) in render_advice(advice, lang)
    monthly = advice_for(budget_usd=50, budget_period="month")
    text = render_advice(monthly, lang)
    assert KB.text("budget_hours_month", lang, budget="50", duration=duration(monthly.budget.hours, lang, KB),
                   card="A40", tokens=tokens(monthly.budget.tokens, lang, KB)) in text


@pytest.mark.parametrize("lang", LANGS)
def test_hourly_cap_without_a_fitting_card_says_so_and_what_would(lang):
    advice = advice_for(model="llama-3.1-70b", hourly_cap_usd=1)
    assert not advice.cap.under_cap and advice.cap.cheapest_fitting.card_id == "a100"
    assert advice.cap.fixes and all(fix.price_usd_hour <= 1 for fix in advice.cap.fixes)
    text = render_advice(advice, lang)
    assert text.startswith(KB.text("cap_line_no_vat", lang, cap="1"))  # the assumption (no KDV) is said first
    assert "A100" in text.split("\n")[1]
    assert advice.cap.fixes[0].card_name in text


@pytest.mark.parametrize("lang", LANGS)
def test_hourly_cap_recommends_the_fastest_card_under_it(lang):
    advice = advice_for(hourly_cap_usd=1.5, hourly_cap_includes_vat=True)  # 1.25 without KDV
    under = advice.cap.under_cap
    assert under and all(c.price_usd_hour <= 1.25 for c in under)
    assert advice.recommendation.card.card_id == max(under, key=lambda c: c.tokens_per_second).card_id
    assert advice.recommendation.reason == "fastest_under_cap"
    text = render_advice(advice, lang)
    assert KB.text("cap_line_vat", lang, cap=money(1.5, lang), cap_excl=money(1.25, lang)) in text
    assert advice.recommendation.card.name in _lead(text.split("\n", 2)[2]) or advice.recommendation.card.name in text


@pytest.mark.parametrize("lang", LANGS)
def test_multi_gpu_totals_are_n_times_the_card_price(lang):
    advice = advice_for(model="llama-2-13b", method="full")
    multi = advice.multi_gpu
    per_card_vat = round(multi.price_usd_hour_total / multi.count * 1.2, 2)
    text = render_advice(advice, lang)
    assert money(multi.count * per_card_vat, lang) in _lead(text)
    assert f"{multi.count} × {multi.name}" in text


@pytest.mark.parametrize("lang", ("fa", "tr"))
def test_money_is_written_the_glossary_way(lang):
    text = render_advice(advice_for(budget_usd=50), lang)
    assert "$" not in text
    assert usd(0.74, lang) == ("0.74 دلار" if lang == "fa" else "0,74 dolar")


def test_persian_list_lines_start_right_to_left():
    for text in (render_advice(advice_for(model="llama-3.1-8b", method="full"), "fa"),
                 render_advice(advice_for(), "fa")):
        for line in text.split("\n"):
            if line and (line.lstrip(RLM)[0].isascii() or line.lstrip(RLM)[0] == "•"):
                assert line.startswith(RLM), line  # "L4، RTX 4090 ... هم جا می‌شوند" too


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
    assert longest < MESSAGE_LIMIT * 0.8  # one Telegram message, with room for the longest model names


@pytest.mark.parametrize("lang", LANGS)
def test_no_single_card_gives_multi_gpu_plan_and_quote_offer(lang):
    advice = advice_for(size_b=70, method="full")
    text = render_advice(advice, lang)
    assert KB.text("quote_offer", lang) in text
    if advice.multi_gpu:
        assert f"{advice.multi_gpu.count} × {advice.multi_gpu.name}" in _lead(text)
    else:
        assert KB.text("rec_none", lang, total=number(advice.estimate.per_gpu_gib, lang, 0), largest="180",
                       count=8) in text
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
    assert {"tr": "1.000.000", "fa": "1000000", "en": "1,000,000"}[lang] in render_error(errors[0], lang)
    assert "dpo" in render_error(errors[1], lang)
    assert "2048" in render_error(errors[4], lang)
    assert "Llama 3.1 8B" in render_error(errors[5], lang)  # suggestions by display name
    assert isinstance(errors[6], UnknownModel) and "xyzzy" in render_error(errors[6], lang)


def test_unexpected_errors_get_a_generic_apology_and_bad_lang_is_refused():
    assert render_error(RuntimeError("boom"), "fa") == KB.text("error_internal", "fa")
    with pytest.raises(ValueError):
        render_advice(advice_for(), "de")


@pytest.mark.parametrize("value,lang,expected", [
    (1234.5, "en", "1234.5"), (12345.5, "en", "12,345.5"), (1234.5, "tr", "1.234,5"), (2.0, "fa", "2"),
    (0.74, "tr", "0,74"), (1157, "fa", "1157"),
])
def test_number_formatting(value, lang, expected):
    assert number(value, lang, 2) == expected


def test_durations_and_token_counts():
    assert duration(0.2, "en", KB) == "12 min"
    assert duration(5.04, "tr", KB) == "5 saat"
    assert duration(72, "fa", KB) == "3 روز"
    assert tokens(20e6, "en", KB) == "20 million" and tokens(1.5e9, "tr", KB) == "1,5 milyar"


@pytest.mark.parametrize("lang", LANGS)
def test_budget_that_covers_the_volume(lang):
    advice = advice_for(total_tokens=20e6, budget_usd=500)
    plan = advice.budget
    assert plan.missing_usd is None and plan.volume_cost_usd_with_vat < 500
    assert money(plan.volume_cost_usd_with_vat, lang) in render_advice(advice, lang)


@pytest.mark.parametrize("lang", LANGS)
def test_the_closing_hint_suggests_only_changes_not_tried_yet(lang):
    from bot.present.render import render_estimate_hint

    lora_4096 = render_estimate_hint(advice_for(method="lora", seq_len=4096, budget_usd=100), lang)
    assert KB.text("hint_method", lang, method="LoRA") not in lora_4096
    assert KB.text("hint_method", lang, method="QLoRA") in lora_4096
    assert KB.text("hint_seq_len", lang, n=number(4096, lang, 0)) not in lora_4096
    assert KB.text("hint_budget", lang, n="100") not in lora_4096
    tiny = render_estimate_hint(advice_for(budget_usd=2), lang)
    assert KB.text("hint_budget", lang, n="20") in tiny  # not "100" next to a 2-dollar budget
    assert KB.text("hint_method", lang, method="LoRA") in render_estimate_hint(advice_for(), lang)


@pytest.mark.parametrize("lang", LANGS)
def test_a_recalculation_says_only_what_changed(lang):
    advice = advice_for(model="llama-3.1-8b", method="full")
    first, again = render_advice(advice, lang), render_advice(advice, lang, first=False)
    assert KB.text("test_first", lang) in first and KB.text("test_first", lang) not in again
    assert KB.text("volume_unknown", lang) in first and KB.text("volume_unknown", lang) not in again
    if lang != "en":  # the English method name has no gloss to drop
        assert KB.text("method_full", lang) in first and KB.text("method_full", lang) not in again
    assert again.split("\n")[0] == first.split("\n")[0]  # the recommendation still comes first


@pytest.mark.parametrize("lang", LANGS)
def test_a_recalculation_says_how_the_memory_changed_and_which_cards_dropped_out(lang):
    from actions.estimate import estimate_summary

    before = advice_for(model="qwen2.5-14b", seq_len=2048, stack="hf")
    after = advice_for(model="qwen2.5-14b", seq_len=8192, stack="hf")
    text = render_advice(after, lang, first=False, previous=estimate_summary(before))
    assert KB.text("change_more", lang, before=gb(before.estimate.per_gpu_gib, lang),
                   after=gb(after.estimate.per_gpu_gib, lang)) in text
    assert KB.text("change_dropped", lang, names=KB.text("list_separator", lang).join(["L4", "RTX 4090"])) in text
    same = render_advice(before, lang, first=False, previous=estimate_summary(before))
    for key in ("change_more", "change_less"):  # nothing changed: no change line
        assert KB.text(key, lang, before="\0", after="\0").split("\0")[0] not in same


@pytest.mark.parametrize("lang", ["fa", "tr"])
def test_a_recalculation_says_when_the_advised_stack_changed(lang):
    """A longer sequence can move the advised stack (the one that keeps the job on the cheapest card): the memory
    change is then partly the stack's, and the answer says so; a stack the customer named is not re-announced."""
    from actions.estimate import estimate_summary
    from bot.advisor.stacks import load_stacks

    stacks = load_stacks()
    before = advice_for(model="gemma-2-9b", method="qlora", seq_len=4096)
    after = advice_for(model="gemma-2-9b", method="qlora", seq_len=8192)
    assert before.plan.stack != after.plan.stack  # the case this test is about
    line = KB.text("change_stack", lang, before=stacks.get(before.plan.stack).name,
                   after=stacks.get(after.plan.stack).name)
    assert line in render_advice(after, lang, first=False, previous=estimate_summary(before))
    named = advice_for(model="gemma-2-9b", method="qlora", seq_len=8192, stack=after.plan.stack)
    assert line not in render_advice(named, lang, first=False, previous=estimate_summary(before))
