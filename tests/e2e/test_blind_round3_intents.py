"""End-to-end (REST, real servers): the intent classes the third blind run showed (issue 21, round 3), each in both
languages where the class exists in both, with sentences written for these tests (never the blind set's, never the
training data's):
1. a colloquial "how's it going" greeting: a greeting back, not "did not understand";
2. "does it keep charging while the machine sits idle", with or without Turkish letters: the cost-control FAQ;
3. Turkish keyboard mash that strays onto ğ ü ş ı: "did not understand", not the out-of-scope answer;
4. a complaint that training is much slower than promised: an apology and a person offered, not the memory FAQ;
5. a company's formal LoRA request for a named model that names its use case (customer service): an estimate;
6. "host my fine-tuned model and give me an API, what does it cost?": the other-workload answer, not the form;
7. "so is it enough or not?" after an estimate with a budget: the budget's verdict again (the budget asked if none);
8. in the hand-over, a refusal that also cancels ("forget it"): no ticket, said politely; a plain refusal offers
   a ticket without a contact (round 4: it no longer opens one by itself), which "yes" opens.
"""
from __future__ import annotations

import os

import pytest

from bot.assistant.components.keyboard_mash import is_keyboard_mash
from bot.present.render import faq_text
from bot.tickets import TicketStore
from tests.e2e.helpers import (assert_language, domain_response as response, domain_responses, joined, last_intent,
                               names_a_card, texts, tracker_slots)

pytestmark = pytest.mark.e2e

def not_understood(replies, lang: str) -> bool:
    return response("utter_default", lang) in texts(replies)


# ------------------------------------------------------------------------- 1. colloquial greetings


@pytest.mark.parametrize("lang,message", [
    ("tr", "naber, nasıl gidiyor?"),
    ("tr", "slm nasil gidiyo"),
    ("tr", "ne var ne yok"),
    ("tr", "selam kanka napıyosun"),
    ("tr", "merhaba, işler nasıl?"),
    ("fa", "سلام، چه خبرا؟ اوضاع خوبه؟"),
    ("fa", "درود، حالت چطوره؟"),
])
def test_a_colloquial_greeting_is_greeted_back(conversation, lang, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert last_intent(c) == "greet", joined(replies)
    assert not not_understood(replies, lang), joined(replies)


# ------------------------------------------------------------------------- 2. the idle machine's cost


@pytest.mark.parametrize("lang,message", [
    ("tr", "makine bos kalirsa da para yazmaya devam ediyor mu"),
    ("tr", "sunucu is yapmadan acik dururken ucret isliyor mu?"),
    ("tr", "egitim bittikten sonra makineyi kapatmazsam para kesilir mi"),
    ("tr", "Makine boşta beklerken de ücretlendiriliyor muyum?"),
    ("fa", "اگه سرور روشن بمونه ولی کاری انجام نده، بازم هزینه حساب میشه؟"),
    ("fa", "وقتی جی‌پی‌یو بیکار مونده هم پولش کسر میشه؟"),
])
def test_the_idle_machine_question_is_the_cost_control_faq(conversation, lang, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert last_intent(c) == "faq_cost_control", joined(replies)
    assert faq_text("cost_control", lang, public_url=os.environ.get("ADVISOR_PUBLIC_URL")) in joined(replies)


# ------------------------------------------------------------------------- 3. Turkish keyboard mash


@pytest.mark.parametrize("word", ["sdfğüş", "jklşğüı", "asdfgğüşi", "lkjğüş", "ğüşi", "fghşğü"])
def test_mash_with_turkish_letters_is_mash(word):
    assert is_keyboard_mash(word)


@pytest.mark.parametrize("word", ["sağlık", "ışığı", "kaşığı", "işlemi", "düşük", "güçlü", "eğitişim", "şişe",
                                  "aşağı", "dağıtık"])
def test_turkish_words_with_those_letters_are_not_mash(word):
    assert not is_keyboard_mash(word)


@pytest.mark.parametrize("message", ["asdğüş jklşğüı", "dfgşğüı", "ğüşi ğüşi", "hjklşiğü"])
def test_turkish_keyboard_mash_is_not_understood(conversation, message):
    c = conversation()
    c.say("merhaba")
    replies = c.say(message)
    assert_language(replies, "tr")
    assert last_intent(c) == "nlu_fallback"
    assert not_understood(replies, "tr"), joined(replies)
    assert response("utter_out_of_scope", "tr") not in texts(replies)


# ------------------------------------------------------------------------- 4. slow training is a complaint


@pytest.mark.parametrize("lang,message", [
    ("tr", "eğitim dediğiniz süreden kat kat uzun sürüyor, bu nasıl iş!"),
    ("tr", "egitim inanilmaz yavas gidiyor, ne bicim hizmet bu"),
    ("fa", "آموزش چند برابر کندتر از برآورد شما پیش میره، این چه خدماتیه!"),
    ("fa", "سرعت آموزش خیلی افتضاحه، اصلاً انتظار نداشتم"),
])
def test_slow_training_is_a_complaint_with_a_person_offered(conversation, lang, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert last_intent(c) == "complaint", joined(replies)
    assert response("utter_complaint", lang) in texts(replies), joined(replies)
    assert tracker_slots(c)["requested_slot"] == "handoff_consent"        # a person offered: the hand-over asks
    assert faq_text("vram", lang) not in joined(replies)


# ------------------------------------------------------------------------- 5. a use case in a formal request


@pytest.mark.parametrize("lang,message", [
    ("tr", "Firmamız müşteri hizmetleri asistanı için Llama 3.1 8B'yi LoRA ile ince ayarlamak istiyor; "
           "uygun kart konusunda bilgi verebilir misiniz?"),
    ("tr", "musteri destek botumuz icin qwen2.5 7b modelini lora ile egitmek istiyoruz"),
    ("fa", "شرکت ما می‌خواهد Llama 3.1 8B را با LoRA برای پشتیبانی مشتریان تنظیم دقیق کند؛ "
           "لطفاً کارت مناسب را بفرمایید."),
    ("fa", "برای بات پشتیبانی مشتری‌هامون میخوایم mistral 7b رو با qlora فاین تیون کنیم"),
])
def test_a_request_naming_its_use_case_is_an_estimate(conversation, lang, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert last_intent(c) in ("estimate", "inform"), joined(replies)
    assert names_a_card(joined(replies)), joined(replies)          # answer first: the model and method are known
    slots = tracker_slots(c)
    assert slots["model_id"] and slots["method"] in ("lora", "qlora"), slots
    assert not slots.get("ticket_id") and slots["requested_slot"] not in ("handoff_consent", "handoff_contact")


# ------------------------------------------------------------------------- 6. hosting with an API


@pytest.mark.parametrize("lang,message", [
    ("fa", "مدل فاین‌تیون‌شده‌ام را روی سرورهای شما برای inference میزبانی می‌کنید و یک API می‌دهید؟ "
           "هزینه‌اش چقدر است؟"),
    ("fa", "میشه مدلی که ترین کردم رو برام بالا بیارید و API بدید؟ ماهی چند درمیاد؟"),
    ("tr", "ince ayarladığım modeli sizde yayına alıp bana bir API verebilir misiniz, ücreti ne olur?"),
])
def test_hosting_with_an_api_is_the_other_workload_answer(conversation, lang, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert last_intent(c) == "other_workload", joined(replies)
    assert response("utter_other_workload", lang) in texts(replies), joined(replies)
    assert tracker_slots(c).get("requested_slot") is None                    # not the estimate form


# ------------------------------------------------------------------------- 7. "so is it enough or not?"


@pytest.mark.parametrize("lang,job,question", [
    ("tr", "Llama 3.1 8B'yi QLoRA ile eğiteceğiz, 6000 örnek, her biri 500 token, bütçemiz 40 dolar",
     "yani yetiyor mu yetmiyor mu?"),
    ("tr", "Qwen2.5 7B LoRA, 20000 ornek, ornek basi 800 token, toplam butce 15 dolar",
     "peki bu para yeter mi sonucta"),
    ("fa", "Llama 3.1 8B رو با QLoRA آموزش میدیم، ۶۰۰۰ نمونه، هر کدوم ۵۰۰ توکن، بودجه ۴۰ دلار",
     "خب پس کافیه یا نه؟"),
    ("fa", "Qwen2.5 7B با LoRA، بیست هزار نمونه با طول ۸۰۰ توکن، بودجه‌ام ۱۵ دلاره", "بالاخره میرسه یا نمیرسه؟"),
])
def test_is_it_enough_repeats_the_budget_verdict(conversation, lang, job, question):
    c = conversation()
    estimate = c.say(job)
    for _ in range(2):                                 # a refining question may be open: answered as "don't know"
        if tracker_slots(c).get("estimate_summary"):
            break
        estimate = c.say("bilmiyorum" if lang == "tr" else "نمی‌دونم")
    slots = tracker_slots(c)
    assert slots.get("estimate_summary") and slots.get("budget_usd"), joined(estimate)
    replies = c.say(question)
    assert_language(replies, lang)
    verdict = joined(replies)
    assert not not_understood(replies, lang), verdict
    # The same verdict the estimate gave for the same plan, said again.
    assert verdict and verdict.splitlines()[0] in joined(estimate), (verdict, joined(estimate))


@pytest.mark.parametrize("lang,job,question", [
    ("tr", "Llama 3.1 8B'yi QLoRA ile eğiteceğiz, 6000 örnek, her biri 500 token", "yeterli mi peki?"),
    ("fa", "Llama 3.1 8B رو با QLoRA آموزش میدیم، ۶۰۰۰ نمونه، هر کدوم ۵۰۰ توکن", "یعنی کافی هست؟"),
])
def test_is_it_enough_without_a_budget_asks_the_budget(conversation, lang, job, question):
    c = conversation()
    c.say(job)
    for _ in range(2):                                 # the budget question: answered as "don't know"
        if tracker_slots(c).get("estimate_summary"):
            break
        c.say("bilmiyorum" if lang == "tr" else "نمی‌دونم")
    slots = tracker_slots(c)
    assert slots.get("estimate_summary") and not slots.get("budget_usd"), slots
    replies = c.say(question)
    assert_language(replies, lang)
    assert not not_understood(replies, lang), joined(replies)
    budget_question = [v["text"] for v in domain_responses()["utter_ask_budget"]]
    assert any(text in budget_question for text in texts(replies)), joined(replies)


# ------------------------------------------------------------------------- 8. a refusal that also cancels


@pytest.mark.parametrize("lang,ask,answer", [
    ("tr", "bir yetkiliyle görüşmek istiyorum", "hayır, numaramı falan vermem, boşverin"),
    ("tr", "beni bir temsilciye bağlar mısın", "yok istemiyorum, vazgectim"),
    ("tr", "canlı destek lütfen", "telefonumu paylaşmam, unut gitsin"),
    ("fa", "میخوام با یه کارشناس صحبت کنم", "نه، شماره‌ام رو نمیدم، بیخیال"),
    ("fa", "لطفاً منو به پشتیبانی وصل کنید", "نمی‌خوام شماره بدم، ولش کن"),
])
def test_a_refusal_that_cancels_ends_the_hand_over_without_a_ticket(conversation, lang, ask, answer):
    c = conversation()
    c.say(ask)
    assert tracker_slots(c)["requested_slot"] == "handoff_consent"
    replies = c.say(answer)
    assert_language(replies, lang)
    assert response("utter_handoff_cancelled", lang) in texts(replies), joined(replies)
    slots = tracker_slots(c)
    assert not slots.get("ticket_id") and slots["requested_slot"] is None, slots
    assert not slots.get("handoff_contact") and not slots.get("handoff_cancelled"), slots


@pytest.mark.parametrize("lang,ask,answer", [
    ("tr", "bir yetkiliyle görüşmek istiyorum", "hayır, iletişim bilgisi vermek istemiyorum"),
    ("fa", "میخوام با یه کارشناس صحبت کنم", "نه، شماره نمیدم"),
])
def test_a_plain_refusal_offers_a_ticket_without_a_contact(conversation, lang, ask, answer):
    # Round 4 changed this: a plain refusal no longer opens the ticket by itself; it is offered, "yes" opens it.
    c = conversation()
    c.say(ask)
    replies = c.say(answer)
    assert_language(replies, lang)
    assert response("utter_offer_ticket_without_contact", lang) in texts(replies), joined(replies)
    assert not tracker_slots(c).get("ticket_id")
    replies = c.say("evet" if lang == "tr" else "بله")
    slots = tracker_slots(c)
    try:
        assert slots.get("ticket_id"), joined(replies)
        assert response("utter_handoff_cancelled", lang) not in texts(replies)
        ticket = TicketStore().get(slots["ticket_id"])
        assert not ticket.contact, ticket.contact
    finally:
        if slots.get("ticket_id"):
            TicketStore().delete([slots["ticket_id"]])


@pytest.mark.parametrize("lang,answer", [
    ("tr", "vazgeçtim, beni 0532 111 22 33'ten de aramayın"),
    ("fa", "بیخیال، به ۰۹۱۲۱۲۳۴۵۶۷ هم زنگ نزنید"),
])
def test_a_cancel_with_a_number_keeps_no_contact(conversation, lang, answer):
    c = conversation()
    c.say("bir insanla konuşmak istiyorum" if lang == "tr" else "با یه آدم واقعی کار دارم")
    replies = c.say(answer)
    assert_language(replies, lang)
    slots = tracker_slots(c)
    assert not slots.get("ticket_id") and not slots.get("handoff_contact"), slots
    assert response("utter_handoff_cancelled", lang) in texts(replies), joined(replies)
