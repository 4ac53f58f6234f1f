"""Round 7 (intents): what the lexicon now reads in Finglish and in Turkish typed without its letters.

Language: Finglish verb forms and complaint words ("to chikar mitooni bokoni?" was English, "pool do bar az kartam
kam shod" Turkish); the Finglish counter "ta" ("8 ta H100" is a count of GPUs); Finglish words for one's own card
("khodam ye 4090 daram"). Sentences of our own, none a training example.
"""
from __future__ import annotations

import pytest

from bot.advisor.knowledge import load_knowledge
from bot.text.language import detect_language
from bot.text.parse import parse_values


@pytest.fixture(scope="module")
def kb():
    return load_knowledge()


@pytest.mark.parametrize("text, expected", [
    ("to chikar baladi?", "fa"),
    ("ta badan, bye", "fa"),
    ("do bar pool az kartam kam shod", "fa"),
    ("hanooz server faal nashode", "fa"),
    ("a100 begiram ya h100?", "fa"),
    ("qlora arzoontare ya lora", "fa"),
    ("sunucu kapaninca dosyalar silinir mi", "tr"),
    ("dosyami nereden gonderirim", "tr"),
    ("ekran karti satin almak istiyoruz", "tr"),
])
def test_finglish_and_ascii_turkish_are_read_as_their_language(text, expected):
    assert detect_language(text) == expected


@pytest.mark.parametrize("text, gpus", [
    ("mishe 8 ta H100 ba ham begiram?", 8),
    ("4 ta A100 yekja mikham", 4),
    ("2 ta gpu baraye llama 8b", 2),
])
def test_the_finglish_counter_ta_counts_gpus(kb, text, gpus):
    assert parse_values(text, kb).gpus == gpus


def test_the_finglish_counter_ta_still_counts_examples(kb):
    parsed = parse_values("4000 ta nemune darim, har kodoom 500 token", kb)
    assert (parsed.gpus, parsed.examples) == (None, 4000)


@pytest.mark.parametrize("text, card", [
    ("khodam ye 4090 daram, mistral 7b ba qlora mishe?", "rtx-4090"),
    ("too khoone ye rtx 4090 darim, qwen 7b lora jash mishe?", "rtx-4090"),
])
def test_finglish_own_card_words(kb, text, card):
    assert parse_values(text, kb).own_gpu == card


def test_asking_whether_a_card_is_rented_is_no_own_card(kb):
    assert parse_values("4090 darid? llama 8b ro mikham train konam", kb).own_gpu is None
