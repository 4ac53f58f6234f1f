"""End-to-end (REST, real servers): issue 13 §3-§5 and §7 - the customer gets an answer to what they asked.

Sentences written for these tests, both languages:
- a billing or service complaint: an apology and the handoff (a ticket with the complaint as its trigger), never
  the "yes, we issue invoices" FAQ;
- "what can you do?": the bot's abilities, not the platform description;
- "how do I order several GPUs?": the process first and an offer; no handoff starts unless the customer says yes;
- "say that in Persian/Turkish": the language switches and the previous answer comes again in it;
- the first message without a language signal takes the channel's locale (REST metadata as the widget and
  Telegram send it), then Persian;
- comparisons and the customer's own card reach their actions (H4) and the estimate form carries on after them.
"""
from __future__ import annotations

from typing import List

import pytest

from bot.tickets import TicketStore
from tests.e2e.helpers import assert_language, joined, payloads, tracker_slots
import os
from bot.present.render import faq_text

pytestmark = pytest.mark.e2e

CONSENT_BUTTONS = ("/affirm", "/deny")


def asks_for_consent(replies: List[dict]) -> bool:
    return all(payload in payloads(replies) for payload in CONSENT_BUTTONS)


def faq(topic: str, lang: str) -> str:
    return faq_text(topic, lang, public_url=os.environ.get("ADVISOR_PUBLIC_URL"))


# ------------------------------------------------------------------------------------------------ complaints


@pytest.mark.parametrize("lang,complaint,apology", [
    ("fa", "این ماه دو تا فاکتور برای یک اجاره برام صادر شده و پولش هم دو بار کم شده", "متأسفم"),
    ("tr", "Geçen ayki faturada kullanmadığımız 20 saat de var, bu kabul edilemez", "üzgünüm"),
])
def test_a_billing_complaint_is_apologised_for_and_handed_over(conversation, lang, complaint, apology):
    c = conversation()
    replies = c.say(complaint)
    text = joined(replies)
    assert_language(replies, lang)
    assert apology in text, text
    assert faq("invoice", lang) not in text
    assert asks_for_consent(replies), text
    c.say("نه" if lang == "fa" else "hayır")  # round 4: a request without a contact is offered, "yes" opens it
    done = c.say("بله" if lang == "fa" else "evet")
    ticket_id = tracker_slots(c)["ticket_id"]
    assert ticket_id and ticket_id in joined(done)
    ticket = TicketStore().get(ticket_id)
    assert (ticket.trigger, ticket.category) == ("complaint", "complaint")
    TicketStore().delete([ticket_id])


@pytest.mark.parametrize("lang,start,complaint", [
    ("fa", "می‌خواهم Llama 3.1 8B را فاین‌تیون کنم", "راستش سرور قبلی‌ام وسط کار خاموش شد و هزینه‌اش را هم گرفتید"),
    ("tr", "Llama 3.1 8B eğitmek istiyorum", "bu arada dün sunucum eğitim ortasında kapandı ve ücret yine kesildi"),
])
def test_a_complaint_in_the_middle_of_the_estimate_hands_over_with_the_values(conversation, lang, start, complaint):
    c = conversation()
    c.say(start)
    replies = c.say(complaint)
    assert_language(replies, lang)
    assert asks_for_consent(replies), joined(replies)
    assert tracker_slots(c)["model_id"] == "llama-3.1-8b"   # the ticket will carry what was said


# ------------------------------------------------------------------------------------------------ capabilities


@pytest.mark.parametrize("lang,question", [
    ("fa", "جدا از پیشنهاد کارت گرافیک، دیگر در چه کارهایی می‌توانی کمکم کنی؟"),
    ("tr", "GPU önermek dışında başka hangi konularda yardımcı olabiliyorsun?"),
])
def test_what_can_you_do_gets_the_bots_abilities(conversation, lang, question):
    c = conversation()
    replies = c.say(question)
    text = joined(replies)
    assert_language(replies, lang)
    assert faq("platform", lang) not in text
    assert "VRAM" in text and "/estimate" in payloads(replies), text


# ------------------------------------------------------------------------------------------------ ordering


@pytest.mark.parametrize("lang,question,process_word,yes", [
    ("fa", "برای اجاره یک سرور با چهار کارت H100 به مدت یک ماه، مراحل سفارش چیست؟", "پیش‌فاکتور", "بله"),
    ("tr", "Bir aylığına 4 H100'lü bir sunucu kiralamak için sipariş adımları neler?", "proforma", "evet"),
])
def test_ordering_several_gpus_explains_the_process_and_only_offers_the_handoff(
        conversation, lang, question, process_word, yes):
    c = conversation()
    replies = c.say(question)
    text = joined(replies)
    assert_language(replies, lang)
    assert process_word in text, text
    assert "/request_quote" in payloads(replies)
    assert not asks_for_consent(replies), "a handoff the customer did not ask for"
    accepted = c.say(yes)
    assert asks_for_consent(accepted), joined(accepted)


# ------------------------------------------------------------------------------------------------ language


@pytest.mark.parametrize("first_lang,question,topic,switch,new_lang", [
    ("tr", "Checkpoint'lerim sunucu kapanınca kaybolur mu?", "checkpoints", "Bunu bir de Farsça anlatır mısın?",
     "fa"),
    ("fa", "قیمت‌ها با مالیات حساب شده یا بدون مالیات؟", "prices_vat", "میشه همین را به ترکی هم بنویسی؟", "tr"),
])
def test_a_language_switch_repeats_the_last_answer_in_the_new_language(
        conversation, first_lang, question, topic, switch, new_lang):
    c = conversation()
    first = c.say(question)
    assert_language(first, first_lang)
    if faq(topic, first_lang) not in joined(first):
        pytest.fail(f"the FAQ was not recognised: {joined(first)[:300]!r}")
    replies = c.say(switch)
    assert_language(replies, new_lang)
    assert faq(topic, new_lang) in joined(replies), joined(replies)
    assert faq("support_languages", new_lang) not in joined(replies)
    assert tracker_slots(c)["language"] == new_lang


@pytest.mark.parametrize("start,switch,new_lang", [
    ("Llama 3.1 8B'yi QLoRA ile eğitmek istiyorum", "Farsça devam edebilir miyiz?", "fa"),
    ("Llama 3.1 8B رو با QLoRA آموزش میدم", "از اینجا به بعد ترکی بنویس لطفاً", "tr"),
])
def test_a_language_switch_inside_the_form_asks_the_question_in_the_new_language(conversation, start, switch,
                                                                                 new_lang):
    c = conversation()
    c.say(start)
    replies = c.say(switch)
    assert_language(replies, new_lang)
    assert "/inform" in " ".join(payloads(replies))          # the form's question (seq_len) again, with buttons
    assert tracker_slots(c)["model_id"] == "llama-3.1-8b"


@pytest.mark.parametrize("metadata,lang", [
    ({"language_hint": "tr"}, "tr"),            # the widget on a Turkish browser, Telegram's language_code "tr"
    ({"locale": "tr-TR"}, "tr"),
    ({"locale": "de-DE"}, "fa"),                # neither language: Persian
    (None, "fa"),
])
def test_a_first_message_without_a_language_signal_follows_the_channel_locale(conversation, metadata, lang):
    c = conversation()
    replies = c.say("Llama 3.1 8B QLoRA", metadata=metadata)
    assert_language(replies, lang)
    assert tracker_slots(c)["language"] == lang


def test_a_typed_language_beats_the_locale(conversation):
    c = conversation()
    replies = c.say("سلام، Llama 3.1 8B با QLoRA", metadata={"locale": "tr-TR"})
    assert_language(replies, "fa")


# ------------------------------------------------------------------------------------------------ H4's actions


@pytest.mark.parametrize("lang,start,compare", [
    ("fa", "Llama 3.1 8B رو با طول ۲۰۴۸ توکن آموزش میدم", "LoRA بگیرم یا QLoRA، کدوم برای این کار ارزون‌تره؟"),
    ("tr", "Llama 3.1 8B'yi 2048 token ile eğiteceğim", "bu iş için LoRA mı daha ucuz olur QLoRA mı?"),
])
def test_a_comparison_in_the_middle_of_the_form_is_answered_and_the_form_carries_on(conversation, lang, start,
                                                                                   compare):
    c = conversation()
    c.say(start)
    replies = c.say(compare)
    text = joined(replies)
    assert_language(replies, lang)
    assert "LoRA" in text and "QLoRA" in text and "GB" in text, text
    assert tracker_slots(c)["requested_slot"] is not None        # the form is still waiting for its question
    assert "/inform" in " ".join(payloads(replies))


@pytest.mark.parametrize("lang,question,card", [
    ("fa", "خودم یک RTX 4090 دارم؛ Llama 3.1 8B با QLoRA رویش جا می‌شود؟", "4090"),
    ("tr", "Evde bir RTX 3090'ım var, Mistral 7B'yi QLoRA ile eğitmeye yeter mi?", "3090"),
])
def test_the_customers_own_card_gets_an_answer_for_that_card(conversation, lang, question, card):
    c = conversation()
    replies = c.say(question)
    text = joined(replies)
    assert_language(replies, lang)
    assert card in text and "GB" in text, text
    assert tracker_slots(c)["own_gpu"]


# ------------------------------------------------------------------------------------ closings and keyboard mash

NOT_UNDERSTOOD = {"fa": "متوجه نشدم", "tr": "anlayamadım"}


@pytest.mark.parametrize("lang,mash", [("fa", "شسیب لاتن"), ("tr", "hjkl fdsa")])
def test_keyboard_mash_gets_the_did_not_understand_answer(conversation, lang, mash):
    c = conversation()
    c.say("سلام" if lang == "fa" else "merhaba")
    replies = c.say(mash)
    assert_language(replies, lang)
    assert NOT_UNDERSTOOD[lang] in joined(replies), joined(replies)


@pytest.mark.parametrize("lang,closing,returned", [
    ("fa", "خیلی ممنون از راهنمایی، شب خوش", "شب شما هم خوش"),
    ("tr", "tamamdır, şimdilik bu kadar, iyi geceler", "Size de iyi geceler"),
])
def test_a_closing_with_a_wish_is_answered_in_kind(conversation, lang, closing, returned):
    c = conversation()
    c.say("فرق LoRA و QLoRA چیه؟" if lang == "fa" else "LoRA ile QLoRA farkı nedir?")
    replies = c.say(closing)
    assert_language(replies, lang)
    assert returned in joined(replies) and NOT_UNDERSTOOD[lang] not in joined(replies), joined(replies)
