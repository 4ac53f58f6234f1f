"""Handoff to support staff: the consent/contact form and action_open_ticket (stores a ticket via bot.tickets).

Flow (data/rules/handoff.yml): request_human / request_quote (also offered by action_estimate when no single card
fits, and by the fallback after repeated misunderstanding) -> utter_handoff_intro -> handoff_form asks for KVKK
consent and, with consent, a contact -> action_open_ticket gives the ticket number. Staff then answer from the
staff page (bot/staff), which pauses the bot and resumes it when the ticket is closed.
"""
from __future__ import annotations

import asyncio
import logging
import os
import threading
from typing import Any, Dict, List, Optional, Text

from rasa_sdk import Action, Tracker
from rasa_sdk.events import EventType, SlotSet
from rasa_sdk.executor import CollectingDispatcher
from rasa_sdk.forms import REQUESTED_SLOT, FormValidationAction
from rasa_sdk.types import DomainDict

from actions.common import actions_before_form_run, conversation_language, interrupts_handoff, latest_intent
from actions.handoff_answers import agrees_to_contact, decline_labels, name_in_answer
from bot.tickets.models import Message, Ticket, TicketDraft
from bot.tickets.notify import send_staff_notification
from bot.privacy import find_pii, install_log_redaction, parse_contact
from bot.tickets.priority import categorize
from bot.tickets.store import UNAVAILABLE, TicketStore
from bot.text.replies import declines_contact

logger = logging.getLogger(__name__)

# User messages and contacts pass through this process's logs (rasa_sdk debug logging).
install_log_redaction()

HANDOFF_TRIGGERS = ("request_human", "request_quote", "complaint")  # complaint: data/rules/dialogue.yml
# The handoff form's questions (domain/handoff.yml, forms.handoff_form), and the slot that says the consent
# question with the full KVKK notice was already asked in this handoff.
HANDOFF_FORM_SLOTS = ("handoff_consent", "handoff_contact")
KVKK_NOTICE_SHOWN = "kvkk_notice_shown"
# Slots a ticket carries (names fixed in docs/architecture.md), in the order staff read them.
TICKET_SLOTS = ("model", "model_id", "model_size_b", "method", "seq_len", "budget", "budget_usd", "budget_unlimited",
                "examples", "avg_tokens", "total_tokens", "epochs", "gpus",
                # issue 13 values staff need too (shown as sentences by bot/tickets/texts.py)
                "hourly_cap", "hourly_cap_vat", "budget_period", "own_gpu", "custom_arch_label")
FALLBACK_ACTIONS = ("action_default_fallback", "action_two_stage_fallback")
# The fallback offers a person after two failed turns (actions/fallback.py).
FAILED_TURNS_FOR_HANDOFF = 2
# pending_offer after a refused contact: "shall I open a request without one?" (actions/language.py OFFERS).
NO_CONTACT_OFFER = "no_contact"
SPOOL_FLUSH_INTERVAL_S = float(os.environ.get("TICKETS_SPOOL_FLUSH_S", "30"))

_store: Optional[TicketStore] = None
_store_lock = threading.Lock()


def ticket_store() -> TicketStore:
    """One store per action-server process, with the periodic spool flusher running."""
    global _store
    with _store_lock:
        if _store is None:
            _store = TicketStore(on_created=send_staff_notification)
            _store.start_periodic_flush(SPOOL_FLUSH_INTERVAL_S)
        return _store


def _open_ticket(sender_id: str) -> Optional[Ticket]:
    try:
        return ticket_store().open_ticket_for(sender_id)
    except UNAVAILABLE:
        return None  # cannot check; better a second ticket than none


class ValidateHandoffForm(FormValidationAction):
    """Consent first; the contact only with consent. Every answer is read here, so the form never rejects a turn."""

    def name(self) -> Text:
        return "validate_handoff_form"

    async def run(self, dispatcher: CollectingDispatcher, tracker: Tracker, domain: DomainDict) -> List[EventType]:
        consent = tracker.get_slot("handoff_consent")
        contact = tracker.get_slot("handoff_contact")
        updates: Dict[Text, Any] = {}
        answers = self._answers_the_form(tracker)
        if answers:
            updates = self.read_answer(dispatcher, tracker, tracker.get_slot(REQUESTED_SLOT))
            consent = updates.get("handoff_consent", consent)
            contact = updates.get("handoff_contact", contact)
        elif tracker.get_slot(REQUESTED_SLOT) is None:
            if await asyncio.to_thread(_open_ticket, tracker.sender_id) is not None:
                # Activation while a ticket of this conversation is still open: no questions, the action says so
                # (and adds the message to the ticket). Resuming after a question answered in between -
                # requested_slot already set - was checked then.
                return [SlotSet(REQUESTED_SLOT, None)]
            updates = self._contact_with_the_request(tracker, contact)
            contact = updates.get("handoff_contact", contact)
            consent = updates.get("handoff_consent", consent)

        if consent is None:
            next_slot: Optional[str] = "handoff_consent"
        elif consent and not contact:
            next_slot = "handoff_contact"
        else:
            next_slot = None
        events: List[EventType] = [SlotSet(k, v) for k, v in updates.items()]
        if updates or not answers:
            # Not when the answer is left to a rule (no updates): any slot event would stop Rasa rejecting the turn.
            events += self._notice_events(tracker)
        return events + [SlotSet(REQUESTED_SLOT, next_slot)]

    @staticmethod
    def _contact_with_the_request(tracker: Tracker, contact: Optional[str]) -> Dict[Text, Any]:
        """ "I'd like to talk to someone, my number is ...", "ok, I want the quote, mail: ...": a contact typed into
        the request (or the yes to the offer) is given as clearly as one typed after the consent question, so the
        ticket opens in this turn with it and nothing is asked (round 9; the confirmation carries the short KVKK
        note, utter_ticket_contact_kvkk). A message that also refuses ("don't call 0532...") keeps nothing and
        consent is asked as before."""
        if contact:
            return {}
        text = (tracker.latest_message.get("text") or "").strip()
        found = contact_in_sentence(text)
        if found is None or decline_labels(text):
            return {}
        return {"handoff_contact": found.value, "handoff_consent": True}

    @staticmethod
    def _notice_events(tracker: Tracker) -> List[EventType]:
        """kvkk_notice_shown for the consent question about to be asked (utter_ask_handoff_consent variants).

        A requested slot of this form means the question, with its notice, was asked earlier in this handoff, so
        it comes back short; anything else (none, or the estimate form's) means a new handoff: the full notice.
        Decided here because this action runs on every form turn anyway; a separate ask action cost a round trip.
        """
        shown = tracker.get_slot(REQUESTED_SLOT) in HANDOFF_FORM_SLOTS
        if tracker.get_slot(KVKK_NOTICE_SHOWN) is shown:
            return []
        return [SlotSet(KVKK_NOTICE_SHOWN, shown)]

    def _answers_the_form(self, tracker: Tracker) -> bool:
        """True when the user has just answered one of the form's questions.

        On activation the last action is utter_handoff_intro, not action_listen.
        """
        actions = actions_before_form_run(tracker, self.form_name())
        return bool(actions) and actions[-1] == "action_listen"

    def read_answer(self, dispatcher: CollectingDispatcher, tracker: Tracker,
                    requested: Optional[str]) -> Dict[Text, Any]:
        intent = latest_intent(tracker)
        text = (tracker.latest_message.get("text") or "").strip()
        if decline_labels(text) and _gives_estimate_values(intent, text):
            # "No, never mind - what does Mistral 7B LoRA need?": nothing kept; Rasa rejects the form turn and the
            # estimate form answers, after a short line that nothing was passed on (round 9, declined_offer.py).
            return {}
        if requested in ("handoff_consent", "handoff_contact") and _declined(intent, text) == "cancel":
            # "No, I won't give my number, forget it": the request itself is dropped, so no ticket at all (the
            # consent rules stand: nothing of the message is kept). action_open_ticket says so (issue 21, round 3).
            return {"handoff_consent": False, "handoff_contact": None, "handoff_cancelled": True}
        if requested == "handoff_consent":
            # A message the NLU found no words in (keyboard mash, emoji) is never a name.
            typed = "" if _no_words(tracker) else typed_text(tracker) or text
            return self._read_consent(dispatcher, intent, text, typed)
        if requested == "handoff_contact":
            return self._read_contact(dispatcher, intent, text)
        return {}

    @staticmethod
    def _read_consent(dispatcher: CollectingDispatcher, intent: Optional[str], text: str,
                      typed: str = "") -> Dict[Text, Any]:
        declined = _declined(intent, text)
        if _refuses(intent, declined, text):
            # A refusal is a refusal whatever else the message carries ("istemiyorum, beni 0532... numaradan
            # aramayın"): no consent and no contact kept (issue 20 finding 3).
            return _refusal(text)
        contact = contact_in_sentence(text)
        if contact is not None:
            # Typing a contact right after the notice answers the question as clearly as "yes", also inside
            # a "yes" ("evet kabul, mailim ..."): the ticket opens at once, the contact is not asked again.
            return {"handoff_consent": True, "handoff_contact": contact.value}
        name = name_in_answer(typed) if typed else None
        if name is not None:
            # "adım Deniz Kaya", «اسمم سارا رضایی است»: a yes as clear as a contact; the name goes on the ticket
            # and the contact is asked next (issue 21, round 4).
            return {"handoff_consent": True, "handoff_name": name}
        if declined == "here" and intent != "affirm":
            # "Just answer here" in words, whatever the classifier made of it ("evet, buradan da
            # yazabilirsiniz" is a yes: the contact question follows).
            return {"handoff_consent": False}
        if intent == "affirm":
            return {"handoff_consent": True}
        if interrupts_handoff(intent) or intent == "goodbye" or _gives_estimate_values(intent, text):
            # No value: Rasa rejects the form turn, and a rule answers the question (then the form asks for the
            # consent again), says goodbye, or leaves the handoff for the estimate form when the message
            # carries job values ("LoRA olursa?", "llama 8b qlora") (data/rules/interruptions.yml, handoff.yml).
            return {}
        if agrees_to_contact(text):
            # "olur, bilgilerimi vereyim", «باشه، اطلاعاتم رو میدم»: a yes with more words, which the classifier
            # did not read as affirm (issue 21, round 4).
            return {"handoff_consent": True}
        # "I want a person, not a robot" again: the handoff is under way, and the question is what it needs.
        dispatcher.utter_message(response=_unclear_consent_response(intent))
        # A SlotSet (even to None) keeps Rasa from rejecting the form, so the question is asked again.
        return {"handoff_consent": None}

    @staticmethod
    def _read_contact(dispatcher: CollectingDispatcher, intent: Optional[str], text: str) -> Dict[Text, Any]:
        declined = _declined(intent, text)
        if _refuses(intent, declined, text):
            # "No", or a refusal in words, also when a number comes with it ("vermek istemiyorum, 0532...'yi
            # aramayın"): nothing kept; a request without a contact is offered (or opened when they asked to be
            # answered here).
            return {**_refusal(text), "handoff_contact": None}
        contact = contact_in_sentence(text)
        if contact is not None:
            return {"handoff_contact": contact.value}
        if declined:
            # "Answer me here": no contact, the ticket is answered in this chat.
            return {"handoff_consent": False, "handoff_contact": None}
        if interrupts_handoff(intent) or intent == "goodbye":
            return {}
        dispatcher.utter_message(response="utter_invalid_contact")
        return {"handoff_contact": None}


_CONTACT_KINDS = ("email", "telegram", "phone")


def _no_words(tracker: Tracker) -> bool:
    """The NLU's intent guard found nothing to read (bot.assistant.components: nlu_fallback at confidence 1)."""
    intent = tracker.latest_message.get("intent") or {}
    return intent.get("name") == "nlu_fallback" and float(intent.get("confidence") or 0) >= 1.0


def typed_text(tracker: Tracker) -> str:
    """The latest message as the customer typed it: the NLU lower-cases the parsed text (a name keeps its case)."""
    for event in reversed(tracker.events):
        if event.get("event") == "user":
            return (event.get("text") or "").strip()
    return ""


def _refusal(text: str) -> Dict[Text, Any]:
    """No consent. A refusal that also asks to be answered here ("vermek istemiyorum, buradan yazın") opens the
    request without a contact at once; a plain refusal ("no, I won't give my number") opens nothing:
    action_open_ticket says nothing was stored and offers such a request (issue 21, round 4)."""
    if "here" in decline_labels(text):
        return {"handoff_consent": False, "handoff_name": None}
    return {"handoff_consent": False, "handoff_name": None, "handoff_refused": True}


def contact_in_sentence(text: str):
    """A contact typed alone or inside a sentence ("e-postam deniz@example.com, telefonu da verdim",
    "ایمیلم ali@x.ir هست"): the whole message first, then each e-mail, Telegram username and phone number
    bot.privacy finds in it, in that order; the first one bot.privacy.parse_contact accepts (None when none)."""
    contact = parse_contact(text)
    if contact is not None or not isinstance(text, str):
        return contact
    found = [f for f in find_pii(text) if f.kind in _CONTACT_KINDS]
    for kind in _CONTACT_KINDS:
        for finding in found:
            if finding.kind == kind:
                contact = parse_contact(text[finding.start:finding.end])
                if contact is not None:
                    return contact
    return None


def _refuses(intent: Optional[str], declined: Optional[str], text: str) -> bool:
    """A "no" (button or classifier) or a refusal in words. A message that is nothing but a contact is never one,
    whatever the classifier made of it ("@ayse_yilmaz" read as deny): typing it is the answer."""
    if declined == "refuse":
        return True
    return intent == "deny" and parse_contact(text) is None


def _unclear_consent_response(intent: Optional[str]) -> str:
    return "utter_handoff_under_way" if intent in HANDOFF_TRIGGERS else "utter_consent_unclear"


def add_to_open_ticket(ticket_id: str, tracker: Tracker) -> bool:
    """The customer's latest message (a name, when they can be reached, more detail) goes onto their open ticket,
    so staff read it there; False when it is only a button or the store cannot take it."""
    text = (tracker.latest_message.get("text") or "").strip()
    if not text or text.startswith("/"):
        return False
    try:
        ticket_store().add_note(ticket_id, text, author="customer", kind="note")
    except (ValueError, KeyError, *UNAVAILABLE):
        logger.warning("could not add a message to ticket %s", ticket_id)
        return False
    return True


def _add_name(ticket_id: str, name: str) -> None:
    try:
        ticket_store().add_note(ticket_id, name, author="customer", kind="note")
    except (ValueError, KeyError, *UNAVAILABLE):
        logger.warning("could not add the customer's name to ticket %s", ticket_id)


def _notice_shown_in_this_handoff(tracker: Tracker) -> bool:
    """The consent question (with or without its full notice) was asked since this hand-over began."""
    for event in reversed(tracker.events):
        if event.get("event") == "action" and event.get("name") == "utter_handoff_intro":
            return False
        if event.get("event") == "bot" and (event.get("metadata") or {}).get("utter_action") \
                == "utter_ask_handoff_consent":
            return True
    return False


def _declined(intent: Optional[str], text: str) -> Optional[str]:
    """bot.text.replies.declines_contact, except in a question a rule answers ("bu sohbetin kaydı tutuluyor mu?"
    names "this chat" but asks about KVKK): that question is answered first, then the form asks again; and except
    in a goodbye ("gerek yok, hoşça kalın"), which leaves the handoff without a ticket."""
    from bot.text.questions import is_question

    declined = declines_contact(text)
    if declined and (intent == "goodbye" or interrupts_handoff(intent) and is_question(text)):
        return None
    return declined


def _gives_estimate_values(intent: Optional[str], text: str) -> bool:
    """An estimate request or a changed value instead of an answer to the consent question."""
    if intent not in ("inform", "estimate"):
        return False
    from bot.text.parse import parse_values

    values = parse_values(text)
    return any(getattr(values, name, None) not in (None, False)
               for name in ("model_id", "model_size_b", "method", "seq_len", "budget_usd", "budget_unlimited"))


def _trigger(tracker: Tracker) -> str:
    """What started the handoff: request_quote, request_human, or fallback (repeated misunderstanding)."""
    trigger = _asked_trigger(tracker)
    if trigger == "request_human":
        failed = tracker.get_slot("failed_turns") or 0
        recent = [e.get("name") for e in tracker.events[-40:] if e.get("event") == "action"]
        if failed >= FAILED_TURNS_FOR_HANDOFF or any(name in FALLBACK_ACTIONS for name in recent):
            return "fallback"
    return trigger


def _asked_trigger(tracker: Tracker) -> str:
    """The latest request for a person, a quote or a complaint, or a typed "yes" to the offer of one."""
    offer_answered = None  # pending_offer set right after the user message being looked at (actions/language.py)
    for event in reversed(tracker.events):
        if event.get("event") == "slot" and event.get("name") == "pending_offer":
            offer_answered = offer_answered or event.get("value")
            continue
        if event.get("event") != "user":
            continue
        intent = ((event.get("parse_data") or {}).get("intent") or {}).get("name")
        if intent in HANDOFF_TRIGGERS:
            return intent
        if intent == "affirm" and offer_answered == NO_CONTACT_OFFER:
            # "Yes" to a request without a contact: the request before the refusal is what started the handoff.
            offer_answered = None
            continue
        if intent == "affirm" and offer_answered:
            # A typed "yes" to the offer of a quote or a person (data/rules/offers.yml).
            return "request_quote" if offer_answered == "quote" else "request_human"
        offer_answered = None
    return "request_human"


def _excerpt(tracker: Tracker) -> List[Message]:
    """User, bot and staff messages of the conversation (the store keeps the last ones, masked)."""
    out = []
    for event in tracker.events:
        kind, text = event.get("event"), event.get("text")
        if kind not in ("user", "bot") or not text:
            continue
        # Only a bot event can be a staff line (the staff page sends replies as bot events); a customer's own
        # message claiming metadata.staff stays a customer line (security review finding 4).
        role = "staff" if kind == "bot" and (event.get("metadata") or {}).get("staff") else kind
        out.append(Message(role=role, text=text, at=event.get("timestamp")))
    return out


def build_draft(tracker: Tracker) -> TicketDraft:
    slots = {name: tracker.get_slot(name) for name in TICKET_SLOTS if tracker.get_slot(name) not in (None, "")}
    estimate = tracker.get_slot("estimate_summary")
    estimate = estimate if isinstance(estimate, dict) else None
    cards: List[str] = []
    if estimate:
        cards = list(estimate.get("fitting_cards") or [])
        if estimate.get("best_card") and estimate["best_card"] not in cards:
            cards.insert(0, estimate["best_card"])
    consent = tracker.get_slot("handoff_consent") is True
    contact = parse_contact(tracker.get_slot("handoff_contact") or "") if consent else None
    trigger = _trigger(tracker)
    return TicketDraft(
        channel=tracker.get_latest_input_channel() or "unknown", sender_id=tracker.sender_id,
        language=conversation_language(tracker), category=categorize(trigger, slots, estimate), trigger=trigger,
        slots=slots, estimate_summary=estimate, cards=cards, excerpt=_excerpt(tracker),
        consent=bool(contact), contact=contact.value if contact else None,
        contact_kind=contact.kind if contact else None)


def _client_key(tracker: Tracker) -> Optional[str]:
    """The pseudonym of the client's address the channel put on the latest message (bot/assistant/rate_limits.py)."""
    from bot.assistant.rate_limits import CLIENT_KEY

    for event in reversed(tracker.events):
        if event.get("event") == "user":
            key = (event.get("metadata") or {}).get(CLIENT_KEY)
            return key if isinstance(key, str) else None
    return None


def tickets_allowed(tracker: Tracker) -> bool:
    """Within knowledge/rate_limits.yml's tickets per conversation and per client address (issue 20, finding 6:
    one address opened 37 tickets in 31 seconds under as many conversation ids)."""
    from bot.assistant.rate_limits import limiter

    return limiter().ticket_allowed(tracker.sender_id, _client_key(tracker))


class ActionOpenTicket(Action):
    def name(self) -> Text:
        return "action_open_ticket"

    async def run(self, dispatcher: CollectingDispatcher, tracker: Tracker, domain: DomainDict) -> List[EventType]:
        # The contact is not kept in the conversation: the ticket holds it (with consent), the tracker store masks it.
        clear = [SlotSet("handoff_consent", None), SlotSet("handoff_contact", None), SlotSet("handoff_name", None)]
        if tracker.get_slot("handoff_cancelled"):
            dispatcher.utter_message(response="utter_handoff_cancelled")
            return clear + [SlotSet("handoff_cancelled", None)]
        if tracker.get_slot("handoff_refused"):
            # "No, I won't give my number": not a ticket behind the customer's back. Nothing was stored; a request
            # without a contact, answered in this chat, is offered (a "yes" opens it: data/rules/handoff.yml).
            dispatcher.utter_message(response="utter_offer_ticket_without_contact")
            return clear + [SlotSet("handoff_refused", None)]
        # Database calls run in a thread: a slow or unreachable database must not stall other conversations.
        existing = await asyncio.to_thread(_open_ticket, tracker.sender_id)
        if existing is not None:
            # The message goes onto the ticket either way (staff read it there); the request repeated gets the
            # open ticket's number, anything else is confirmed as added (issue 21, hand-over state).
            added = await asyncio.to_thread(add_to_open_ticket, existing.id, tracker)
            repeated = latest_intent(tracker) in HANDOFF_TRIGGERS
            dispatcher.utter_message(response="utter_ticket_message_added" if added and not repeated
                                     else "utter_ticket_already_open", ticket_id=existing.id)
            return clear + [SlotSet("ticket_id", existing.id)]
        if not tickets_allowed(tracker):
            from bot.assistant.channels.limits import channel_answer

            logger.warning("Ticket refused: over the ticket rate limit")
            dispatcher.utter_message(text=channel_answer("tickets_limited", conversation_language(tracker)))
            return clear
        try:
            ticket = await asyncio.to_thread(ticket_store().create, build_draft(tracker))
        except Exception:  # the spool failed too (disk full, permissions): tell the user, keep the bot usable
            logger.exception("Ticket for conversation %s could not be stored", tracker.sender_id)
            dispatcher.utter_message(response="utter_ticket_failed")
            return clear
        name = tracker.get_slot("handoff_name")
        if name and ticket.consent:
            # The name typed as the answer to the consent question (issue 21, round 4), for staff on the ticket.
            await asyncio.to_thread(_add_name, ticket.id, name)
        if ticket.contact:
            dispatcher.utter_message(response="utter_ticket_opened", ticket_id=ticket.id, contact=ticket.contact)
            if not _notice_shown_in_this_handoff(tracker):
                # The contact came with the request itself (round 9): the KVKK notice the consent question carries
                # was not shown, so its short form follows the confirmation.
                from actions.dialogue_text import text as dialogue_text

                dispatcher.utter_message(text=dialogue_text("handoff_contact_kvkk", conversation_language(tracker)))
        else:
            dispatcher.utter_message(response="utter_ticket_opened_anonymous", ticket_id=ticket.id)
        return clear + [SlotSet("ticket_id", ticket.id)]
