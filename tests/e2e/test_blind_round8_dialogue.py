"""End-to-end (REST, real servers): the dialogue residuals of round 8, in Persian and Turkish (some Finglish and
Turkish typed without its letters), with sentences written for these tests (never a blind set's, never the training
data's):
1. an own card named without a model: what fits on it, then the form's `model` question; the job that follows is
   judged on that card first, then the cloud card;
2. several own cards: the job judged on that many cards (memory per card, sharding named when needed);
3. several cards ordered together, in Persian and Finglish: the order answer with the count kept;
4. "instead of": the method chosen is the one after the change.
"""
from __future__ import annotations

import pytest

from bot.advisor.knowledge import load_knowledge
from tests.e2e.helpers import assert_language, joined, last_intent, texts, tracker_slots

pytestmark = pytest.mark.e2e
KB = load_knowledge()


@pytest.mark.parametrize("lang,first,job,card", [
    ("tr", "laboratuvarda bir RTX A6000 duruyor, yine de kiralamamız gerekir mi?", "Llama 3.1 8B QLoRA", "RTX A6000"),
    ("tr", "evde rtx 3090 var, kiralamadan egitebilir miyim?", "mistral 7b qlora", "RTX 3090"),
    ("fa", "یه کارت 4090 تو خونه دارم، لازمه اصلاً GPU اجاره کنم؟", "qwen2.5 7b با کیولورا", "RTX 4090"),
])
def test_own_card_without_a_model_asks_the_model_then_judges_the_job(conversation, lang, first, job, card):
    c = conversation()
    replies = c.say(first)
    assert_language(replies, lang)
    assert tracker_slots(c).get("requested_slot") == "model", joined(replies)
    replies = c.say(job)
    first_text = texts(replies)[0]
    assert card in first_text, joined(replies)
    assert " GB" in first_text
    assert any(g.name in joined(replies) for g in KB.gpus)


@pytest.mark.parametrize("lang,message,count,sharded", [
    ("tr", "elimizde 4 tane 3090 var, qwen2.5 14b lora ile olur mu?", 4, True),
    ("fa", "دو تا 4090 داریم، mistral 7b رو با لورا میشه ترین کرد؟", 2, False),
])
def test_several_own_cards_are_judged_as_that_many(conversation, lang, message, count, sharded):
    c = conversation()
    replies = c.say(message)
    text = joined(replies)
    assert tracker_slots(c).get("gpus") == count
    assert f"{count} ×" in text, text
    assert ("ZeRO-3" in text) == sharded, text
    assert "DDP" in text


@pytest.mark.parametrize("lang,message,count", [
    ("fa", "امکانش هست ۸ تا H100 رو یکجا سفارش بدیم؟", 8),
    ("fa", "mishe 4 ta A100 ro ba ham sefaresh dad?", 4),
])
def test_several_cards_ordered_together(conversation, lang, message, count):
    c = conversation()
    replies = c.say(message)
    assert last_intent(c) == "order_multi_gpu", joined(replies)
    assert tracker_slots(c).get("gpus") == count
    assert f"{count} ×" in joined(replies)


@pytest.mark.parametrize("lang,job,change", [
    ("tr", "mistral 7b'yi qlora ile eğiteceğiz", "QLoRA yerine LoRA kullansak ne olur?"),
    ("fa", "می‌خوایم qwen2.5 7b رو با کیولورا آموزش بدیم", "به جای QLoRA با LoRA بریم چی میشه؟"),
])
def test_instead_of_keeps_the_new_method(conversation, lang, job, change):
    c = conversation()
    c.say(job)
    c.say(change)
    assert tracker_slots(c).get("method") == "lora"
