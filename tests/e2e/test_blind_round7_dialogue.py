"""End-to-end (REST, real servers): the dialogue residuals of round 7, in Persian and Turkish (some Finglish and
Turkish typed without its letters), with sentences written for these tests (never a blind set's, never the training
data's):
1. training records pasted with "is this format fine?": the records' format, then the data-preparation answer,
   never the out-of-scope answer or the fallback;
2. "the total with KDV?" after an estimate: the job's total without and with KDV on the card (without a volume: the
   hourly price both ways and the question for the volume);
3. "does it fit my budget?" with no amount: the budget is asked (form question `budget`); with an amount, answered;
4. "in a hurry, the fastest?": the fastest card for the job with its hours and cost, not the cost-control FAQ;
5. downloading the trained model or adapter to one's own computer: its short answer, never the fallback;
6. "I am going to train a model" and nothing else: the form asks which model;
7. an order or a quote naming the whole job: the estimate (GB figure, card plan, model) with the order process or
   the quote offer in the same reply, not the process alone and not a bare hand-over;
8. ordering a named configuration with a monthly price: the card and count asked about with the price, the
   process and the quote offer.
No bot message repeats a message of the previous turn word for word.
"""
from __future__ import annotations

import pytest

from actions.dialogue_text import text as dialogue_text
from actions.followup import plan_advice
from bot.advisor.knowledge import load_knowledge
from bot.advisor.vat import price_with_vat
from bot.dataset.texts import load_dataset_knowledge
from bot.present.formatting import duration
from bot.present.render import faq_text
from tests.e2e.helpers import (NoRepeatTurns, assert_language, domain_response, domain_responses, generic_reply,
                               handed_over, joined, last_intent, names_a_card, price_text, settle_estimate, texts)

pytestmark = pytest.mark.e2e
KB = load_knowledge()

TR_VOLUME_JOB = ("mistral 7b'yi lora ile eğiteceğiz, 12000 örnek, örnek başına ortalama 700 token, 2 epoch, "
                 "2048 token, bütçe sınırı yok")
FA_VOLUME_JOB = ("qwen2.5 14b رو با کیولورا آموزش میدیم، ۸۰۰۰ نمونه با میانگین ۹۰۰ توکن، ۳ ایپاک، طول ۲۰۴۸، "
                 "بودجه نامحدود")
TR_JOB = "gemma 2 9b modelini qlora ile eğitmeyi düşünüyoruz, 2048 token"
FA_JOB = "می‌خوایم mistral 7b رو با لورا فاین‌تیون کنیم، طول ۲۰۴۸"


def _plan_card(turns: NoRepeatTurns):
    slots = turns.slots()
    answer_card = slots["estimate_summary"]["best_card"]
    advice = plan_advice(slots)
    return {card.card_id: card for card in advice.cards}[answer_card], advice


# ----------------------------------------------------------------------- 1. training records pasted into the chat

@pytest.mark.parametrize("lang,message,fmt,problems", [
    ("tr", 'elimdeki veri şöyle: {"instruction": "Bu cümleyi İngilizceye çevir", "input": "Merhaba dünya", '
           '"output": "Hello world"} sence bu biçim olur mu?', "alpaca", False),
    ("tr", '{"prompt": "Faturami nasil odeyebilirim?", "completion": "Uygulamadan odeme menusune girin."}\n'
           '{"prompt": "Sifremi unuttum", "completion": "Giris ekraninda sifremi unuttum deyin."}\n'
           'bu satirlar egitim icin uygun mu?', "prompt_completion", False),
    ("fa", 'نمونهٔ داده‌مون اینه: {"messages": [{"role": "user", "content": "ساعت کاری شما چیه؟"}, '
           '{"role": "assistant", "content": "از نه صبح تا پنج عصر"}]} این فرمت مشکلی نداره؟', "chat", False),
    ("fa", '{"instruction": "kholase kon", "output": ""} in dade ha formatesh dorost hast?', "alpaca", True),
])
def test_pasted_records_get_their_format_and_the_data_answer(conversation, lang, message, fmt, problems):
    turns = NoRepeatTurns(conversation())
    replies = turns.say(message)
    assert_language(replies, lang)
    assert last_intent(turns.c) == "faq_data_prep"
    assert not generic_reply(replies, lang), joined(replies)
    first = texts(replies)[0]
    assert load_dataset_knowledge().text(f"format_{fmt}", lang) in first, joined(replies)
    problem = load_dataset_knowledge().text("problem_empty_field", lang)
    assert (problem in first) == problems, first
    assert faq_text("data_prep", lang) in texts(replies), joined(replies)


# ------------------------------------------------------------------------- 2. the total with and without KDV

@pytest.mark.parametrize("lang,job,question", [
    ("tr", TR_VOLUME_JOB, "peki bütün iş KDV dahil kaça mal olur?"),
    ("tr", TR_VOLUME_JOB, "kdv haric toplamda ne oder"),
    ("fa", FA_VOLUME_JOB, "با احتساب مالیات هزینهٔ کل کار چقدر درمیاد؟"),
])
def test_the_total_with_kdv_is_the_jobs_total_both_ways(conversation, lang, job, question):
    turns = NoRepeatTurns(conversation())
    turns.say(job)
    settle_estimate(turns, lang)
    card, _ = _plan_card(turns)
    replies = turns.say(question)
    assert_language(replies, lang)
    assert not generic_reply(replies, lang), joined(replies)
    text = joined(replies)
    with_vat = card.cost_usd_with_vat
    assert card.name in texts(replies)[0]
    assert price_text(with_vat, lang) in text, text
    assert price_text(with_vat / (1 + KB.pricing.vat_rate), lang) in text, text
    assert duration(card.hours, lang, KB) in text, text


@pytest.mark.parametrize("lang,job,question", [
    ("tr", TR_JOB, "toplamda KDV'siz ne kadar tutar peki?"),
    ("fa", FA_JOB, "bedoone maliat hazine kolesh chand mishe?"),
])
def test_the_total_without_a_volume_gives_the_hourly_price_and_asks_the_volume(conversation, lang, job, question):
    turns = NoRepeatTurns(conversation())
    turns.say(job)
    settle_estimate(turns, lang)
    card, _ = _plan_card(turns)
    replies = turns.say(question)
    assert_language(replies, lang)
    text = joined(replies)
    assert card.name in text
    assert price_text(card.price_usd_hour, lang) in text
    assert price_text(price_with_vat(card.price_usd_hour, KB.pricing.vat_rate, to_cent=True), lang) in text
    assert dialogue_text("current_card_total_needs_volume", lang) in text, text


# ------------------------------------------------------------------------------------- 3. does it fit my budget?

@pytest.mark.parametrize("lang,job,question", [
    ("tr", TR_JOB, "peki bu bütçemize sığar mı?"),
    ("tr", TR_JOB, "bu is butcemi asar mi?"),
    ("fa", FA_JOB, "این هزینه با بودجهٔ ما جور میشه؟"),
])
def test_budget_fit_without_an_amount_asks_the_budget(conversation, lang, job, question):
    turns = NoRepeatTurns(conversation())
    turns.say(job)
    settle_estimate(turns, lang)
    replies = turns.say(question)
    assert_language(replies, lang)
    assert not generic_reply(replies, lang), joined(replies)
    assert dialogue_text("budget_fit_needs_budget", lang) in texts(replies), joined(replies)
    assert turns.slots().get("requested_slot") == "budget"
    answered = turns.say("300 dolar" if lang == "tr" else "۳۰۰ دلار")
    assert "300" in joined(answered) and names_a_card(joined(answered)), joined(answered)


@pytest.mark.parametrize("lang,job,question", [
    ("tr", TR_JOB, "400 dolarlık bütçemize sığar mı bu?"),
    ("fa", FA_JOB, "با بودجهٔ ۴۰۰ دلاری ما جور درمیاد؟"),
])
def test_budget_fit_with_an_amount_is_answered(conversation, lang, job, question):
    turns = NoRepeatTurns(conversation())
    turns.say(job)
    settle_estimate(turns, lang)
    replies = turns.say(question)
    assert_language(replies, lang)
    assert not generic_reply(replies, lang), joined(replies)
    assert "400" in joined(replies) and names_a_card(joined(replies)), joined(replies)
    assert turns.slots().get("requested_slot") is None


# ------------------------------------------------------------------------------------- 4. in a hurry, the fastest

@pytest.mark.parametrize("lang,job,question", [
    ("tr", TR_VOLUME_JOB, "acelemiz var, hangi kartla en hizli biter?"),
    ("tr", TR_VOLUME_JOB, "zamanımız dar, en hızlı seçenek ne olur?"),
    ("fa", FA_VOLUME_JOB, "ajale daram, kodoom kart az hame sari tare?"),
    ("fa", FA_VOLUME_JOB, "عجله داریم، کدوم گزینه از همه زودتر تموم میشه؟"),
])
def test_the_fastest_option_with_its_hours_and_cost(conversation, lang, job, question):
    turns = NoRepeatTurns(conversation())
    turns.say(job)
    settle_estimate(turns, lang)
    _, advice = _plan_card(turns)
    fitting = [card for card in advice.cards if card.status != "no_fit"]
    fastest = max(fitting, key=lambda c: (c.tokens_per_second or 0, -c.price_usd_hour))
    replies = turns.say(question)
    assert_language(replies, lang)
    assert last_intent(turns.c) == "ask_about_answer"
    text = joined(replies)
    assert faq_text("cost_control", lang) not in texts(replies)
    assert fastest.name in text, text
    assert duration(fastest.hours, lang, KB) in text and price_text(fastest.cost_usd_with_vat, lang) in text, text


# ----------------------------------------------------------------------- 5. the trained model to one's computer

@pytest.mark.parametrize("lang,question", [
    ("tr", "ince ayardan sonra çıkan ağırlıkları kendi laptopuma indirebiliyor muyum?"),
    ("tr", "egitim bitince lora adapterini kendi bilgisayarima indirmem mumkun mu?"),
    ("fa", "آخر آموزش میتونم آداپتر رو روی لپ‌تاپ خودم دانلود کنم؟"),
])
def test_downloading_the_trained_model_gets_its_answer(conversation, lang, question):
    turns = NoRepeatTurns(conversation())
    replies = turns.say(question)
    assert_language(replies, lang)
    assert not generic_reply(replies, lang), joined(replies)
    assert faq_text("checkpoints_download", lang) in texts(replies), joined(replies)


# ---------------------------------------------------------------------------------- 6. "I'll train a model"

@pytest.mark.parametrize("lang,message", [
    ("tr", "bir model eğitmek niyetindeyim"),
    ("tr", "yeni bir model egitecegiz"),
    ("fa", "می‌خوام یه مدلی رو آموزش بدم"),
    ("fa", "mikham ye modeli train konam"),
])
def test_training_a_model_without_a_name_asks_which_model(conversation, lang, message):
    turns = NoRepeatTurns(conversation())
    replies = turns.say(message)
    assert_language(replies, lang)
    assert not generic_reply(replies, lang), joined(replies)
    assert turns.slots().get("requested_slot") == "model"
    questions = {variant["text"] for variant in domain_responses()["utter_ask_model"]}
    assert questions & set(texts(replies)), joined(replies)


# ------------------------------------------------------------------------- 7. an order or a quote with the job

@pytest.mark.parametrize("lang,message,size,offer", [
    ("tr", "32B'lik bir modelin tam ince ayarı için 4 adet A100 almak istiyoruz, siparişi nasıl veriyoruz?", "32B",
     "utter_order_multi_gpu"),
    ("fa", "برای آموزش کامل یک مدل 32B می‌خوایم ۴ تا A100 سفارش بدیم، روالش چیه؟", "32B", "utter_order_multi_gpu"),
    ("tr", "70B bir modeli full fine-tune etmek için bize fiyat teklifi hazırlar mısınız?", "70B",
     "utter_estimate_offer_quote"),
    ("fa", "برای فاین‌تیون کامل یه مدل 70B یه پیش‌فاکتور بدید", "70B", "utter_estimate_offer_quote"),
])
def test_an_order_or_quote_with_the_job_gets_the_estimate_and_the_offer(conversation, lang, message, size, offer):
    turns = NoRepeatTurns(conversation())
    replies = turns.say(message)
    assert_language(replies, lang)
    text = joined(replies)
    assert size in text and names_a_card(text), text
    assert domain_response(offer, lang) in texts(replies), text
    assert not handed_over(turns.c)


# ------------------------------------------------------------------------- 8. a named configuration, monthly

@pytest.mark.parametrize("lang,message", [
    ("tr", "8 x H100 bir sunucuyu nasıl sipariş edebilirim, aylık fiyatınız var mı?"),
    ("fa", "سرور ۸تایی H100 رو چطور سفارش بدم؟ ماهیانه چقدر درمیاد؟"),
])
def test_ordering_a_named_configuration_names_it_and_offers_the_quote(conversation, lang, message):
    turns = NoRepeatTurns(conversation())
    replies = turns.say(message)
    assert_language(replies, lang)
    assert last_intent(turns.c) == "order_multi_gpu"
    first = texts(replies)[0]
    h100 = KB.gpu("h100")
    assert f"8 × {h100.name}" in first, first
    assert price_text(8 * h100.price_usd_hour, lang) in first, first
    assert price_text(8 * h100.price_usd_hour * 720, lang) in first, first
    assert domain_response("utter_order_multi_gpu", lang) in texts(replies)
    turns.say("evet, teklif istiyorum" if lang == "tr" else "بله، پیش‌فاکتور می‌خوام")
    assert handed_over(turns.c), "a yes to the quote offer opens the hand-over"
