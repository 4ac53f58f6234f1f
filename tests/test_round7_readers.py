"""Readers fixed in issue 21, round 7 (server-free): mash typed with Turkish letters or one stroke twice, a card's
price per hour quoted in a complaint, Finglish "no budget limit"."""
from __future__ import annotations

import pytest

from bot.assistant.components.latin_mash import is_latin_mash
from bot.text.parse import parse_values


@pytest.mark.parametrize("text", ["ğüşçö", "ğüşiöç asdasd", "qweqwe", "zxczxc lkjlkj"])
def test_turkish_letter_mash_and_doubled_strokes_are_mash(text):
    assert is_latin_mash(text)


@pytest.mark.parametrize("text", ["hahaha", "ağır", "dodo", "ğ", "salaaam chetori", "kheili kheili", "teşekkürler"])
def test_words_are_not_mash(text):
    assert not is_latin_mash(text)


@pytest.mark.parametrize("text,cap", [
    ("H100 saatlik 6 dolar, çok pahalı", 6.0),
    ("RTX 4090 saatte 1 dolar mı?", 1.0),
    ("A100 ساعتی ۳ دلار خیلی زیاده", 3.0),
])
def test_a_cards_hourly_price_is_no_budget(text, cap):
    parsed = parse_values(text)
    assert (parsed.hourly_cap, parsed.budget_usd) == (cap, None)


def test_a_duration_before_the_hourly_word_is_still_a_duration():
    parsed = parse_values("40 saat, bütçem 90 dolar")
    assert (parsed.hourly_cap, parsed.budget_usd) == (None, 90.0)


@pytest.mark.parametrize("text", ["qwen 7b lora, mahdoodiat budget nadarim", "pool mohem nist", "budget mahdood nist",
                                  "bedoone mahdoodiat", "hazine mohem nist"])
def test_finglish_no_limit(text):
    assert parse_values(text).budget_unlimited


def test_finglish_budget_amount_is_an_amount():
    parsed = parse_values("budgetam 40 dolare")
    assert (parsed.budget_unlimited, parsed.budget_usd) in ((None, 40.0), (False, 40.0))
