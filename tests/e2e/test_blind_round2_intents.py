"""End-to-end (REST, real servers): the intent-confusion classes the second blind run showed (issue 21, round 2),
each in both languages with sentences written for these tests (never the blind set's, never the training data's):
1. a card's price or memory asked with no job: that card's price without and with KDV (its memory only when
   asked), not an estimate block, not the multi-GPU answer;
2. Persian keyboard mash that rolls back and forth on one row: "did not understand", not chit-chat;
3. "do you sell GPUs / servers?": we rent by the hour, never the quote form nor a hand-over;
4. a complaint about prices and the exchange rate: an apology, what keeps the cost down, a person offered;
5. a whole request that also asks about serving the model afterwards: the estimate and what is offered for it;
6. "can I send my training file, do you count its tokens?": yes, and how (the data check);
7. a company registered abroad asking about KDV: the KDV / invoice answer;
8. "compare it with card X too" after an estimate: that card beside the recommended one;
9. Finglish: a person asked to call, and a whole request with its volume, answered as such;
and from round 1: betting is out of scope, a quote after an estimate keeps the job, the servers' location in
Finglish is the location (KVKK) answer.
"""
from __future__ import annotations


import pytest

from bot.advisor.knowledge import load_knowledge
from bot.assistant.components.keyboard_mash import is_keyboard_mash
from bot.advisor.vat import price_with_vat
from tests.e2e.helpers import (assert_language, domain_response as response, handed_over, joined, last_intent, payloads,
                               price_text, texts, tracker_slots)

pytestmark = pytest.mark.e2e

KB = load_knowledge()
CARDS = {card.id: card for card in KB.gpus}
CARD_NAMES = [card.name for card in KB.gpus]





def prices(card_id: str, lang: str) -> tuple:
    price = CARDS[card_id].price_usd_hour
    return price_text(price, lang), price_text(price_with_vat(price, KB.pricing.vat_rate, to_cent=True), lang)


# ------------------------------------------------------------------------- 1. one card's price or memory


@pytest.mark.parametrize("lang,message,card_id", [
    ("fa", "کرایهٔ یک ساعت A100 پیش شما چقدر درمیاد؟", "a100"),
    ("tr", "A40'ın bir saatlik kirası kaç para tutuyor?", "a40"),
])
def test_a_cards_price_is_its_price_with_and_without_kdv_and_no_memory(conversation, lang, message, card_id):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    text = joined(replies)
    without, with_vat = prices(card_id, lang)
    assert CARDS[card_id].name in text and without in text and with_vat in text, text
    assert "GB" not in text, text


@pytest.mark.parametrize("lang,job,question,again,card_id", [
    ("fa", "Qwen2.5 7B رو با QLoRA آموزش میدیم", "H100 ساعتی چند حساب میشه؟", "با مالیات چند میشه؟", "h100"),
    ("tr", "Llama 3.1 8B'yi LoRA ile eğiteceğiz", "L40S'in saat ücreti ne kadar?", "KDV'li ne kadar ediyor?",
     "l40s"),
])
def test_a_price_question_in_the_middle_of_the_form_gets_no_estimate_block(conversation, lang, job, question,
                                                                          again, card_id):
    c = conversation()
    c.say(job)
    replies = c.say(question)
    assert_language(replies, lang)
    text = joined(replies)
    without, with_vat = prices(card_id, lang)
    assert CARDS[card_id].name in text and without in text and with_vat in text, text
    assert "GB" not in text, text
    later = joined(c.say(again))                                 # "and with KDV?" names the same card again
    assert CARDS[card_id].name in later and with_vat in later, later
    assert tracker_slots(c)["model_id"], "the job was lost"


@pytest.mark.parametrize("lang,message,card_id", [
    ("fa", "H200 رو هم کرایه میدید؟ رمش چند گیگه؟", "h200"),
    ("tr", "B200'ü de kiralayabiliyor muyuz, VRAM'i kaç GB?", "b200"),
])
def test_renting_a_card_and_its_memory_gets_that_cards_facts(conversation, lang, message, card_id):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    text = joined(replies)
    card = CARDS[card_id]
    without, with_vat = prices(card_id, lang)
    assert card.name in text and f"{card.vram_gb:g} GB" in text and without in text and with_vat in text, text
    assert last_intent(c) == "card_facts"
    assert "/request_quote" not in payloads(replies)             # not the multi-GPU ordering answer


# ------------------------------------------------------------------------- 2. Persian keyboard mash


@pytest.mark.parametrize("word", ["شیسبلب", "لبیسیب", "قفغفقث", "ذرزطزر", "ghjhgf", "نمکنتن"])
def test_mash_rolling_along_one_row_is_mash(word):
    assert is_keyboard_mash(word)


@pytest.mark.parametrize("word", ["مالیات", "نمایش", "ایمیل", "کتابش", "سلام", "بالا", "متشکرم", "ممنونم",
                                  "فاین‌تیون", "teşekkürler", "selam"])
def test_real_words_are_not_mash(word):
    assert not is_keyboard_mash(word)


@pytest.mark.parametrize("message", ["شیسبلب لبیسیب", "قفغفقث ذرزطزر", "سیبلبیس"])
def test_persian_keyboard_mash_is_not_understood(conversation, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, "fa")
    assert last_intent(c) == "nlu_fallback"
    assert tracker_slots(c).get("estimate_summary") is None


# ------------------------------------------------------------------------- 3. selling hardware


@pytest.mark.parametrize("lang,message", [
    ("fa", "کارت گرافیک رو به ما می‌فروشید یا فقط کرایه‌ای هست؟"),
    ("fa", "mikhaym chand ta server gpu az shoma bekharim"),
    ("tr", "Bize birkaç GPU satabilir misiniz? Satın alıp kendimiz barındıracağız"),
    ("tr", "sunucu satin alabilir miyiz sizden"),
])
def test_buying_hardware_gets_we_rent_by_the_hour(conversation, lang, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert response("utter_rent_only", lang) in texts(replies), joined(replies)
    assert not handed_over(c)


# ------------------------------------------------------------------------- 4. a complaint about prices


@pytest.mark.parametrize("lang,message", [
    ("fa", "دلار که بالا رفت دیگه نمی‌تونیم هزینهٔ سرورهای شما رو بدیم، خیلی گرونه"),
    ("fa", "ba in nerkh dollar gheymataton vaghean ziade"),
    ("tr", "Kurlar yüzünden fiyatlarınız artık ödenemez seviyede, çok pahalı"),
    ("tr", "fiyatlariniz cok yuksek, bu kurla odeyemiyoruz"),
])
def test_a_complaint_about_prices_is_acknowledged_with_a_person_offered(conversation, lang, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert response("utter_complaint_price", lang) in texts(replies), joined(replies)
    assert "/request_human" in payloads(replies)
    assert not handed_over(c)


# ------------------------------------------------------------------------- 5. estimate and serving


@pytest.mark.parametrize("lang,message", [
    ("fa", "Llama 3.1 8B رو با LoRA آموزش میدیم و بعدش روی همون سرور اینفرنس هم می‌گیریم"),
    ("tr", "Qwen2.5 7B'yi QLoRA ile eğitip ardından API olarak sunmak istiyoruz, ne gerekir?"),
])
def test_an_estimate_with_serving_afterwards_gets_both(conversation, lang, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    text = joined(replies)
    assert response("utter_serving_offer", lang) in texts(replies), text
    assert "GB" in text and any(name in text for name in CARD_NAMES), text
    assert last_intent(c) == "estimate_and_serving"


# ------------------------------------------------------------------------- 6. the training file


@pytest.mark.parametrize("lang,message", [
    ("fa", "اگه فایل آموزشی‌مون رو آپلود کنم، تعداد توکن‌هاش رو درمیاری؟"),
    ("tr", "Eğitim verimizi buraya yükleyince token sayısını çıkarabiliyor musun?"),
])
def test_a_question_about_sending_the_training_file_says_how(conversation, lang, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert response("utter_dataset_how", lang) in texts(replies), joined(replies)


# ------------------------------------------------------------------------- 7. KDV for a company abroad


@pytest.mark.parametrize("lang,message", [
    ("fa", "ما شرکتی هستیم که در اتریش ثبت شده؛ مالیات بر ارزش افزودهٔ ترکیه شامل حال ما میشه؟"),
    ("tr", "İsviçre'de tescilli bir şirketiz; KDV bizim faturalarımıza da yansır mı?"),
])
def test_a_company_abroad_asking_about_kdv_gets_the_kdv_answer(conversation, lang, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert last_intent(c) in ("faq_prices_vat", "faq_invoice")
    assert ("KDV" if lang == "tr" else "مالیات") in joined(replies)


# ------------------------------------------------------------------------- 8. one more card to compare


@pytest.mark.parametrize("lang,job,question,card_id", [
    ("fa", "mistral 7b با lora، ۶۰۰۰ نمونهٔ ۵۱۲ توکنی", "یه مقایسه با H100 هم برام بکن", "h100"),
    ("tr", "gemma 2 9b qlora, 5000 örnek 1024 token", "A100 ile de kıyaslayabilir misin?", "a100"),
])
def test_compare_with_one_more_card_after_an_estimate(conversation, lang, job, question, card_id):
    c = conversation()
    first = joined(c.say(job))
    recommended = [name for name in CARD_NAMES if name in first]
    assert recommended, first
    replies = c.say(question)
    assert_language(replies, lang)
    assert last_intent(c) == "compare_options"
    assert any(CARDS[card_id].name in reply and recommended[0] in reply for reply in texts(replies)), \
        joined(replies)


# ------------------------------------------------------------------------- 9. Finglish


def test_finglish_asking_for_a_call_starts_the_hand_over(conversation):
    c = conversation()
    replies = c.say("momkene ye nafar az team shoma ba man tamas begire?")
    assert_language(replies, "fa")
    assert last_intent(c) == "request_human"
    assert handed_over(c)


def test_a_whole_finglish_request_is_estimated(conversation):
    c = conversation()
    replies = c.say("ye gemma 9b darim, mikhaym ba lora 3 epoch train konim, 1200 ta nemune 600 tokeni, "
                    "hazinash chand mishe?")
    assert_language(replies, "fa")
    assert last_intent(c) in ("estimate", "inform")
    text = joined(replies)
    assert "GB" in text and any(name in text for name in CARD_NAMES), text
    slots = tracker_slots(c)
    assert slots["examples"] == 1200 and slots["epochs"] == 3, slots


# ------------------------------------------------------------------------- still open from round 1


@pytest.mark.parametrize("lang,message", [
    ("fa", "برای پیش‌بینی نتیجهٔ مسابقه‌ها و شرط بستن روشون یه مدل می‌خوایم"),
    ("fa", "ye robot baraye shart bandi football mikham"),
    ("tr", "Canlı bahis oranlarını tahmin edecek bir sistem kurmak istiyoruz"),
])
def test_betting_is_out_of_scope(conversation, lang, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert last_intent(c) == "out_of_scope"
    assert tracker_slots(c).get("requested_slot") is None


@pytest.mark.parametrize("lang,job,question", [
    ("fa", "mistral 7b با qlora، ۴۰۰۰ نمونهٔ ۵۱۲ توکنی", "برای همین محاسبه یه پیش‌فاکتور بفرستید"),
    ("tr", "mistral 7b qlora, 3000 örnek 768 token", "Bu hesaba göre bir teklif hazırlar mısınız?"),
])
def test_a_quote_after_an_estimate_keeps_the_job(conversation, lang, job, question):
    c = conversation()
    c.say(job)
    replies = c.say(question)
    assert_language(replies, lang)
    assert last_intent(c) == "request_quote"
    assert handed_over(c)
    slots = tracker_slots(c)
    assert slots["model_id"] and slots["method"] == "qlora"


def test_the_servers_location_in_finglish_is_the_location_answer(conversation):
    c = conversation()
    replies = c.say("serverhatoon too che keshvari gharar daran?")
    assert_language(replies, "fa")
    assert last_intent(c) == "faq_kvkk"


@pytest.mark.parametrize("lang,job,again", [
    ("fa", "Qwen2.5 7B با LoRA و طول توالی ۱۰۲۴", "این خیلی گرون درمیاد، با QLoRA چقدر میشه؟"),
    ("tr", "Qwen2.5 7B LoRA, 1024 token", "Bu çok pahalı oldu, QLoRA ile ne kadar tutar?"),
])
def test_too_expensive_with_another_method_is_a_new_estimate(conversation, lang, job, again):
    c = conversation()
    c.say(job)
    replies = c.say(again)
    assert_language(replies, lang)
    assert tracker_slots(c)["method"] == "qlora"
    text = joined(replies)
    assert "GB" in text and any(name in text for name in CARD_NAMES), text


@pytest.mark.parametrize("lang,job,question", [
    ("fa", "mistral 7b با lora، طول توالی ۱۰۲۴، بودجه محدودیت نداره", "با {card} هم مقایسه‌اش کن"),
    ("tr", "mistral 7b lora 1024 token, bütçe sınırı yok", "{card} ile de kıyaslar mısın?"),
])
def test_compare_with_the_recommended_card_itself_says_so(conversation, lang, job, question):
    from actions.dialogue_text import text

    c = conversation()
    c.say(job)
    recommended = CARDS[tracker_slots(c)["estimate_summary"]["best_card"]].name
    replies = c.say(question.format(card=recommended))
    assert_language(replies, lang)
    assert text("followup_card_is_recommended", lang, other=recommended) in texts(replies), joined(replies)
