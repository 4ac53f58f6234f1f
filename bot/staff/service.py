"""What a staff member can do with a ticket; shared by the staff web page and the `tickets` CLI.

Pause/resume follow the ticket: taking a ticket or replying pauses the bot in that conversation (Rasa `pause`
event, the processor then only records the customer's messages), closing the last open ticket of the conversation
resumes it and the bot says it is back (`utter_handoff_resumed`, in the conversation's language).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import List, Optional

from bot.staff.rasa_api import PUSH_CHANNELS, RasaClient, RasaUnavailable, latest_input_channel
from bot.tickets.models import Ticket
from bot.tickets.store import TicketStore
from bot.tickets.texts import customer_text

logger = logging.getLogger(__name__)

RESUMED_RESPONSE = "utter_handoff_resumed"


@dataclass
class Outcome:
    ticket: Ticket
    messages: List[str] = field(default_factory=list)  # label keys of knowledge/handoff.yml staff section
    ok: bool = True


def take(store: TicketStore, rasa: RasaClient, ticket_id: str, author: str) -> Outcome:
    ticket = store.set_status(ticket_id, "in_progress", author=author)
    out = Outcome(ticket, ["status_changed"])
    try:
        rasa.pause(ticket.sender_id)
    except RasaUnavailable as err:
        logger.warning("Could not pause conversation of ticket %s: %s", ticket_id, err)
    return out


def reply(store: TicketStore, rasa: RasaClient, ticket_id: str, text: str, author: str) -> Outcome:
    text = (text or "").strip()
    ticket = store.get(ticket_id)
    if not text:
        return Outcome(ticket, ["empty_text"], ok=False)
    message = f"{customer_text('staff_reply_prefix', ticket.language)}\n{text}"
    try:
        tracker = rasa.say_as_staff(ticket.sender_id, message, author)
    except RasaUnavailable as err:
        logger.warning("Staff reply for ticket %s not delivered: %s", ticket_id, err)
        return Outcome(ticket, ["reply_failed"], ok=False)
    # Stored masked like everything else; the customer got the original.
    ticket = store.add_note(ticket_id, text, author=author, kind="reply")
    if ticket.status == "open":
        ticket = store.set_status(ticket_id, "in_progress", author=author)
    pushed = latest_input_channel(tracker) in PUSH_CHANNELS
    return Outcome(ticket, ["reply_sent" if pushed else "reply_recorded"])


def set_status(store: TicketStore, rasa: RasaClient, ticket_id: str, status: str, author: str,
               note: Optional[str] = None) -> Outcome:
    if status == "closed":
        return close(store, rasa, ticket_id, author, note)
    if status == "in_progress":
        out = take(store, rasa, ticket_id, author)
        if note:
            out.ticket = store.add_note(ticket_id, note, author=author)
        return out
    return Outcome(store.set_status(ticket_id, status, author=author, note=note), ["status_changed"])


def close(store: TicketStore, rasa: RasaClient, ticket_id: str, author: str, note: Optional[str] = None) -> Outcome:
    ticket = store.set_status(ticket_id, "closed", author=author, note=note)
    out = Outcome(ticket, ["status_changed"])
    if store.open_ticket_for(ticket.sender_id) is not None:
        return out  # another ticket of this customer is still being handled: the bot stays quiet
    try:
        rasa.resume(ticket.sender_id)
        rasa.execute(ticket.sender_id, RESUMED_RESPONSE)
        out.messages.append("bot_resumed")
    except RasaUnavailable as err:
        logger.warning("Could not resume conversation of ticket %s: %s", ticket_id, err)
        out.messages.append("resume_failed")
        out.ok = False
    return out
