"""Ticket data: what the bot hands to support staff (pydantic v1 domain objects).

The store turns a TicketDraft (what the conversation gathered) into a Ticket: it assigns the number, the
priority and masks personal data in everything except the consented contact.
"""
from __future__ import annotations

import secrets
from datetime import datetime, timezone
from typing import Any, Dict, List, Literal, Optional

from pydantic import BaseModel, Field

Status = Literal["open", "in_progress", "closed"]
Category = Literal["quote", "multi-gpu", "complaint", "technical", "other"]
Role = Literal["user", "bot", "staff"]
NoteKind = Literal["note", "reply", "status"]

STATUSES = ("open", "in_progress", "closed")
CATEGORIES = ("quote", "multi-gpu", "complaint", "technical", "other")
PRIORITY_NAMES = {1: "urgent", 2: "high", 3: "normal", 4: "low"}

# Crockford base32 without I, L, O, U: nothing a customer could misread when dictating the number on the phone.
_ID_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
# 32**6 = 1.07 billion numbers per day: at 1000 tickets a day two share a number about once in 5 years (birthday
# bound n**2 / 2N = 0.05 %/day). Direct inserts draw again on a clash; a spooled ticket that clashes is renumbered
# with a note (TicketStore.flush_spool).
_ID_RANDOM_CHARS = 6


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)  # stored as naive UTC: SQLite has no time zones


def new_ticket_id(now: Optional[datetime] = None) -> str:
    """`T-YYMMDD-XXXXXX`: generated client-side so a ticket has its final number even while it waits in the spool."""
    now = now or utcnow()
    suffix = "".join(secrets.choice(_ID_ALPHABET) for _ in range(_ID_RANDOM_CHARS))
    return f"T-{now:%y%m%d}-{suffix}"


def normalize_ticket_id(text: str) -> str:
    """Staff and customers type numbers in lower case or with O for 0; accept that."""
    return text.strip().upper().replace("O", "0").replace("I", "1").replace("L", "1")


class Message(BaseModel):
    role: Role
    text: str
    at: Optional[float] = None  # unix time, as in Rasa events


class Note(BaseModel):
    at: datetime
    author: str
    kind: NoteKind = "note"
    text: str


class TicketDraft(BaseModel):
    """What the conversation knows when the user asks for a person."""

    channel: str = "rest"
    sender_id: str
    language: Literal["fa", "tr", "en"] = "fa"
    category: Category = "other"
    trigger: str = "request_human"  # request_human | request_quote | complaint | fallback
    slots: Dict[str, Any] = Field(default_factory=dict)
    estimate_summary: Optional[Dict[str, Any]] = None
    cards: List[str] = Field(default_factory=list)
    excerpt: List[Message] = Field(default_factory=list)
    contact: Optional[str] = None  # only with consent: stored unmasked on purpose
    contact_kind: Optional[Literal["email", "phone", "telegram"]] = None
    consent: bool = False


class Ticket(TicketDraft):
    id: str
    created_at: datetime
    updated_at: datetime
    priority: int = Field(3, ge=1, le=4)
    priority_reasons: List[str] = Field(default_factory=list)
    status: Status = "open"
    notes: List[Note] = Field(default_factory=list)
    spooled: bool = False  # True while the ticket waits in the local spool for the database

    @property
    def priority_name(self) -> str:
        return PRIORITY_NAMES[self.priority]

    def to_json_dict(self) -> Dict[str, Any]:
        import json

        return json.loads(self.json())
