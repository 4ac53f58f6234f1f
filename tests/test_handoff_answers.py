"""Answers to the handoff form's two questions said in words (issue 13 #6): a "yes" with the contact in the same
message opens the ticket at once; "I don't want to give a contact" / "answer me here" is a ticket without a contact,
never the contact question again. actions/handoff.py ValidateHandoffForm with bot.text.replies.declines_contact.
Sentences written for this test (the held-out conversations are never copied here)."""
from __future__ import annotations

from typing import Any, Dict

import pytest
from rasa_sdk.executor import CollectingDispatcher

from bot.text.replies import declines_contact
from tests.conftest import handoff_tracker

DOMAIN: Dict[str, Any] = {"slots": {}, "forms": {"handoff_form": {"required_slots": ["handoff_consent",
                                                                                     "handoff_contact"]}}}


async def answer(monkeypatch, text: str, intent: str, requested: str, slots=None):
    import actions.handoff as handoff
    from actions.handoff import ValidateHandoffForm

    monkeypatch.setattr(handoff, "_open_ticket", lambda sender: None)
    dispatcher = CollectingDispatcher()
    events = await ValidateHandoffForm().run(dispatcher, handoff_tracker(text, intent, requested, slots), DOMAIN)
    values = {e["name"]: e["value"] for e in events if e.get("event") == "slot"}
    return values, [m.get("response") for m in dispatcher.messages if m.get("response")]


@pytest.mark.parametrize("text, intent, contact", [
    ("tabii, mail adresim murat.demir@firma-ornek.com", "affirm", "murat.demir@firma-ornek.com"),
    ("onaylıyorum; telefonum 0533 765 43 21", "affirm", "+905337654321"),
    ("evet izin veriyorum, telegram @selin_ops", "affirm", "@selin_ops"),
    ("بله موافقم، ایمیل من procurement@nemoone.ir است", "affirm", "procurement@nemoone.ir"),
    ("حتما، شمارهٔ همکارم ۰۹۳۵ ۱۱۱ ۲۲۳۳ را ثبت کنید", "affirm", "+989351112233"),
    ("olur tabii kurumsal adresimiz bilgi@sirket-demo.com.tr", "inform", "bilgi@sirket-demo.com.tr"),
])
async def test_a_yes_with_the_contact_takes_both(monkeypatch, text, intent, contact):
    values, said = await answer(monkeypatch, text, intent, "handoff_consent")
    assert values["handoff_consent"] is True and values["handoff_contact"] == contact
    assert values["requested_slot"] is None and said == []  # nothing more to ask: the ticket opens


@pytest.mark.parametrize("text, intent", [
    ("iletişim bilgimi paylaşmak istemiyorum, sohbetten devam edelim", "inform"),
    ("gerek yok, buradan cevap verin yeter", "out_of_scope"),
    ("numara vermeyeyim, burada yazışalım", "inform"),
    ("ترجیح میدم شماره ندم، توی همین چت پیام بدید", "inform"),
    ("نمی‌خواهم ایمیلم را بدهم؛ همین‌جا پاسخ بدهید", "request_human"),
    ("لازم نیست، همینجا جواب بدین", "affirm"),
    ("buradan dönüş yapın lütfen", "inform"),
    ("numaramı vermeyi tercih etmiyorum", "inform"),
    ("در همین گفت‌وگو جواب بدید کافیه", "inform"),
])
async def test_no_contact_in_words_is_a_ticket_without_one(monkeypatch, text, intent):
    values, said = await answer(monkeypatch, text, intent, "handoff_contact", {"handoff_consent": True})
    assert values["handoff_consent"] is False and values["handoff_contact"] is None
    assert values["requested_slot"] is None and "utter_invalid_contact" not in said


@pytest.mark.parametrize("text, intent", [
    ("iletişim bilgisi bırakmak istemiyorum", "inform"),
    ("نه، نمی‌خوام راه تماس بدم", "inform"),
    ("lazım değil, bu sohbet üzerinden devam edin", "inform"),
])
async def test_no_contact_in_words_answers_the_consent_question(monkeypatch, text, intent):
    values, said = await answer(monkeypatch, text, intent, "handoff_consent")
    assert values["handoff_consent"] is False and values["requested_slot"] is None and said == []


async def test_a_yes_that_says_here_too_still_asks_for_the_contact(monkeypatch):
    values, _ = await answer(monkeypatch, "evet, buradan da yazabilirsiniz", "affirm", "handoff_consent")
    assert values["handoff_consent"] is True and values["requested_slot"] == "handoff_contact"


@pytest.mark.parametrize("text", ["evet", "tamam devam", "hmm bilmiyorum", "باشه", "llama 8b qlora", "ali@x.ir",
                                  "telefonla arayın", ""])
def test_declines_contact_is_not_read_into_other_answers(text):
    assert declines_contact(text) is None


async def test_an_unreadable_contact_still_gets_the_hint(monkeypatch):
    values, said = await answer(monkeypatch, "mailim şu: murat at firma nokta com", "inform", "handoff_contact",
                                {"handoff_consent": True})
    assert said == ["utter_invalid_contact"] and values["requested_slot"] == "handoff_contact"


@pytest.mark.parametrize("requested, slots", [("handoff_consent", {}), ("handoff_contact", {"handoff_consent": True})])
@pytest.mark.parametrize("text, intent", [
    ("bu sohbetin kayıtları ne kadar süre saklanıyor?", "faq_kvkk"),
    ("همین چت‌ها کجا ذخیره میشن؟", "faq_kvkk"),
])
async def test_a_question_that_names_this_chat_is_answered_first(monkeypatch, requested, slots, text, intent):
    values, said = await answer(monkeypatch, text, intent, requested, slots)
    # Only requested_slot: the rule answers the question, then the form asks its question again.
    assert set(values) == {"requested_slot"} and values["requested_slot"] == requested and said == []


async def test_a_thanks_that_declines_is_a_decline(monkeypatch):
    values, _ = await answer(monkeypatch, "gerek yok, teşekkürler", "thank", "handoff_contact",
                             {"handoff_consent": True})
    assert values["handoff_consent"] is False and values["requested_slot"] is None


@pytest.mark.parametrize("requested, slots", [("handoff_consent", {}), ("handoff_contact", {"handoff_consent": True})])
@pytest.mark.parametrize("text, intent", [("gerek yok, iyi günler", "goodbye"), ("بیخیال، فعلا خدانگهدار", "goodbye")])
async def test_a_goodbye_leaves_the_handoff_without_a_ticket(monkeypatch, requested, slots, text, intent):
    values, said = await answer(monkeypatch, text, intent, requested, slots)
    assert set(values) == {"requested_slot"} and said == []  # the goodbye rule answers; no ticket
