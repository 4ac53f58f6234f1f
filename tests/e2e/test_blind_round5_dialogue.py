"""End-to-end (REST, real servers): the follow-up classes of the fifth blind run (issue 21, round 5), in Persian and
Turkish, with sentences written for these tests (never the blind set's, never the training data's):
1. "which card now, and per hour?" after an estimate and a change of method: the re-estimate's card with its price
   without and with KDV, first, and not the general price answer;
2. "can I write them straight to S3?" right after the checkpoints answer: its short follow-up, not the same answer
   again and not the fallback;
3. an FAQ while the first answer's question is open: the FAQ, then at most that question in one line, never the
   estimate again;
4. a complaint that training is slow on a named card: the card named, what slows a run, then the hand-over.
No bot message repeats a message of the previous turn word for word.
"""
from __future__ import annotations

import re

import pytest

from bot.advisor.knowledge import load_knowledge
from bot.advisor.vat import price_with_vat
from bot.present.render import faq_text
from tests.e2e.helpers import (NoRepeatTurns, assert_language, domain_response, generic_reply, handed_over, joined,
                               last_intent, price_text, settle_estimate, texts, tracker_slots)

pytestmark = pytest.mark.e2e
KB = load_knowledge()




def _with_vat(usd: float) -> float:
    return price_with_vat(usd, KB.pricing.vat_rate, to_cent=True)


# ------------------------------------------------------------------- 1. which card now, per hour, after a change

@pytest.mark.parametrize("lang,job,change,question,method", [
    ("tr", "qwen2.5 32b modelini qlora ile ince ayar yapacağız, 2048 token", "bunu lora ile yapsak nasıl olur?",
     "anladım, o halde şimdi hangi karta geçiyoruz ve saatliği kaç para?", "lora"),
    ("fa", "gemma 2 27b رو با کیولورا فاین‌تیون می‌کنیم، ۲۰۴۸ توکن", "اگه با لورا باشه چی؟",
     "باشه، پس حالا کدوم کارت رو بردارم و هر ساعتش چند تموم میشه؟", "lora"),
])
def test_which_card_now_gives_the_new_estimates_card_and_price(conversation, lang, job, change, question, method):
    turns = NoRepeatTurns(conversation())
    turns.say(job)
    settle_estimate(turns, lang)
    old_card = turns.slots()["estimate_summary"]["best_card"]
    turns.say(change)
    summary = turns.slots()["estimate_summary"]
    assert summary["method"] == method
    card = KB.gpu(summary["best_card"])
    assert card.id != old_card, "the test needs a change of method that changes the card"
    replies = turns.say(question)
    assert_language(replies, lang)
    first = texts(replies)[0]
    assert card.name in first, joined(replies)
    assert price_text(card.price_usd_hour, lang) in first and price_text(_with_vat(card.price_usd_hour), lang) in first
    assert KB.gpu(old_card).name not in first
    assert faq_text("prices_vat", lang) not in texts(replies), "the general price list instead of the card"


# ----------------------------------------------------------------------- 2. straight to S3 after the checkpoints

@pytest.mark.parametrize("lang,faq,followup", [
    ("tr", "sunucuyu kapatınca ara kayıtlarım kaybolur mu, nerede tutmalıyım?",
     "peki bunları anında S3 bucket'ına yazdırmak olur mu?"),
    ("fa", "اگه سرور خاموش بشه چک‌پوینت‌هام از بین میرن؟ کجا نگهشون دارم؟",
     "یعنی میشه همون موقع مستقیم بریزمشون توی S3؟"),
])
def test_s3_after_the_checkpoints_answer_gets_its_followup(conversation, lang, faq, followup):
    turns = NoRepeatTurns(conversation())
    first = turns.say(faq)
    assert faq_text("checkpoints", lang) in texts(first), joined(first)
    replies = turns.say(followup)
    assert_language(replies, lang)
    assert not generic_reply(replies, lang), joined(replies)
    assert faq_text("checkpoints_s3", lang) in texts(replies), joined(replies)
    assert "S3" in joined(replies)


# -------------------------------------------------------------- 3. an FAQ while the first answer's question waits

@pytest.mark.parametrize("lang,job,faq,topic", [
    ("tr", "llama 3.1 8b'yi qlora ile eğitmeyi düşünüyoruz, dizi uzunluğu 2048",
     "bu arada şirketimiz adına e-fatura alabiliyor muyuz?", "invoice"),
    ("fa", "می‌خوام mistral 7b رو با کیولورا آموزش بدم، طول ۲۰۴۸",
     "راستی فاکتور رسمی به اسم شرکت‌مون هم میدید؟", "invoice"),
])
def test_an_faq_after_the_first_answer_does_not_resend_the_estimate(conversation, lang, job, faq, topic):
    turns = NoRepeatTurns(conversation())
    first = turns.say(job)
    first_texts = texts(first)
    assert tracker_slots(turns.c).get("answered_first"), joined(first)
    replies = turns.say(faq)
    assert_language(replies, lang)
    assert last_intent(turns.c) == f"faq_{topic}"
    assert texts(replies)[0] == faq_text(topic, lang), joined(replies)
    rest = texts(replies)[1:]
    # at most one short reminder of the open question, and nothing of the estimate
    assert len(rest) <= 1 and all("\n" not in t for t in rest), joined(replies)
    assert not any(card.name in t for t in rest for card in KB.gpus), joined(replies)
    assert not set(first_texts) & set(texts(replies))
    assert turns.slots().get("estimate_summary") is None
    # the question is still open: an answer to it gives the full estimate
    done = turns.say("bütçe sınırı yok" if lang == "tr" else "محدودیت بودجه ندارم")
    assert turns.slots().get("estimate_summary"), joined(done)


# ----------------------------------------------------------------------- 4. a slow run on a named card

@pytest.mark.parametrize("lang,complaint,card_id", [
    ("tr", "RTX PRO 6000 üzerinde ince ayar başlattık, 18 saat oldu ve hâlâ bitmedi", "rtx-pro-6000"),
    ("fa", "یه آموزش روی H100 راه انداختم، سی ساعته داره می‌ره و تموم نشده", "h100"),
])
def test_a_slow_run_complaint_names_the_card_then_hands_over(conversation, lang, complaint, card_id):
    turns = NoRepeatTurns(conversation())
    replies = turns.say(complaint)
    assert_language(replies, lang)
    assert last_intent(turns.c) == "complaint"
    first = texts(replies)[0]
    name = KB.gpu(card_id).name
    assert name in first and "packing" in first, joined(replies)
    assert re.search("LoRA", first), joined(replies)
    assert domain_response("utter_complaint", lang) not in texts(replies)
    assert handed_over(turns.c), joined(replies)


@pytest.mark.parametrize("lang,complaint", [
    ("tr", "bu ayki faturamızda KDV iki kere eklenmiş, düzeltin lütfen"),
    ("fa", "صورتحساب این ماه ما مبلغ اشتباهی داره، لطفاً بررسی کنید"),
])
def test_a_billing_complaint_keeps_the_apology(conversation, lang, complaint):
    turns = NoRepeatTurns(conversation())
    replies = turns.say(complaint)
    assert domain_response("utter_complaint", lang) in texts(replies), joined(replies)
    assert handed_over(turns.c)
