"""Failure classes of the fourth blind run (issue 21, round 4: intents and hand-over), through the real servers.

Every sentence here is our own (never the blind set's), in both languages:
1. "how do I sign up, how do I pay?": the sign-up and payment FAQ (knowledge/faq.yml signup_payment), not the
   out-of-scope answer;
2. Latin letters typed at random, as a first message or inside a Persian or Turkish conversation: "did not
   understand" in the conversation's language, not the out-of-scope answer; Finglish sentences are still read;
3. the hand-over's consent question: (a) a yes with more words ("olur, bilgilerimi vereyim") is a yes, not "please
   write yes or no"; (b) a name or a contact typed instead of "yes" is a yes, and is kept; (c) a plain refusal to
   leave a contact opens no ticket: nothing stored, a request without a contact offered, opened on "yes".
"""
from __future__ import annotations

import pytest

from bot.assistant.components.latin_mash import is_latin_mash
from bot.present.render import faq_text
from bot.tickets import TicketStore
from tests.e2e.helpers import (assert_language, domain_response as response, joined, last_intent, texts,
                               tracker_slots)

pytestmark = pytest.mark.e2e

ASK_PERSON = {"fa": "می‌خوام با یکی از کارشناس‌هاتون صحبت کنم", "tr": "bir müşteri temsilcisiyle konuşmak istiyorum"}


def not_understood(replies, lang: str) -> bool:
    return response("utter_default", lang) in texts(replies)


def out_of_scope(replies, lang: str) -> bool:
    return response("utter_out_of_scope", lang) in texts(replies)


def delete_ticket(slots) -> None:
    if slots.get("ticket_id"):
        TicketStore().delete([slots["ticket_id"]])


# ------------------------------------------------------------------------- 1. sign-up and payment


@pytest.mark.parametrize("lang,message", [
    ("fa", "سلام، برای ثبت‌نام تو سایتتون چیکار باید بکنم؟ پولش رو هم چطوری بدم؟"),
    ("fa", "چطوری اکانت بسازم و بعدش هزینه رو واریز کنم؟"),
    ("fa", "پرداخت هزینهٔ سرورها به چه صورت انجام می‌شود؟"),
    ("tr", "merhaba, size nasıl kaydolabilirim, ödemeyi nasıl yapacağım?"),
    ("tr", "hesap oluşturup ödeme yapmak için ne yapmalıyım?"),
    ("tr", "kiraladığım GPU'nun parasını nasıl ödüyorum?"),
])
def test_sign_up_and_payment_get_their_answer(conversation, lang, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert last_intent(c) == "faq_signup_payment", joined(replies)
    assert faq_text("signup_payment", lang) in texts(replies), joined(replies)
    assert not out_of_scope(replies, lang)


def test_the_answer_names_no_payment_method_the_knowledge_lacks():
    for lang in ("fa", "tr"):
        answer = faq_text("signup_payment", lang).casefold()
        for method in ("paypal", "kripto", "bitcoin", "havale", "کارت به کارت", "شتاب", "ریال", "تومان"):
            assert method not in answer, (lang, method)


# ------------------------------------------------------------------------- 2. Latin keyboard mash


@pytest.mark.parametrize("message", ["zxmcn", "wqpeorit lkzjcvn", "mnbvcxz qwptoiu", "ghjtkrw zcxvbnq",
                                     "qwpoeiru"])
def test_latin_mash_is_mash(message):
    assert is_latin_mash(message)


@pytest.mark.parametrize("message", ["salam, gheymate H100 chande?", "mikhastam bedoonam llama 8b ro ba qlora",
                                     "merhaba, fiyat ne kadar", "khoda hafez", "mersi kheili mamnoon",
                                     "qwen 7b lora 4096", "xlsx dosyası", "fsdp", "hmmm", "tamam tesekkurler",
                                     "سلام qwpoeiru"])
def test_real_words_are_not_mash(message):
    assert not is_latin_mash(message)


@pytest.mark.parametrize("lang,opening,message", [
    ("fa", None, "wqpeorit lkzjcvn"),
    ("fa", "سلام، وقت بخیر", "mnbvcxz qwptoiu"),
    ("fa", "سلام، یه سؤال داشتم", "zxqwrtp"),
    ("tr", "merhaba, iyi günler", "ghjtkrw zcxvbnq"),
    ("tr", "selam", "pqwzrt mnxcvl"),
])
def test_latin_mash_is_not_understood_in_the_conversation_language(conversation, lang, opening, message):
    c = conversation()
    if opening:
        c.say(opening)
    replies = c.say(message)
    assert_language(replies, lang)
    assert last_intent(c) == "nlu_fallback", joined(replies)
    assert not_understood(replies, lang), joined(replies)
    assert not out_of_scope(replies, lang), joined(replies)


@pytest.mark.parametrize("message", ["salam, gheymate yek saat H100 chande?",
                                     "mikhastam llama 8b ro ba qlora train konam, che karti lazeme?"])
def test_finglish_is_still_understood(conversation, message):
    c = conversation()
    c.say("سلام")
    replies = c.say(message)
    assert last_intent(c) != "nlu_fallback", joined(replies)
    assert not not_understood(replies, "fa") and not out_of_scope(replies, "fa"), joined(replies)


# ------------------------------------------------------------------------- 3a. a yes with more words


@pytest.mark.parametrize("lang,answer", [
    ("fa", "آره حتماً، راه تماسم رو براتون می‌نویسم"),
    ("fa", "باشه قبول، شماره‌ام رو میدم"),
    ("tr", "olur tabii, iletişim bilgilerimi yazayım"),
    ("tr", "tamam, mail adresimi paylaşırım"),
])
def test_a_yes_with_more_words_asks_for_the_contact(conversation, lang, answer):
    c = conversation()
    c.say(ASK_PERSON[lang])
    assert tracker_slots(c)["requested_slot"] == "handoff_consent"
    replies = c.say(answer)
    assert_language(replies, lang)
    assert response("utter_consent_unclear", lang) not in texts(replies), joined(replies)
    assert response("utter_ask_handoff_contact", lang) in texts(replies), joined(replies)
    assert tracker_slots(c)["requested_slot"] == "handoff_contact"


# ------------------------------------------------------------------------- 3b. a name or a contact instead of yes


@pytest.mark.parametrize("lang,name_message,name,contact", [
    ("fa", "اسمم نگار صالحی است", "نگار صالحی", "negar.salehi@example.org"),
    ("tr", "adım Elif Arslan", "Elif Arslan", "elif.arslan@example.org"),
    ("tr", "Burak Demirtaş", "Burak Demirtaş", "@burak_dmr"),
    ("fa", "کاوه مرادی", "کاوه مرادی", "kaveh.moradi@example.org"),
])
def test_a_name_instead_of_yes_is_a_yes_and_goes_on_the_ticket(conversation, lang, name_message, name, contact):
    c = conversation()
    c.say(ASK_PERSON[lang])
    replies = c.say(name_message)
    assert_language(replies, lang)
    assert response("utter_consent_unclear", lang) not in texts(replies), joined(replies)
    assert response("utter_ask_handoff_contact", lang) in texts(replies), joined(replies)
    replies = c.say(contact)
    slots = tracker_slots(c)
    try:
        assert slots.get("ticket_id"), joined(replies)
        ticket = TicketStore().get(slots["ticket_id"])
        assert ticket.consent and ticket.contact == contact, ticket
        assert any(note.text == name for note in ticket.notes), ticket.notes
    finally:
        delete_ticket(slots)


@pytest.mark.parametrize("lang,mash", [("fa", "شسیبل شسیبل"), ("tr", "qwpzx mnbvc")])
def test_keyboard_mash_at_the_consent_question_is_no_name(conversation, lang, mash):
    c = conversation()
    c.say(ASK_PERSON[lang])
    replies = c.say(mash)
    assert response("utter_ask_handoff_contact", lang) not in texts(replies), joined(replies)
    assert tracker_slots(c)["requested_slot"] == "handoff_consent" and not tracker_slots(c).get("handoff_name")


@pytest.mark.parametrize("lang,contact", [("fa", "irani.sam@example.net"), ("tr", "@deniz_ozkan")])
def test_a_contact_instead_of_yes_opens_the_ticket_with_it(conversation, lang, contact):
    c = conversation()
    c.say(ASK_PERSON[lang])
    replies = c.say(contact)
    slots = tracker_slots(c)
    try:
        assert slots.get("ticket_id"), joined(replies)
        assert TicketStore().get(slots["ticket_id"]).contact == contact
    finally:
        delete_ticket(slots)


# ------------------------------------------------------------------------- 3c. a refusal opens nothing by itself


REFUSALS = [("fa", "نه، شماره‌ام رو نمی‌دم"), ("fa", "نمی‌خوام اطلاعات تماس بذارم"),
            ("tr", "hayır, numaramı vermeyeceğim"), ("tr", "iletişim bilgimi paylaşmak istemiyorum")]


@pytest.mark.parametrize("lang,refusal", REFUSALS)
def test_a_refusal_stores_nothing_and_a_yes_opens_a_request_without_contact(conversation, lang, refusal):
    c = conversation()
    c.say(ASK_PERSON[lang])
    replies = c.say(refusal)
    assert_language(replies, lang)
    assert response("utter_offer_ticket_without_contact", lang) in texts(replies), joined(replies)
    assert response("utter_consent_unclear", lang) not in texts(replies)
    slots = tracker_slots(c)
    assert not slots.get("ticket_id") and slots["requested_slot"] is None and not slots.get("handoff_contact")
    assert TicketStore().list(sender_id=c.sender) == []
    replies = c.say("بله" if lang == "fa" else "evet")
    slots = tracker_slots(c)
    try:
        assert slots.get("ticket_id"), joined(replies)
        assert response("utter_ticket_opened_anonymous", lang).split("{")[0] in joined(replies)
        ticket = TicketStore().get(slots["ticket_id"])
        assert not ticket.contact and not ticket.consent and ticket.language == lang
    finally:
        delete_ticket(slots)


@pytest.mark.parametrize("lang,refusal,no", [("fa", "نه، راه تماس نمی‌دم", "نه ممنون"),
                                             ("tr", "hayır, bilgi vermem", "hayır, gerek yok")])
def test_no_to_the_request_without_contact_opens_nothing(conversation, lang, refusal, no):
    c = conversation()
    c.say(ASK_PERSON[lang])
    c.say(refusal)
    replies = c.say(no)
    assert_language(replies, lang)
    assert response("utter_offer_declined", lang) in texts(replies), joined(replies)
    slots = tracker_slots(c)
    assert not slots.get("ticket_id"), slots
    assert TicketStore().list(sender_id=c.sender) == []


@pytest.mark.parametrize("lang,answer", [("fa", "نه، راه تماس نمیدم؛ همین‌جا جوابم رو بدید"),
                                         ("tr", "iletişim bilgisi vermiyorum, bu sohbetten yazın")])
def test_a_refusal_asking_for_an_answer_here_opens_the_request_at_once(conversation, lang, answer):
    c = conversation()
    c.say(ASK_PERSON[lang])
    replies = c.say(answer)
    slots = tracker_slots(c)
    try:
        assert slots.get("ticket_id"), joined(replies)
        assert response("utter_offer_ticket_without_contact", lang) not in texts(replies)
        assert not TicketStore().get(slots["ticket_id"]).contact
    finally:
        delete_ticket(slots)
