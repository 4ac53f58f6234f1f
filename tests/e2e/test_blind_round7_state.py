"""End-to-end (REST, real servers): failure classes still open in the studied blind sets (issue 21, round 7), with
sentences written for these tests (never a blind set's):
1. with an hourly cap set and no total budget, an amount said of "the cap" / "the limit" moves the hourly cap; it
   is no new total budget (a budget word still makes it one);
2. a description of the data (a count of examples with their length, "about" between the number and its unit),
   whatever the classifier made of it (own card, not understood): the volume is kept and the model asked for,
   never "I could not find your GPU";
3. a job said together with "not much money" / "a limited budget" and "which card is cheapest?": the job is
   estimated (model and method kept, a card named), not "I need your budget amount" with the job lost; a bare
   "does it fit my budget?" after an estimate still asks for the budget.
"""
from __future__ import annotations

import pytest

from tests.e2e.helpers import assert_language, domain_response, joined, last_intent, names_a_card, texts, \
    tracker_slots

pytestmark = pytest.mark.e2e


# ------------------------------------------------------------------------------- 1. "the cap" moved

@pytest.mark.parametrize("lang,job,moved,cap", [
    ("fa", "Mistral 7B رو با QLoRA میخوام، ساعتی حداکثر ۱ دلار", "اگه سقفشو بکنم ۴ دلار چی عوض میشه؟", 4.0),
    ("fa", "qwen2.5 7b با لورا، ساعتی نهایتا ۱.۵ دلار", "سقف رو ببریم رو ۳ دلار، کارت بهتری هست؟", 3.0),
    ("tr", "Gemma 2 9B LoRA, saatlik en fazla 1 dolar", "limiti 2,5 dolar yaparsak ne değişir?", 2.5),
    ("tr", "llama 3.1 8b qlora, saatte en fazla 1 dolar", "ust siniri 4 dolara cekersem daha hizli kart olur mu", 4.0),
])
def test_an_amount_said_of_the_cap_moves_the_hourly_cap(conversation, lang, job, moved, cap):
    c = conversation()
    c.say(job)
    replies = c.say(moved)
    assert_language(replies, lang)
    slots = tracker_slots(c)
    assert (slots.get("hourly_cap"), slots.get("budget_usd")) == (cap, None), slots
    assert names_a_card(joined(replies)), joined(replies)


@pytest.mark.parametrize("lang,job,budget,amount", [
    ("fa", "Mistral 7B رو با QLoRA میخوام، ساعتی حداکثر ۱ دلار", "بودجه کلم هم سقفش ۴۰ دلاره", 40.0),
    ("tr", "Gemma 2 9B LoRA, saatlik en fazla 1 dolar", "toplam bütçe limitim de 60 dolar", 60.0),
])
def test_a_budget_word_keeps_the_amount_a_total_budget(conversation, lang, job, budget, amount):
    c = conversation()
    c.say(job)
    c.say(budget)
    slots = tracker_slots(c)
    assert (slots.get("hourly_cap"), slots.get("budget_usd")) == (1.0, amount), slots


# ------------------------------------------------------------------------------- 2. the data described

@pytest.mark.parametrize("lang,message,examples,avg", [
    ("tr", "Elimizde 8 bin kadar musteri sorusu var, her biri ortalama 220 token", 8000, 220),
    ("tr", "elimde 25 bin civari kayit var ortalama 500 token", 25000, 500),
    ("tr", "Veri kümemiz 40 bin örnekten oluşuyor, ortalama 180 token", 40000, 180),
    ("fa", "یه دیتاست داریم با ۱۲ هزار خرده‌ای نمونه، میانگین ۳۵۰ توکن", 12000, 350),
    ("fa", "حدودا ۹ هزار تا مکالمه داریم، هر کدوم ۴۵۰ توکن", 9000, 450),
])
def test_a_data_description_keeps_the_volume_and_asks_the_model(conversation, lang, message, examples, avg):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    slots = tracker_slots(c)
    assert (slots.get("examples"), slots.get("avg_tokens")) == (examples, avg), slots
    assert slots.get("requested_slot") == "model", joined(replies)
    assert domain_response("utter_default", lang) not in texts(replies)
    assert last_intent(c) != "own_card", joined(replies)


# ------------------------------------------------------------------------------- 3. little money, a job

@pytest.mark.parametrize("lang,message,method", [
    ("fa", "بودجه‌مون خیلی کمه. Llama 3.2 3B رو با LoRA میخوایم آموزش بدیم، ارزون‌ترین کارت کدومه؟", "lora"),
    ("fa", "پول زیادی نداریم؛ Qwen2.5 1.5B فول فاین‌تیون، کدوم GPU به‌صرفه‌تره؟", "full"),
    ("tr", "Paramız az, Mistral 7B'yi QLoRA ile eğitmek istiyoruz; hangi kart en ucuzu?", "qlora"),
    ("tr", "butcem kisitli, gemma 2 2b full fine tune icin en ucuz gpu hangisi", "full"),
])
def test_a_job_with_little_money_gets_the_card(conversation, lang, message, method):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    slots = tracker_slots(c)
    assert slots.get("method") == method and slots.get("model_size_b"), slots
    assert names_a_card(joined(replies)), joined(replies)


@pytest.mark.parametrize("lang,job,question", [
    ("fa", "Mistral 7B با QLoRA", "این با بودجه‌ی من جور درمیاد؟"),
    ("tr", "Mistral 7B QLoRA", "bu bütçeme uyar mı?"),
])
def test_does_it_fit_my_budget_without_one_asks_for_it(conversation, lang, job, question):
    c = conversation()
    c.say(job)
    replies = c.say(question)
    assert_language(replies, lang)
    assert tracker_slots(c).get("requested_slot") == "budget", joined(replies)
