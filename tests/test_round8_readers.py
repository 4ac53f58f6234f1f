"""Round 8 (intents), server-free: the intent guard's price questions, the cards under an hourly price, the stacks
FAQ and the Finglish words added to the lexicon. Sentences of our own, none a training example."""
from __future__ import annotations

import pytest

from bot.advisor.compare import cards_within_price
from bot.advisor.knowledge import load_knowledge
from bot.assistant.components.price_questions import cards_under_price, price_complaint
from bot.text.language import detect_language
from bot.text.parsed import parsed_message


@pytest.mark.parametrize("text", [
    "RTX 4090 saati 1 dolar? kheili geroone",
    "H100 saatlik 5 dolar, cok pahali",
    "ساعتی ۶ دلار برای H200؟ خیلی گرونه",
])
def test_a_quoted_price_with_so_expensive_is_a_price_complaint(text):
    assert price_complaint(text, "card_facts", parsed_message(text))


@pytest.mark.parametrize("text", [
    "H100 ساعتی چنده؟",
    "A100 saatlik kaç dolar?",
    "Llama 3.1 8B QLoRA, A100 saatlik 2 dolar pahali mi?",   # a job in it: the estimate
])
def test_a_price_question_or_a_job_is_no_price_complaint(text):
    assert not price_complaint(text, "card_facts", parsed_message(text))


@pytest.mark.parametrize("text,cap", [
    ("ساعتی زیر ۲ دلار چه کارت‌هایی دارید؟", 2.0),
    ("saatlik 1,5 dolar altı hangi GPU'lar var?", 1.5),
    ("che kart hayi ta saati 3 dolar darid?", 3.0),
])
def test_which_cards_under_an_hourly_price(text, cap):
    parsed = parsed_message(text)
    assert parsed.hourly_cap == cap
    assert cards_under_price(text, parsed)


@pytest.mark.parametrize("text", [
    "saatlik en fazla 2 dolar",                       # the budget answer inside the form
    "Llama 3.1 8B için saatlik 2 doların altında hangi kartlar var?",   # a job: the estimate with the cap
    "چه کارت‌هایی دارید؟",                            # no amount
])
def test_no_card_list_without_a_cap_or_with_a_job(text):
    assert not cards_under_price(text, parsed_message(text))


def test_cards_within_price_without_and_with_vat_and_for_a_job():
    kb = load_knowledge()
    under = cards_within_price(kb, 1.2)
    assert under and all(kb.gpu(card).price_usd_hour <= 1.2 for card in under)
    prices = [kb.gpu(card).price_usd_hour for card in under]
    assert prices == sorted(prices)
    with_vat = cards_within_price(kb, 1.2, includes_vat=True)
    assert set(with_vat) <= set(under) and len(with_vat) < len(under)
    job = {"model": "llama-3.1-8b", "method": "qlora", "seq_len": 2048, "budget_unlimited": True}
    holding = cards_within_price(kb, 3.0, job=job)
    assert holding and set(holding) <= set(cards_within_price(kb, 3.0))
    big = {"model": "llama-3.1-70b", "method": "full", "seq_len": 2048, "budget_unlimited": True}
    assert cards_within_price(kb, 3.0, job=big) == []       # full fine-tuning of a 70B model: no card under $3


def test_the_stacks_faq_names_only_stacks_of_the_catalogue():
    from bot.advisor.stacks import load_stacks
    from bot.present.render import faq_text

    names = [stack.name for stack in load_stacks().stacks.values()]
    for lang in ("fa", "tr"):
        answer = faq_text("stacks", lang)
        assert all(name in answer for name in names), lang


@pytest.mark.parametrize("text", ["kart haye zire saati 2 dolar chian?", "A100 saati 2 dolar, kheili geroone"])
def test_finglish_price_words_are_persian(text):
    assert detect_language(text) == "fa"
