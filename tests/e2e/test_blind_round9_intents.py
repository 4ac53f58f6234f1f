"""Round 9 (intents), through the real servers.

Every sentence here is our own (never the blind set's, never an issue's), and none is a training example:
1. a method known but no model yet, "where do I start?": the model question, the method kept, never the fallback;
2. a use case (a business and what its model should do) without a model: the model question after a short line that
   the use case is noted, never the fallback;
3. a job question that names the language of the training data: the estimate, never the support-language FAQ;
4. a data description with only a count: the model question with the count kept, never a complaint or a hand-over;
5. a Persian or Finglish order of several cards with a count: the multi-GPU order answer (count, card, price with
   and without KDV, process, quote offer), the count kept.
"""
from __future__ import annotations

import pytest

from actions.dialogue_text import text as dialogue_text
from bot.advisor.knowledge import load_knowledge
from bot.advisor.vat import price_with_vat
from tests.e2e.helpers import (assert_language, domain_response as response, handed_over, joined, last_intent,
                               names_a_card, price_text, texts, tracker_slots)

pytestmark = pytest.mark.e2e


def said(replies, name: str, lang: str) -> bool:
    return response(name, lang) in texts(replies)


def not_understood(replies, lang: str) -> bool:
    return said(replies, "utter_default", lang)


def asks_the_model(conversation, replies, lang: str) -> None:
    assert tracker_slots(conversation).get("requested_slot") == "model", joined(replies)
    assert not not_understood(replies, lang), joined(replies)
    assert not handed_over(conversation), "a hand-over nobody asked for"


# ------------------------------------------------------------------------- 1. a method, no model, where to start


@pytest.mark.parametrize("lang,message,method", [
    ("fa", "قصد دارم با QLoRA فاین‌تیون کنم اما هنوز مدلی انتخاب نکردم، قدم اول چیه؟", "qlora"),
    ("fa", "mikham ba lora fine tune konam vali hanooz model moshakhas nist, az koja shoroo konam?", "lora"),
    ("fa", "می‌خوایم آموزش کامل انجام بدیم ولی مدل پایه رو هنوز نمی‌دونیم، چطور شروع کنیم؟", "full"),
    ("tr", "LoRA ile ince ayar yapacağım fakat henüz bir model belirlemedim, ilk adım ne olmalı?", "lora"),
    ("tr", "qlora kullanmak istiyorum ama hangi modeli secegimi bilmiyorum, nereden baslayayim", "qlora"),
])
def test_a_method_without_a_model_asks_the_model_and_keeps_the_method(conversation, lang, message, method):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    asks_the_model(c, replies, lang)
    assert tracker_slots(c).get("method") == method, tracker_slots(c)


# ------------------------------------------------------------------------- 2. a use case, no model


@pytest.mark.parametrize("lang,message", [
    ("fa", "ما یه فروشگاه آنلاین لوازم خانگی هستیم و یه مدل اختصاصی میخوایم که به سوال‌های مشتری جواب بده"),
    ("fa", "ye daftare hesabdari hastim, ye model mikhaym ke factor ha ro kholase kone"),
    ("fa", "یه بیمارستان خصوصی هستیم، میخوایم مدلی داشته باشیم که گزارش‌های پزشکی رو دسته‌بندی کنه"),
    ("tr", "Bir sigorta şirketiyiz, poliçe metinlerini özetleyen kendi modelimizi kurmak istiyoruz"),
    ("tr", "bir otel zinciriyiz, misafir yorumlarina cevap yazan bir model istiyoruz"),
])
def test_a_use_case_without_a_model_is_noted_and_asks_the_model(conversation, lang, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    asks_the_model(c, replies, lang)
    assert dialogue_text("use_case_noted", lang) in texts(replies), joined(replies)


# ------------------------------------------------------------------------- 3. a job with the data's language


@pytest.mark.parametrize("lang,message", [
    ("fa", "Llama 3.1 8B رو با داده‌های فارسی مشتری‌هامون با LoRA آموزش بدیم، چند گیگ حافظه لازمه؟"),
    ("fa", "mistral 7b ro ba dade haye farsi qlora konim, che karti lazem darim?"),
    ("tr", "Qwen2.5 7B'yi Türkçe destek kayıtlarımızla QLoRA ile eğitsek ne kadar VRAM gerekir?"),
    ("tr", "llama 3.1 8b yi turkce belgelerle lora yapsak kac gb bellek lazim"),
    ("tr", "Mistral 7B'yi Türkçe yorumlarla LoRA'lamak mümkün mü, kaç GB ister?"),
])
def test_a_job_with_the_data_language_gets_the_estimate(conversation, lang, message):
    from actions.faq import faq_answer

    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert last_intent(c) != "faq_support_languages", joined(replies)
    assert faq_answer("support_languages", lang) not in texts(replies), joined(replies)
    assert names_a_card(joined(replies)), joined(replies)


@pytest.mark.parametrize("lang,message,method", [
    ("fa", "Gemma رو روی متن‌های فارسی خودمون با کیولورا آموزش بدیم چند گیگ رم لازمه؟", "qlora"),
    ("tr", "Qwen'i Türkçe çağrı merkezi kayıtlarımızla LoRA'layabilir miyiz, bellek ne kadar?", "lora"),
])
def test_a_family_without_a_size_and_the_data_language_asks_the_model(conversation, lang, message, method):
    """A model family without its size is not yet a model: the model question with the method kept, never the
    support-language FAQ."""
    from actions.faq import faq_answer

    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert last_intent(c) != "faq_support_languages", joined(replies)
    assert faq_answer("support_languages", lang) not in texts(replies), joined(replies)
    asks_the_model(c, replies, lang)
    assert tracker_slots(c).get("method") == method, tracker_slots(c)


# ------------------------------------------------------------------------- 4. only a count of examples


@pytest.mark.parametrize("lang,message,examples", [
    ("fa", "حدود ۴۰ هزار جفت سوال و جواب جمع کردیم.", 40000),
    ("fa", "hodoode 12 hezar ta dialog darim", 12000),
    ("tr", "Yaklaşık 15 bin destek kaydımız var.", 15000),
    ("tr", "elimizde 50 bin ornek konusma var", 50000),
])
def test_a_count_of_examples_is_kept_and_asks_the_model(conversation, lang, message, examples):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert last_intent(c) not in ("complaint", "complaint_price"), joined(replies)
    asks_the_model(c, replies, lang)
    assert tracker_slots(c).get("examples") == examples, tracker_slots(c)


# ------------------------------------------------------------------------- 5. several cards ordered together


@pytest.mark.parametrize("lang,message,count,card", [
    ("fa", "اگه بخوایم ۸ تا H200 همزمان بگیریم روالش چیه؟ خودمون از سایت می‌تونیم یا باید تماس بگیریم؟", 8, "h200"),
    ("fa", "۲ تا A100 کنار هم لازم داریم، سفارشش چطوریه؟", 2, "a100"),
    ("fa", "8 ta H100 ba ham lazem darim, az panel mishe sefaresh dad?", 8, "h100"),
    ("fa", "2 ta L40S hamzaman mikhaym, sefaresh chejoori anjam mishe?", 2, "l40s"),
    ("fa", "6 ta H200 ba ham lazem darim, rahe sefaresh chie? ba poshtibani hamahang konim?", 6, "h200"),
])
def test_a_persian_order_of_several_cards_gets_the_order_answer(conversation, lang, message, count, card):
    kb = load_knowledge()
    gpu = kb.gpu(card)
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert last_intent(c) == "order_multi_gpu", joined(replies)
    assert said(replies, "utter_order_multi_gpu", lang), joined(replies)
    assert tracker_slots(c).get("gpus") == count, tracker_slots(c)
    text = joined(replies)
    hourly = gpu.price_usd_hour * count
    assert gpu.name in text, text
    assert price_text(hourly, lang) in text, text
    assert price_text(price_with_vat(hourly, kb.pricing.vat_rate, to_cent=True), lang) in text, text
    assert not handed_over(c), "a hand-over nobody asked for"
