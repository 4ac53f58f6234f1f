"""The house style of knowledge/glossary.yml holds in every customer-facing text: the advisor's texts, the FAQ as
sent, the Rasa responses and rendered answers (native-speaker reviews, December 2026: fa §5-§8, tr §5-§7)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator, Tuple

import pytest
import yaml

from bot.advisor.advice import AdviceRequest, advise
from bot.advisor.glossary import load_glossary
from bot.advisor.knowledge import load_knowledge
from bot.present.render import faq_text, money, number, render_advice, usd

ROOT = Path(__file__).resolve().parents[1]
KB = load_knowledge()
GLOSSARY = load_glossary()
# Latin technical terms written in Persian script (glossary latin_terms: they stay in Latin script).
TRANSLITERATED = ("لورا", "کیولورا", "جی‌پی‌یو", "جی پی یو", "وی‌رم")


def domain_texts() -> Iterator[Tuple[str, str, str]]:
    """(where, lang, text) of every response variant in domain/*.yml."""
    for path in sorted((ROOT / "domain").glob("*.yml")):
        responses = (yaml.safe_load(path.read_text("utf-8")) or {}).get("responses") or {}
        for name, variants in responses.items():
            for variant in variants:
                condition = {c["name"]: c["value"] for c in variant.get("condition", []) if c.get("type") == "slot"}
                lang = condition.get("language", "fa")
                texts = [variant.get("text") or ""] + [b.get("title", "") for b in variant.get("buttons") or []]
                for text in texts:
                    yield f"{path.name}:{name}", lang, text


def knowledge_texts() -> Iterator[Tuple[str, str, str]]:
    for key, entry in KB.texts.items():
        for lang in ("fa", "tr"):
            yield f"texts.yml:{key}", lang, getattr(entry, lang)
    for topic in KB.faq:
        for lang in ("fa", "tr"):
            yield f"faq.yml:{topic}", lang, faq_text(topic, lang, KB, public_url="https://advisor.example.com")


SAMPLES = [dict(model="llama-3.1-8b", method="qlora", seq_len=2048, budget_usd=50),
           dict(model="llama-3.1-8b", method="full", seq_len=4096, budget_usd=3),
           dict(model="llama-3.1-70b", method="qlora", seq_len=2048, hourly_cap_usd=1),
           dict(model="llama-2-13b", method="full", seq_len=2048, examples=20000, avg_tokens=900, epochs=2,
                budget_usd=40, budget_period="month"),
           dict(model="qwen2.5-32b", method="lora", seq_len=8192, budget_unlimited=True)]


def rendered_answers() -> Iterator[Tuple[str, str, str]]:
    for index, values in enumerate(SAMPLES):
        advice = advise(AdviceRequest(**values))
        for lang in ("fa", "tr"):
            yield f"answer #{index}", lang, render_advice(advice, lang)


ALL = list(domain_texts()) + list(knowledge_texts()) + list(rendered_answers())
# CLI table headers may say "$/h" (a table, tr review §6 allows "USD" or "$" there); they are not chat texts.
TABLE_KEYS = ("texts.yml:table_",)


@pytest.mark.parametrize("lang", ("fa", "tr"))
def test_no_text_uses_a_wording_the_reviews_replaced(lang):
    wrong = []
    for where, text_lang, text in ALL:
        if text_lang != lang or where.startswith(TABLE_KEYS):
            continue
        for avoid in GLOSSARY.avoid[lang]:
            if avoid.text in text:
                wrong.append(f"{where}: {avoid.text!r} -> {avoid.use!r}")
    assert not wrong, "\n".join(wrong)


def test_latin_terms_stay_in_latin_script():
    wrong = [f"{where}: {word}" for where, lang, text in ALL if lang == "fa" for word in TRANSLITERATED if word in text]
    assert not wrong, wrong


@pytest.mark.parametrize("lang,expected", [("fa", "0.74 دلار"), ("tr", "0,74 dolar"), ("en", "$0.74")])
def test_currency_format_per_language(lang, expected):
    assert usd(0.74, lang) == expected
    assert GLOSSARY.currency[lang].replace("{amount}", money(0.74, lang)) == expected


@pytest.mark.parametrize("value,lang,expected", [(2048, "tr", "2.048"), (2048, "fa", "2048"), (1157, "fa", "1157"),
                                                 (11.8, "tr", "11,8"), (4000, "tr", "4.000"), (25000, "en", "25,000")])
def test_number_format_per_language(value, lang, expected):
    assert number(value, lang, 1) == expected


def test_turkish_answers_group_thousands_and_use_the_decimal_comma_and_en_dash():
    text = next(text for where, lang, text in rendered_answers() if lang == "tr")
    assert "2.048 token" in text and "11,8 GB" in text and "9,8–14,6 GB" in text


def test_multi_gpu_uses_the_multiplication_sign():
    text = render_advice(advise(AdviceRequest(model="llama-3.1-70b", method="full", seq_len=2048)), "fa")
    assert f" {GLOSSARY.multiplication} " in text and not re.search(r"\d+x [A-Z]", text)
