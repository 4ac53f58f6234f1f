"""An "about" between a number and its unit, and support data counted by what it is (issue 21, round 7)."""
from __future__ import annotations

import pytest

from bot.text.parse import parse_values


@pytest.mark.parametrize("text,examples", [
    ("30 bin kadar örnek", 30000),
    ("elimizde 6 bin civarı kayıt var", 6000),
    ("4 bin civarinda satir veri", 4000),
    ("۸ هزار خرده‌ای نمونه", 8000),
    ("12 bin gibi diyalog", 12000),
    ("7 bin müşteri mesajı", 7000),
    ("۳ هزار پیام مشتری", 3000),
    ("2k support tickets", 2000),
])
def test_the_count_keeps_its_unit(text, examples):
    assert parse_values(text).examples == examples


@pytest.mark.parametrize("text", ["2 tane destek kaydı açtım", "۲ تا تیکت باز کردم", "bir kadar"])
def test_no_count_of_examples_where_none_is_meant(text):
    assert parse_values(text).examples is None


def test_up_to_a_length_is_still_the_length():
    assert parse_values("2048'e kadar token").seq_len == 2048
