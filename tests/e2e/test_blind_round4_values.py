"""End-to-end (REST, real servers): the value failure classes of the fourth blind run (issue 21), in Persian and
Turkish with sentences written for these tests (never the blind set's):
1. a token count after a count of examples in the same clause sets avg_tokens (comma, "ort.", "-er", "-la",
   «هر کدوم», «میانگین», Finglish "har kodoom", "hezar"), and a stated sequence length stays the sequence length;
2. a model named in Persian letters with Persian digits («لاما ۴ اسکاوت») sets the model and gets an estimate;
3. a short Finglish message with a model name is answered in Persian, Turkish typed without its letters in Turkish.
"""
from __future__ import annotations

import pytest

from tests.e2e.helpers import assert_language, joined, names_a_card, tracker_slots

pytestmark = pytest.mark.e2e


# ------------------------------------------------------------------------------- 1. each example's length

@pytest.mark.parametrize("lang,message,examples,avg", [
    ("tr", "qwen2.5 7b lora yapacağız, 13000 örnek, 370 token", 13000, 370),
    ("tr", "mistral 7b qlora; 8 bin örnek ort. 610 token", 8000, 610),
    ("tr", "llama 3.1 8b lora, 5500 örnek 450'şer token", 5500, 450),
    ("tr", "gemma 2 9b qlora ile 16 bin örnek 280 tokenla eğiteceğiz", 16000, 280),
    ("fa", "لاما ۸ میلیارد با لورا، ۹۵۰۰ نمونه داریم هر کدوم ۳۹۰ توکن", 9500, 390),
    ("fa", "qwen 7b رو کیولورا می‌کنیم، ۲۱۰۰۰ نمونه با میانگین ۲۳۰ توکن", 21000, 230),
    ("fa", "mistral 7b qlora, 4 hezar ta nemune darim, har kodoom 720 token", 4000, 720),
])
def test_the_length_after_the_examples_sets_the_average(conversation, lang, message, examples, avg):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    slots = tracker_slots(c)
    assert (slots.get("examples"), slots.get("avg_tokens")) == (examples, avg), slots
    assert slots.get("seq_len") != avg, slots


@pytest.mark.parametrize("lang,message,examples,avg,seq", [
    ("tr", "llama 3.1 8b qlora, 7200 örnek, 520 token, seq 2048", 7200, 520, 2048),
    ("fa", "لاما ۸ میلیارد کیولورا، ۶۸۰۰ نمونه، هر کدوم ۴۴۰ توکن، طول توالی ۴۰۹۶", 6800, 440, 4096),
])
def test_a_stated_sequence_length_stays(conversation, lang, message, examples, avg, seq):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    slots = tracker_slots(c)
    assert (slots.get("examples"), slots.get("avg_tokens"), slots.get("seq_len")) == (examples, avg, seq), slots
    assert names_a_card(joined(replies)), joined(replies)


# ------------------------------------------------------------------------------- 2. names in Persian letters

@pytest.mark.parametrize("message,model", [
    ("می‌خوایم لاما ۴ اسکاوت رو با کیولورا فاین‌تیون کنیم", "llama-4-scout"),
    ("کیوِن ۲.۵ ۱۴ میلیارد رو با لورا آموزش بدیم، چه کارتی لازمه؟", "qwen2.5-14b"),
    ("فای ۳ مینی با لورا چقدر هزینه داره؟", "phi-3-mini"),
    ("دیپ‌سیک آر۱ دیستیل کوئن ۱۴ میلیارد رو با کیولورا تیون کنیم", "deepseek-r1-distill-qwen-14b"),
])
def test_a_model_in_persian_letters_gets_an_estimate(conversation, message, model):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, "fa")
    assert tracker_slots(c).get("model_id") == model
    assert names_a_card(joined(replies)), joined(replies)


# ------------------------------------------------------------------------------- 3. Finglish or Turkish

@pytest.mark.parametrize("lang,message", [
    ("fa", "qwen 14b lora che karti?"),
    ("fa", "mistral 7b qlora chand saat tool mikeshe"),
    ("fa", "llama 8b lora cheghadr mishe?"),
    ("tr", "qwen 14b lora icin hangi karti kiralayayim"),
    ("tr", "mistral 7b qlora kac saat surer"),
])
def test_a_short_latin_message_is_answered_in_its_language(conversation, lang, message):
    assert_language(conversation().say(message), lang)
