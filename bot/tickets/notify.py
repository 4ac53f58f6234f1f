"""Optional notice of new tickets to a staff Telegram chat.

Off unless both TELEGRAM_STAFF_CHAT_ID and TELEGRAM_TOKEN are set. Runs in a background thread with a short timeout
and never raises: a Telegram outage must not cost a customer their ticket.
"""
from __future__ import annotations

import json
import logging
import os
import threading
import urllib.request
from typing import Optional

from bot.telegram_api import DEFAULT_API_URL
from bot.tickets.models import Ticket
from bot.tickets.texts import notification_text, reason_label, staff_labels, staff_summary

logger = logging.getLogger(__name__)

TIMEOUT_S = 5


def notification_message(ticket: Ticket, lang: str) -> str:
    labels = staff_labels(lang)
    summary = staff_summary(ticket.slots, ticket.estimate_summary, lang) or "-"
    reasons = ", ".join(reason_label(r, lang) for r in ticket.priority_reasons)
    return notification_text("new_ticket", lang).format(
        id=ticket.id, priority=f"{labels['priorities'][ticket.priority]} ({reasons})",
        category=labels["categories"][ticket.category], language=ticket.language, channel=ticket.channel,
        summary=summary, contact=ticket.contact or notification_text("no_contact", lang))


def send_staff_notification(ticket: Ticket, env: Optional[dict] = None) -> Optional[threading.Thread]:
    env = env if env is not None else os.environ
    chat_id, token = env.get("TELEGRAM_STAFF_CHAT_ID"), env.get("TELEGRAM_TOKEN")
    if not chat_id or not token:
        return None
    base = (env.get("TELEGRAM_API_URL") or DEFAULT_API_URL).rstrip("/")
    text = notification_message(ticket, env.get("STAFF_LANG", "en"))

    def send() -> None:
        try:
            req = urllib.request.Request(f"{base}/bot{token}/sendMessage",
                                         data=json.dumps({"chat_id": chat_id, "text": text}).encode(),
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:
                resp.read()
        except Exception as err:  # noqa: BLE001 - any failure is only logged, see module doc
            logger.warning("Staff notification for ticket %s failed: %s", ticket.id, type(err).__name__)

    thread = threading.Thread(target=send, name=f"notify-{ticket.id}", daemon=True)
    thread.start()
    return thread
