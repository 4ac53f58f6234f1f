"""End-to-end (REST, real servers): the hand-over in one message (round 9).

1. A yes to the offered quote or person with the contact in the same message, or a request for a person that
   carries the contact: the ticket opens in that turn with that contact; the contact is not asked for again, and
   the contact stays out of both servers' logs; the short KVKK notice follows the confirmation.
2. A no to the hand-over with a job question in the same message: the no is acknowledged in one line
   (knowledge/dialogue.yml offer_declined_brief) and the job estimated
   (model and method kept, memory and card), no ticket.
3. Buying cards with "price quote" words: we rent, we do not sell (utter_rent_only), no hand-over; asking for a
   person afterwards starts it.
Sentences written for these tests (never a blind set's).
"""
from __future__ import annotations

import re

import pytest

from actions.dialogue_text import text as dialogue_text
from bot.tickets import TicketStore
from tests.e2e.helpers import (assert_language, domain_response, domain_responses, handed_over, joined,
                               names_a_card, texts, tracker_slots)

pytestmark = pytest.mark.e2e
TICKET_ID = re.compile(r"T-\d{6}-[0-9A-HJKMNP-TV-Z]{6}")
GB = re.compile(r"\d+(?:[.,]\d+)?\s*GB")
QUOTE_OFFER = {"tr": "Llama 3.1 70B modelini full fine-tuning ile eğitmek istiyoruz, hangi GPU?",
               "fa": "می‌خوام Llama 3.1 70B رو با full fine-tuning آموزش بدم، چه کارتی لازمه؟"}
FORM_QUESTIONS = ("utter_ask_handoff_consent", "utter_ask_handoff_contact")


def _variants(name: str) -> set:
    return {v["text"] for v in domain_responses()[name]}


def _asks_for_contact(replies) -> bool:
    asked = set().union(*(_variants(name) for name in FORM_QUESTIONS))
    return bool(asked & set(texts(replies)))


def _offered_quote(c, lang: str) -> None:
    replies = c.say(QUOTE_OFFER[lang])
    assert_language(replies, lang)
    assert domain_response("utter_estimate_offer_quote", lang) in texts(replies), joined(replies)


def _assert_ticket_with(c, replies, lang: str, contact: str, rasa_server, action_server) -> None:
    assert_language(replies, lang)
    text = joined(replies)
    assert not _asks_for_contact(replies), text
    # The consent question's notice was never shown: its short form follows the confirmation.
    assert dialogue_text("handoff_contact_kvkk", lang) in texts(replies), text
    ticket_id = tracker_slots(c).get("ticket_id")
    assert ticket_id and ticket_id in text and TICKET_ID.search(text), text
    store = TicketStore()
    try:
        ticket = store.get(ticket_id)
        assert ticket.consent and ticket.contact == contact, (ticket.contact, contact)
    finally:
        store.delete([ticket_id])
    logs = rasa_server.log() + action_server.log()
    assert contact not in logs


# ------------------------------------------------------------------------- 1. yes + contact in one message

@pytest.mark.parametrize("lang,message,contact", [
    ("tr", "Peki, teklifi alalım. Adım Selin Aydın, selin.aydin@bulut.com.tr", "selin.aydin@bulut.com.tr"),
    ("tr", "olur teklif isterim, mailim: burak.ozt@firmam.net", "burak.ozt@firmam.net"),
    ("fa", "خیلی خب، پیش‌فاکتور رو می‌خوام. من نگار هستم، ایمیلم negar.kamali@sherkat.ir", "negar.kamali@sherkat.ir"),
    ("fa", "bashe pishfactor mikham, emailam reza.mohseni@gmail.com", "reza.mohseni@gmail.com"),
])
def test_a_yes_to_the_quote_with_the_contact_opens_the_ticket_at_once(conversation, rasa_server, action_server,
                                                                      lang, message, contact):
    c = conversation()
    _offered_quote(c, lang)
    replies = c.say(message)
    _assert_ticket_with(c, replies, lang, contact, rasa_server, action_server)


@pytest.mark.parametrize("lang,message,contact", [
    ("tr", "Bir satış temsilcisiyle görüşmek istiyorum, e-postam deniz.acar@ornekas.com", "deniz.acar@ornekas.com"),
    ("tr", "yetkili biriyle konusabilir miyim? mail adresim kerem.yildiz@veri.io", "kerem.yildiz@veri.io"),
    ("fa", "می‌خوام با یکی از همکاراتون صحبت کنم، ایمیلم hamed.t@daneshgah.ac.ir", "hamed.t@daneshgah.ac.ir"),
])
def test_a_request_for_a_person_with_the_contact_opens_the_ticket_at_once(conversation, rasa_server, action_server,
                                                                         lang, message, contact):
    c = conversation()
    replies = c.say(message)
    _assert_ticket_with(c, replies, lang, contact, rasa_server, action_server)


# ------------------------------------------------------------------------- 2. no + a job question

@pytest.mark.parametrize("lang,message,method,size", [
    ("tr", "yok gerek yok, önce şunu söyleyin: Mistral 7B QLoRA için hangi kart lazım?", "qlora", "7"),
    ("tr", "Hayır, teklif istemiyorum. Qwen2.5 14B LoRA ne kadar tutar?", "lora", "14"),
    ("fa", "نه ممنون، فعلاً بگید Llama 3.1 8B با QLoRA چقدر حافظه میخواد؟", "qlora", "8"),
    ("fa", "na mersi, faghat begid Gemma 2 9B ba LoRA che karti mikhad?", "lora", "9"),
])
def test_a_no_to_the_offer_with_a_job_question_gets_the_estimate(conversation, lang, message, method, size):
    c = conversation()
    _offered_quote(c, lang)
    replies = c.say(message)
    assert_language(replies, lang)
    text = joined(replies)
    slots = tracker_slots(c)
    assert slots.get("method") == method, slots
    assert size in str(slots.get("model_id") or "") + str(slots.get("model_size_b") or ""), slots
    assert names_a_card(text) and GB.search(text), text
    assert dialogue_text("offer_declined_brief", lang) == texts(replies)[0], text
    assert not handed_over(c) and not _asks_for_contact(replies), text


@pytest.mark.parametrize("lang,message,method", [
    ("tr", "vazgeçtim, kendim soracağım: Llama 3.2 3B QLoRA için kaç GB gerekir?", "qlora"),
    ("fa", "نه بیخیالش، خودم سوال دارم: Mistral 7B با LoRA چه کارتی لازم داره؟", "lora"),
])
def test_a_no_to_the_consent_question_with_a_job_question_gets_the_estimate(conversation, lang, message, method):
    c = conversation()
    c.say("bir uzmanla görüşmek istiyorum" if lang == "tr" else "میخوام با کارشناس صحبت کنم")
    assert tracker_slots(c).get("requested_slot") == "handoff_consent"
    replies = c.say(message)
    assert_language(replies, lang)
    text = joined(replies)
    assert tracker_slots(c).get("method") == method, tracker_slots(c)
    assert names_a_card(text) and GB.search(text), text
    assert dialogue_text("offer_declined_brief", lang) == texts(replies)[0], text
    assert not tracker_slots(c).get("ticket_id") and not _asks_for_contact(replies), text


# ------------------------------------------------------------------------- 3. buying cards, "price quote" words

@pytest.mark.parametrize("lang,message", [
    ("tr", "Firmamız için 4 tane H100 satın alacağız, bize fiyat teklifi gönderir misiniz?"),
    ("tr", "sirket olarak 2 adet A100 satin almak istiyoruz, teklif verebilir misiniz"),
    ("fa", "برای شرکتمون سه تا H100 می‌خوایم بخریم، پیش‌فاکتور می‌فرستید؟"),
    ("fa", "mikhaim 2 ta L40S bekharim, pishfactor midid?"),
])
def test_buying_cards_with_quote_words_is_the_rent_only_answer(conversation, lang, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert domain_response("utter_rent_only", lang) in texts(replies), joined(replies)
    assert not handed_over(c) and not _asks_for_contact(replies), joined(replies)
    person = c.say("bir yetkiliyle görüşmek istiyorum" if lang == "tr" else "میخوام با یه کارشناس حرف بزنم")
    assert_language(person, lang)
    assert handed_over(c), joined(person)
