"""End-to-end (REST, real servers): the follow-up classes of the fourth blind run (issue 21, round 4), in Persian and
Turkish, with sentences written for these tests (never the blind set's, never the training data's):
1. a training stack named after an estimate re-estimates with that stack, names it, and says what it changes
   against the previous answer (memory, speed, cost per token), keeping the job's values;
2. a bare card name after a comparison or a "why not X" answer is a what-if on that card for the job: whether it
   holds the job, its price with and without KDV, and the whole run's cost when the data volume is known;
3. "is it enough?" with no job yet, after a budget or an own card, or while the first answer's question is open:
   a sensible answer (what is needed, or the plan's verdict), never the fallback.
No bot message repeats a message of the previous turn word for word.
"""
from __future__ import annotations


import pytest

from actions.dialogue_text import text as dialogue_text
from bot.advisor.stacks import load_stacks
from bot.present.formatting import gb, money
from tests.e2e.helpers import (NoRepeatTurns, assert_language, expected_advice, generic_reply, joined, names_a_card,
                               settle_estimate)

pytestmark = pytest.mark.e2e
STACKS = load_stacks()




# ------------------------------------------------------------------------------- 1. a stack after an estimate

@pytest.mark.parametrize("lang,job,followup,stack,job_values", [
    ("tr", "mistral 7b'yi qlora ile eğiteceğiz, 2048 token, bütçe 45 dolar",
     "bir de torchtune kullanırsak hesap nasıl değişir?", "torchtune",
     dict(model="mistral-7b", method="qlora", seq_len=2048, budget_usd=45)),
    ("tr", "qwen2.5 7b lora, 1024 token, bütçemiz 35 dolar",
     "axolotl'ün daha az VRAM harcadığını duydum, onunla nasıl olur?", "axolotl",
     dict(model="qwen2.5-7b", method="lora", seq_len=1024, budget_usd=35)),
    ("fa", "mistral 7b رو با کیولورا، طول ۲۰۴۸ توکن، بودجه ۴۵ دلار",
     "حالا اگه همین رو با تورچ‌تیون بزنیم حافظه کمتر میشه؟", "torchtune",
     dict(model="mistral-7b", method="qlora", seq_len=2048, budget_usd=45)),
    ("fa", "qwen2.5 7b با لورا، ۱۰۲۴ توکن، بودجه ۳۵ دلار",
     "همین مدل رو با axolotl حساب کنی چی در میاد؟", "axolotl",
     dict(model="qwen2.5-7b", method="lora", seq_len=1024, budget_usd=35)),
])
def test_a_stack_after_an_estimate_says_what_it_changes(conversation, lang, job, followup, stack, job_values):
    turns = NoRepeatTurns(conversation())
    turns.say(job)
    settle_estimate(turns, lang)
    replies = turns.say(followup)
    assert_language(replies, lang)
    reply = joined(replies)
    expected = expected_advice(**job_values, stack=stack)
    before = expected_advice(**job_values)
    assert STACKS.get(stack).name in reply and STACKS.get(STACKS.default).name in reply, reply
    assert gb(expected.estimate.per_gpu_gib, lang) in reply and gb(before.estimate.per_gpu_gib, lang) in reply, reply
    assert names_a_card(reply), reply
    slots = turns.slots()
    assert slots.get("stack") == stack and slots.get("model_id") == job_values["model"], slots
    assert slots.get("method") == job_values["method"], slots


@pytest.mark.parametrize("lang,job,first,between,second", [
    ("tr", "llama 3.1 8b qlora, 2048 token, bütçe 55 dolar", "unsloth kullansak nasıl olur?", None,
     "peki bir de nemo ile bakar mısın?"),
    ("fa", "لاما ۳.۱ ۸ میلیارد با کیولورا، ۲۰۴۸ توکن، بودجه ۵۵ دلار", "اگه با آنسلوث آموزش بدیم چی؟", None,
     "حالا با nemo چطور میشه؟"),
    # a turn in between: the stack compared with is the answer's, not read from the recent events only
    ("tr", "llama 3.1 8b qlora, 2048 token, bütçe 55 dolar", "unsloth ile hesaplar mısın?", "çok teşekkürler",
     "nemo kullanırsak ne değişir?"),
    ("fa", "لاما ۳.۱ ۸ میلیارد با کیولورا، ۲۰۴۸ توکن، بودجه ۵۵ دلار", "با unsloth حساب کن لطفا", "ممنون، عالیه",
     "با nemo چقدر فرق می‌کنه؟"),
])
def test_a_second_stack_is_compared_with_the_first(conversation, lang, job, first, between, second):
    turns = NoRepeatTurns(conversation())
    turns.say(job)
    turns.say(first)
    if between:
        turns.say(between)
    replies = turns.say(second)
    assert_language(replies, lang)
    reply = joined(replies)
    assert STACKS.get("unsloth").name in reply and STACKS.get("nemo_automodel").name in reply, reply
    assert turns.slots().get("stack") == "nemo_automodel"


# ------------------------------------------------------------------------------- 2. a bare card name

def _card(advice, card_id):
    return next(card for card in advice.cards if card.card_id == card_id)


@pytest.mark.parametrize("lang,job,question,card_id,job_values", [
    ("tr", "mistral 7b lora ile eğiteceğiz, 2048 token, bütçe 40 dolar", "neden H100 önermedin?", "rtx4090",
     dict(model="mistral-7b", method="lora", seq_len=2048, budget_usd=40)),
    ("tr", "qwen2.5 7b qlora, 2048 token, bütçe 30 dolar", "neden A100 değil de bu kart?", "h200",
     dict(model="qwen2.5-7b", method="qlora", seq_len=2048, budget_usd=30)),
    ("fa", "mistral 7b با لورا، ۲۰۴۸ توکن، بودجه ۴۰ دلار", "چرا H100 رو پیشنهاد ندادی؟", "l4",
     dict(model="mistral-7b", method="lora", seq_len=2048, budget_usd=40)),
    ("fa", "qwen2.5 7b با کیولورا، ۲۰۴۸ توکن، بودجه ۳۰ دلار", "چرا A100 نه؟", "b200",
     dict(model="qwen2.5-7b", method="qlora", seq_len=2048, budget_usd=30)),
])
def test_a_bare_card_after_a_why_not_is_a_what_if_on_that_card(conversation, lang, job, question, card_id, job_values):
    followup = {"rtx4090": "ya RTX 4090 olursa?", "h200": "H200 peki, o nasıl?",
                "l4": "خب L4 چطوره؟", "b200": "B200 باشه چطور؟"}[card_id]
    turns = NoRepeatTurns(conversation())
    turns.say(job)
    settle_estimate(turns, lang)
    turns.say(question)
    replies = turns.say(followup)
    assert_language(replies, lang)
    reply = joined(replies)
    assert not generic_reply(replies, lang), reply
    card = _card(expected_advice(**job_values), card_id)
    assert card.name in reply, reply
    assert money(card.price_usd_hour, lang) in reply and money(card.price_usd_hour_with_vat, lang) in reply, reply
    assert ("KDV" in reply) if lang == "tr" else ("مالیات" in reply), reply
    assert turns.slots().get("model_id") == job_values["model"]


@pytest.mark.parametrize("lang,job,followup,card_id,job_values", [
    ("tr", "llama 3.1 8b qlora, 6000 örnek, ortalama 400 token, 2 epoch, 2048 token, bütçe 50 dolar",
     "H200 ile olursa?", "h200",
     dict(model="llama-3.1-8b", method="qlora", seq_len=2048, budget_usd=50, examples=6000, avg_tokens=400,
          epochs=2)),
    ("fa", "لاما ۳.۱ ۸ میلیارد با کیولورا، ۶۰۰۰ نمونه با میانگین ۴۰۰ توکن، ۲ ایپاک، ۲۰۴۸ توکن، بودجه ۵۰ دلار",
     "اگه H100 بگیرم؟", "h100",
     dict(model="llama-3.1-8b", method="qlora", seq_len=2048, budget_usd=50, examples=6000, avg_tokens=400,
          epochs=2)),
])
def test_a_bare_card_with_the_volume_known_gives_the_run_cost(conversation, lang, job, followup, card_id, job_values):
    turns = NoRepeatTurns(conversation())
    turns.say(job)
    settle_estimate(turns, lang)
    replies = turns.say(followup)
    assert_language(replies, lang)
    reply = joined(replies)
    assert not generic_reply(replies, lang), reply
    card = _card(expected_advice(**job_values), card_id)
    assert card.name in reply and money(card.cost_usd_with_vat, lang) in reply, reply


# ------------------------------------------------------------------------------- 3. "is it enough?"

@pytest.mark.parametrize("lang,before,question", [
    ("tr", None, "sizce bu yeterli mi?"),
    ("fa", None, "به نظرت کافی هست؟"),
    ("tr", "elimizdeki bütçe 25 dolar", "bu para yetecek mi?"),
    ("fa", "بودجه‌مون ۲۵ دلاره", "این پول میرسه؟"),
])
def test_is_it_enough_with_no_job_asks_for_the_job(conversation, lang, before, question):
    turns = NoRepeatTurns(conversation())
    if before:
        turns.say(before)
    replies = turns.say(question)
    assert_language(replies, lang)
    reply = joined(replies)
    assert not generic_reply(replies, lang), reply
    key = "enough_needs_job_noted" if before else "enough_needs_job"
    fixed = dialogue_text(key, lang, values="\x00").split("\x00")[-1]   # the sentence without the noted values
    assert fixed in reply, reply
    if before:
        assert money(25, lang, whole_if_round=True) in reply, reply


@pytest.mark.parametrize("lang,job,question", [
    ("tr", "qwen2.5 7b'yi lora ile eğitmek istiyoruz", "yeterli olur mu peki?"),
    ("fa", "می‌خوایم qwen2.5 7b رو با لورا آموزش بدیم", "خب کافیه یا نه؟"),
])
def test_is_it_enough_after_the_first_answer_is_answered_from_the_plan(conversation, lang, job, question):
    turns = NoRepeatTurns(conversation())
    turns.say(job)
    replies = turns.say(question)
    assert_language(replies, lang)
    reply = joined(replies)
    assert not generic_reply(replies, lang), reply
    advice = expected_advice(model="qwen2.5-7b", method="lora", seq_len=2048)
    card = advice.recommendation.card
    assert card.name in reply and gb(advice.estimate.per_gpu_gib, lang) in reply, reply
    assert turns.slots().get("model_id") == "qwen2.5-7b"


@pytest.mark.parametrize("lang,own,question", [
    ("tr", "bizim ofiste bir RTX 3090 var", "o yeter mi?"),
    ("fa", "ما تو شرکت یه RTX 3090 داریم", "اون کافیه؟"),
])
def test_is_it_enough_after_an_own_card_asks_for_the_job(conversation, lang, own, question):
    turns = NoRepeatTurns(conversation())
    turns.say(own)
    replies = turns.say(question)
    assert_language(replies, lang)
    reply = joined(replies)
    assert not generic_reply(replies, lang), reply
    assert ("model" in reply.lower()) if lang == "tr" else ("مدل" in reply), reply
