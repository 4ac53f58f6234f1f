"""End-to-end (REST, real servers): the value classes of round 9, in Persian (Arabic-keyboard ي ك and Finglish too)
and Turkish (ASCII too), with sentences written for these tests (never the blind set's):
1. "key: value" fields, one a line or separated by "|" or "/": each value goes to its key;
2. a method said not to be wanted is never the one kept;
3. "will my money be enough?" with the job and no amount: the first answer, then the budget question;
4. "whichever is cheaper" to the method question: QLoRA, said as an assumption, and the estimate follows.
"""
from __future__ import annotations

import pytest

from tests.e2e.helpers import assert_language, joined, names_a_card, tracker_slots

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("lang,message,expected", [
    ("tr", "model: Qwen2.5-14B | yöntem: QLoRA | bağlam: 8192 | örnek sayısı: 20.000 | ortalama token: 900",
     dict(model_id="qwen2.5-14b", method="qlora", seq_len=8192, examples=20000, avg_tokens=900)),
    ("tr", "model: Llama 3.1 8B\nyontem: LoRA\nseq: 2048\nbutce: 80$",
     dict(model_id="llama-3.1-8b", method="lora", seq_len=2048, budget_usd=80)),
    ("fa", "مدل: Qwen2.5-14B / روش: کیولورا / طول توالی: ۸۱۹۲ / تعداد نمونه: ۲۰۰۰۰ / میانگین ۹۰۰ توکن",
     dict(model_id="qwen2.5-14b", method="qlora", seq_len=8192, examples=20000, avg_tokens=900)),
])
def test_key_value_fields_fill_their_slots(conversation, lang, message, expected):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    slots = tracker_slots(c)
    for key, value in expected.items():
        assert slots.get(key) == value, (key, slots)
    assert names_a_card(joined(replies)), joined(replies)


@pytest.mark.parametrize("lang,message,method", [
    ("tr", "llama 3.1 8b, kamil fine-tune yapalim, LoRA degil", "full"),
    ("tr", "qwen 7b tam ince ayar olsun, qlora istemiyorum", "full"),
    ("fa", "لاما ۸ میلیارد رو کامل فاین‌تیون کنیم، نه لورا", "full"),
    ("fa", "mistral 7b, qlora nemikham, ba lora", "lora"),
])
def test_a_negated_method_is_never_kept(conversation, lang, message, method):
    c = conversation()
    assert_language(c.say(message), lang)
    assert tracker_slots(c).get("method") == method


@pytest.mark.parametrize("lang,message", [
    ("fa", "می‌خوام ببینم پولم کفاف می‌ده یا نه. لاما ۸ میلیارد با کیولورا"),
    ("fa", "پولم ميرسه؟ مدل لاما ۸ ميليارد، کيولورا"),  # Arabic-keyboard ي
    ("tr", "Butcem yeter mi acaba? Llama 3.1 8B, QLoRA"),
])
def test_money_enough_gets_the_card_then_the_budget_question(conversation, lang, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert names_a_card(joined(replies)), joined(replies)
    assert tracker_slots(c).get("requested_slot") == "budget", tracker_slots(c)


@pytest.mark.parametrize("lang,job,answer,method", [
    ("tr", "llama 3.1 8b eğitmek istiyorum", "hangisi ucuzsa o", "qlora"),
    ("fa", "می‌خوام لاما ۸ میلیارد رو فاین‌تیون کنم", "هر کدوم ارزون‌تره", "qlora"),
    ("fa", "mikham llama 8b ro fine tune konam", "har kodoom arzoon tare", "qlora"),
    ("tr", "qwen 7b fine-tune yapacagiz", "kalitesi en iyi olan", "lora"),
])
def test_method_by_preference(conversation, lang, job, answer, method):
    c = conversation()
    c.say(job)
    assert tracker_slots(c).get("requested_slot") == "method", tracker_slots(c)
    replies = c.say(answer)
    assert_language(replies, lang)
    assert tracker_slots(c).get("method") == method, tracker_slots(c)
    assert names_a_card(joined(replies)), joined(replies)
