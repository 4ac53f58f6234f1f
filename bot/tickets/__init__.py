"""Support tickets: store with durable spool, PII masking, triage rules, staff CLI (see docs/staff.md)."""
from bot.tickets.models import CATEGORIES, STATUSES, Message, Note, Ticket, TicketDraft  # noqa: F401
from bot.tickets.store import StoreUnavailable, TicketNotFound, TicketStore  # noqa: F401
