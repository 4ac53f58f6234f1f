"""bot/text/parsed.py: a message's reading is kept for its next reader, equal to a fresh parse and never shared."""
from __future__ import annotations

import pytest

from bot.text import parsed as kept
from bot.text.parse import parse_values
from tests.test_message_path_fuzz import calls_made


@pytest.fixture(autouse=True)
def nothing_kept():
    kept.forget_parses()
    yield
    kept.forget_parses()


@pytest.mark.parametrize("text,expected", [
    ("llama 3.1 8b qlora 4096 token, bütçem 100 dolar", None),
    ("۴۰۹۶", "seq_len"),
    ("4096", "model_size_b"),
    ("saatte en fazla 2 dolar, KDV dahil", "budget_usd"),
])
def test_a_kept_reading_is_what_the_parser_answers(text, expected):
    first = kept.parsed_message(text, expected)
    assert first == parse_values(text, expected=expected)
    assert kept.parsed_message(text, expected) == first


def test_the_second_reader_costs_no_parse():
    text = "qwen 2.5 14b lora, 8192 token, 5000 örnek " * 20
    first = calls_made(lambda: kept.parsed_message(text), 10 ** 7)
    again = calls_made(lambda: kept.parsed_message(text), 10 ** 7)
    assert again * 20 < first


def test_each_reader_gets_its_own_copy():
    reading = kept.parsed_message("llama 8b qlora")
    reading.ambiguous.append("changed by one reader")
    reading.method = "full"
    assert kept.parsed_message("llama 8b qlora").method == "qlora"
    assert kept.parsed_message("llama 8b qlora").ambiguous == []


def test_the_expected_slot_is_part_of_the_key():
    assert kept.parsed_message("2048", "seq_len").seq_len == 2048
    assert kept.parsed_message("2048", "budget_usd").seq_len is None


def test_only_the_latest_readings_are_kept():
    for number in range(kept.PARSES_KEPT + 10):
        kept.parsed_message(f"{number} token")
    assert len(kept._KEPT) == kept.PARSES_KEPT
    assert ("0 token", None) not in kept._KEPT and (f"{kept.PARSES_KEPT + 9} token", None) in kept._KEPT
