"""End-to-end (REST, real servers): the value failure classes of the fifth blind run (issue 21), in Persian and
Turkish with sentences written for these tests (never the blind set's):
1. a Finglish question (question words, "you", "to be", pronoun endings in Latin letters) is answered in Persian,
   Turkish typed without its letters in Turkish;
2. an hourly word tied to the budget word sets the hourly cap (slot hourly_cap), never the job's budget, and a
   decimal comma stays a decimal;
3. LLaMA-Factory named after an estimate is the stack of the new answer, and the answer names it.
"""
from __future__ import annotations

import pytest

from bot.advisor.stacks import load_stacks
from tests.e2e.helpers import assert_language, joined, names_a_card, tracker_slots

pytestmark = pytest.mark.e2e
STACKS = load_stacks()


# ------------------------------------------------------------------------------- 1. Finglish or Turkish

@pytest.mark.parametrize("lang,message", [
    ("fa", "serverhatoon koja hastan? too iran ya kharej?"),
    ("fa", "shoma baraye qwen 7b lora che karti darin?"),
    ("fa", "emrooz mitunam mistral 7b qlora ro shoroo konam?"),
    ("fa", "llama 8b lora, kartetoon saati chande?"),
    ("tr", "sunucular turkiyede mi yoksa yurt disinda mi"),
    ("tr", "qwen 7b lora icin hangi karti onerirsiniz"),
])
def test_a_latin_question_is_answered_in_its_language(conversation, lang, message):
    assert_language(conversation().say(message), lang)


# ------------------------------------------------------------------------------- 2. an hourly budget

@pytest.mark.parametrize("lang,message,cap", [
    ("tr", "mistral 7b qlora yapacağız, saatlik bütçem en fazla 1,5 dolar", 1.5),
    ("tr", "llama 3.1 8b lora; saat başı bütçemiz 4 doları geçmesin", 4.0),
    ("fa", "qwen 7b رو با لورا آموزش میدیم، بودجه‌مون ساعتی حداکثر ۳ دلاره", 3.0),
    ("fa", "لاما ۸ میلیارد کیولورا، بودجه ساعتی من ۱٫۵ دلاره", 1.5),
])
def test_an_hourly_budget_sets_the_hourly_cap(conversation, lang, message, cap):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    slots = tracker_slots(c)
    assert (slots.get("hourly_cap"), slots.get("budget_usd")) == (cap, None), slots
    assert names_a_card(joined(replies)), joined(replies)


# ------------------------------------------------------------------------------- 3. LLaMA-Factory

@pytest.mark.parametrize("lang,job,followup", [
    ("tr", "llama 3.1 8b qlora, 2048 token", "LlamaFactory ile de aynı rakam mı çıkar?"),
    ("tr", "qwen 7b lora, 2048 token", "biz llama factory kullanıyoruz, değişir mi?"),
    ("fa", "لاما ۳.۱ ۸ میلیارد با کیولورا، ۲۰۴۸ توکن", "با لاما فکتوری هم همین عدد درمیاد؟"),
    ("fa", "qwen 7b رو با لورا، ۲۰۴۸ توکن", "ما با LLaMA-Factory کار می‌کنیم، فرقی داره؟"),
])
def test_llama_factory_after_an_estimate_is_named_in_the_answer(conversation, lang, job, followup):
    c = conversation()
    c.say(job)
    model = tracker_slots(c).get("model_id")
    replies = c.say(followup)
    assert_language(replies, lang)
    assert STACKS.get("llama_factory").name in joined(replies), joined(replies)
    slots = tracker_slots(c)
    assert (slots.get("stack"), slots.get("model_id")) == ("llama_factory", model), slots
