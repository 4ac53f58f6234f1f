"""End-to-end (REST, real servers): the KVKK notice is shown once per handoff.

The consent question comes again after a question answered in the middle of the handoff form (an FAQ, "hello");
repeating the whole notice each time buried the question. The first question of a handoff carries the notice, a
repeated one is short (kvkk_notice_shown, set by validate_handoff_form), and the next handoff starts with the
notice again. The expected texts are read from domain/handoff.yml, so the tests follow wording changes.
"""
from __future__ import annotations

from typing import List

import pytest
import yaml

from bot.tickets import TicketStore
from tests.e2e.helpers import assert_language, joined, payloads, texts, tracker_slots
from tests.servers import ROOT
import os
from bot.present.render import faq_text

pytestmark = pytest.mark.e2e

HANDOFF_DOMAIN = yaml.safe_load((ROOT / "domain" / "handoff.yml").read_text(encoding="utf-8"))
CONSENT_BUTTONS = ("/affirm", "/deny")


def consent_question(lang: str, notice_shown: bool) -> str:
    """The utter_ask_handoff_consent variant Rasa should pick for this language and notice state."""
    variants = HANDOFF_DOMAIN["responses"]["utter_ask_handoff_consent"]
    for variant in variants:
        condition = {c["name"]: c["value"] for c in variant.get("condition") or []}
        if condition == {"language": lang, "kvkk_notice_shown": notice_shown}:
            return variant["text"]
    assert lang == "fa" and not notice_shown, (lang, notice_shown)
    return next(v["text"] for v in variants if not v.get("condition"))   # the Persian full notice


def assert_asks_consent(replies: List[dict], lang: str, *, with_notice: bool) -> None:
    assert all(payload in payloads(replies) for payload in CONSENT_BUTTONS), joined(replies)
    assert consent_question(lang, notice_shown=not with_notice) in texts(replies), joined(replies)
    assert ("KVKK" in joined(replies)) == with_notice, joined(replies)


def faq(topic: str, lang: str) -> str:
    return faq_text(topic, lang, public_url=os.environ.get("ADVISOR_PUBLIC_URL"))


def test_the_notice_variants_are_distinct_and_the_short_one_has_no_notice():
    for lang in ("fa", "tr"):
        full, short = consent_question(lang, False), consent_question(lang, True)
        assert "KVKK" in full and "KVKK" not in short
        assert len(short) < len(full) / 2


def test_exactly_one_consent_variant_matches_each_language_and_notice_state():
    """Rasa picks at random among matching conditional variants: the conditions must not overlap."""
    from rasa.core.nlg.generator import ResponseVariationFilter

    variants = ResponseVariationFilter(HANDOFF_DOMAIN["responses"])
    for lang in ("fa", "tr"):
        for shown in (False, True):
            matching = variants.responses_for_utter_action(
                "utter_ask_handoff_consent", "rest", {"language": lang, "kvkk_notice_shown": shown})
            assert [v["text"] for v in matching] == [consent_question(lang, shown)], (lang, shown)


def test_turkish_notice_once_then_short_question_and_full_notice_in_the_next_handoff(conversation):
    c = conversation()
    store = TicketStore()
    tickets = []
    try:
        first = c.say("bir insanla görüşmek istiyorum")
        assert_language(first, "tr")
        assert_asks_consent(first, "tr", with_notice=True)

        after_faq = c.say("fiyatlara KDV dahil mi?")
        assert_language(after_faq, "tr")
        assert faq("prices_vat", "tr") in joined(after_faq)
        assert_asks_consent(after_faq, "tr", with_notice=False)
        assert tracker_slots(c)["requested_slot"] == "handoff_consent"

        c.say("hayır")  # round 4: a refusal offers a request without a contact; "evet" opens it
        done = c.say("evet")
        tickets.append(tracker_slots(c)["ticket_id"])
        assert tickets[-1] and tickets[-1] in joined(done)
        # Staff close the ticket; a later request is a new handoff, which starts with the notice again.
        store.set_status(tickets[-1], "closed", author="test")

        second = c.say("yine bir uzmanla görüşmek istiyorum")
        assert_language(second, "tr")
        assert_asks_consent(second, "tr", with_notice=True)
        again = c.say("merhaba")
        assert_asks_consent(again, "tr", with_notice=False)
        c.say("hayır")
        c.say("evet")
        tickets.append(tracker_slots(c)["ticket_id"])
        assert tickets[-1] != tickets[0]
    finally:
        store.delete([t for t in tickets if t])


def test_persian_notice_once_per_handoff_across_questions_and_a_goodbye(conversation):
    c = conversation()
    first = c.say("می‌خواهم با کارشناس صحبت کنم")
    assert_language(first, "fa")
    assert_asks_consent(first, "fa", with_notice=True)

    after_faq = c.say("قیمت‌ها با مالیات است؟")
    assert_language(after_faq, "fa")
    assert faq("prices_vat", "fa") in joined(after_faq)
    assert_asks_consent(after_faq, "fa", with_notice=False)
    after_hello = c.say("سلام")
    assert_asks_consent(after_hello, "fa", with_notice=False)

    left = c.say("بیخیال، خداحافظ")
    assert not any(payload in payloads(left) for payload in CONSENT_BUTTONS), joined(left)
    assert tracker_slots(c)["requested_slot"] is None

    # The handoff was left without a ticket; asking again is a new handoff with the notice.
    second = c.say("با پشتیبانی صحبت کنم")
    assert_language(second, "fa")
    assert_asks_consent(second, "fa", with_notice=True)
    assert tracker_slots(c).get("ticket_id") is None
