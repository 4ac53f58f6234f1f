"""End-to-end: conversation flow around offers, the handoff form and starting over (REST, real servers).

Each test is a gap found by reading transcripts as a customer would:
- a typed "yes" / "evet" / "آره" after the bot offered a person or a quote got "anything else?" instead of the
  handoff, and a typed "no" got the same general reply (data/rules/offers.yml, pending_offer slot);
- a question asked while the bot waited for the KVKK consent or the contact got "please answer yes or no" instead
  of an answer (generated handoff_form interruption rules, ValidateHandoffForm);
- starting over kept the language but must forget every value (actions/restart.py).
"""
from __future__ import annotations

import os
from typing import List

import pytest

from bot.present.render import faq_text
from bot.tickets import TicketStore
from tests.e2e.helpers import (assert_estimate, assert_language, expected_advice, joined, payloads,
                               tracker_slots)

pytestmark = pytest.mark.e2e

CONSENT_BUTTONS = ("/affirm", "/deny")
QUOTE_OFFER_BUTTONS = ("/request_quote", "/request_human")


def asks_for_consent(replies: List[dict]) -> bool:
    return all(payload in payloads(replies) for payload in CONSENT_BUTTONS)


def forget_ticket(conversation) -> None:
    """Tickets of the session action server go to its default database; leave it as it was."""
    ticket_id = tracker_slots(conversation).get("ticket_id")
    if ticket_id:
        TicketStore().delete([ticket_id])


def faq(topic: str, lang: str) -> str:
    return faq_text(topic, lang, public_url=os.environ.get("ADVISOR_PUBLIC_URL"))


# ------------------------------------------------------------------------------ a typed yes/no to an offer


def test_evet_after_the_quote_offer_starts_the_handoff_as_a_quote(conversation):
    c = conversation()
    estimate = c.say("70B modeli tam ince ayar yapmak istiyorum, 4096 token, bütçe sınırı yok")
    assert all(payload in payloads(estimate) for payload in QUOTE_OFFER_BUTTONS)
    replies = c.say("evet")
    assert_language(replies, "tr")
    assert asks_for_consent(replies), joined(replies)
    c.say("hayır")  # round 4: a refusal offers a request without a contact; "evet" opens it
    done = c.say("evet")
    assert_language(done, "tr")
    ticket_id = tracker_slots(c)["ticket_id"]
    assert ticket_id and ticket_id in joined(done)
    assert TicketStore().get(ticket_id).category in ("quote", "multi-gpu")
    forget_ticket(c)


def test_are_after_the_offer_of_a_person_following_two_misunderstood_turns(conversation):
    c = conversation()
    c.say("سلام")
    c.say("😂😂")
    offer = c.say("؟؟؟")
    assert "/request_human" in payloads(offer)
    replies = c.say("آره")
    assert_language(replies, "fa")
    assert asks_for_consent(replies), joined(replies)


def test_evet_after_are_you_a_bot(conversation):
    c = conversation()
    c.say("sen bot musun?")
    replies = c.say("evet")
    assert_language(replies, "tr")
    assert asks_for_consent(replies), joined(replies)


def test_are_after_a_model_size_we_cannot_estimate_starts_the_handoff(conversation):
    c = conversation()
    # A bare size beyond the presets (Llama 3.1 405B itself is a preset now).
    unsupported = c.say("یک مدل 405B را با QLoRA و ۴۰۹۶ توکن آموزش می‌دهم، چند تا جی‌پی‌یو می‌خواهد؟ بودجه مهم نیست")
    assert_language(unsupported, "fa")
    assert "405" in joined(unsupported) and "/request_human" in payloads(unsupported)
    replies = c.say("آره")
    assert asks_for_consent(replies), joined(replies)


def test_no_to_the_quote_offer_is_answered_politely_and_the_offer_expires(conversation):
    c = conversation()
    c.say("می‌خواهم یک مدل ۷۰ میلیاردی را به‌صورت کامل فاین‌تیون کنم با ۴۰۹۶ توکن، محدودیت بودجه ندارم")
    declined = c.say("نه ممنون")
    assert_language(declined, "fa")
    assert "کارشناس" in joined(declined) and not asks_for_consent(declined)
    assert tracker_slots(c).get("ticket_id") is None
    # The offer was answered: a later "yes" is not read as accepting it.
    later = c.say("آره")
    assert not asks_for_consent(later), joined(later)


def test_yes_to_the_offer_of_a_person_inside_the_estimate_form(conversation):
    c = conversation()
    c.say("merhaba, hangi gpu lazım bana?")
    c.say("???")
    offer = c.say("....")
    assert "/request_human" in payloads(offer)
    replies = c.say("evet")
    assert_language(replies, "tr")
    assert asks_for_consent(replies), joined(replies)
    assert tracker_slots(c)["requested_slot"] == "handoff_consent"


def test_no_to_the_offer_of_a_person_inside_the_estimate_form_keeps_the_form(conversation):
    c = conversation()
    c.say("merhaba, hangi gpu lazım bana?")
    c.say("???")
    c.say("....")
    replies = c.say("hayır")
    assert_language(replies, "tr")
    assert not asks_for_consent(replies)
    assert '/inform{"model_size_b":8}' in payloads(replies)      # the model question again
    after = c.say("llama 8b")
    assert '/inform{"method":"qlora"}' in payloads(after)


# ------------------------------------------------------------------------------ questions inside the handoff form


def test_question_while_waiting_for_consent_is_answered_and_the_consent_asked_again(conversation):
    c = conversation()
    c.say("bir insanla görüşmek istiyorum")
    replies = c.say("fiyatlara KDV dahil mi?")
    assert_language(replies, "tr")
    assert faq("prices_vat", "tr") in joined(replies)
    assert asks_for_consent(replies)
    contact_question = c.say("evet")
    assert "@" in joined(contact_question)
    done = c.say("@ahmet_dev")
    assert tracker_slots(c)["ticket_id"] in joined(done)
    forget_ticket(c)


def test_question_while_waiting_for_the_contact_is_answered_and_the_contact_asked_again(conversation):
    c = conversation()
    c.say("می‌خواهم با کارشناس صحبت کنم")
    c.say("بله")
    replies = c.say("قیمت‌ها با مالیات است؟")
    assert_language(replies, "fa")
    assert faq("prices_vat", "fa") in joined(replies)
    assert tracker_slots(c)["requested_slot"] == "handoff_contact"
    done = c.say("ali.rezaei@example.com")
    assert_language(done, "fa")
    assert tracker_slots(c)["ticket_id"] in joined(done)
    forget_ticket(c)


def test_goodbye_while_waiting_for_consent_leaves_the_handoff(conversation):
    c = conversation()
    c.say("کارشناس میخوام")
    replies = c.say("بیخیال، خداحافظ")
    assert_language(replies, "fa")
    assert not asks_for_consent(replies), joined(replies)
    assert tracker_slots(c)["requested_slot"] is None
    hello = c.say("سلام")
    assert "/estimate" in payloads(hello) and not asks_for_consent(hello)


def test_job_values_instead_of_the_consent_leave_the_handoff_for_the_estimate(conversation):
    c = conversation()
    c.say("bir insanla görüşmek istiyorum")
    replies = c.say("aslında önce fiyatı görmek istiyorum: llama 8b qlora 2048 token, bütçem 50 dolar")
    advice = expected_advice(model="llama-3.1-8b", method="qlora", seq_len=2048, budget_usd=50)
    assert_estimate(replies, "tr", best_card=advice.best.card_id, mentions=["Llama 3.1 8B", "2048"])
    assert not asks_for_consent(replies)
    assert tracker_slots(c).get("ticket_id") is None


# ------------------------------------------------------------------------------ starting over


def test_starting_over_forgets_the_values_and_keeps_the_language(conversation):
    c = conversation()
    c.say("Llama 8B QLoRA 2048 token, bütçem 50 dolar")
    assert tracker_slots(c)["estimate_summary"]
    restarted = c.say("/restart")
    assert_language(restarted, "tr")
    slots = tracker_slots(c)
    assert slots["language"] == "tr"
    assert all(slots.get(name) is None for name in ("model", "method", "seq_len", "budget", "estimate_summary"))
    # No language signal in "7B qlora": still Turkish; nothing remembered, so the form asks for the length.
    replies = c.say("7B qlora")
    assert_language(replies, "tr")
    assert '/inform{"seq_len":2048}' in payloads(replies)
    final = c.say("2048")
    assert '/inform{"budget_unlimited":true}' in payloads(final)      # the budget is asked again
    assert_estimate(c.say("60 dolar"), "tr", mentions=["2048"])


# ------------------------------------------------------------------------------ hello / thanks in the middle of a form


def test_thanks_in_the_middle_of_the_form_gets_a_short_answer_and_the_question_again(conversation):
    c = conversation()
    c.say("merhaba, hangi gpu lazım bana?")
    replies = c.say("tamam teşekkürler")
    assert_language(replies, "tr")
    # Not the after-estimate answer ("LoRA olursa?"): there is no estimate yet.
    assert "LoRA olursa" not in joined(replies)
    assert '/inform{"model_size_b":8}' in payloads(replies)


def test_hello_while_waiting_for_consent_is_short_and_the_consent_asked_again(conversation):
    c = conversation()
    c.say("با پشتیبانی صحبت کنم")
    replies = c.say("سلام")
    assert_language(replies, "fa")
    # Not the full introduction with its "GPU advice" buttons: the customer is in the middle of the handoff.
    assert "/estimate" not in payloads(replies)
    assert asks_for_consent(replies)
