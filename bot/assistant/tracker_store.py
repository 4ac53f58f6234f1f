"""A Rasa SQL tracker store that masks personal data before any event is persisted (KVKK).

endpoints.yml:

    tracker_store:
      type: bot.assistant.tracker_store.RedactingSQLTrackerStore
      dialect: sqlite            # or postgresql with url/port/db/username/password
      db: var/tracker.db

User and bot texts, parse data (text, entity values), slot values and message metadata are masked with
bot.tickets.pii before they reach the `events` table. The conversation in memory is unchanged for the turn in
progress, so the bot and its actions still see what the user typed (e.g. the contact a user consents to give);
from the next turn on, the tracker is read back masked. Loading this module also masks personal data in every log
record of the Rasa process (user messages appear in Rasa's debug log).

It does not stream events to an event broker: configure none, or they would carry unmasked texts.
"""
from __future__ import annotations

import json
import logging
import os
from typing import Any, Dict, Optional, Text

os.environ.setdefault("SQLALCHEMY_SILENCE_UBER_WARNING", "1")

from rasa.core.brokers.broker import EventBroker  # noqa: E402
from rasa.core.tracker_store import SQLTrackerStore  # noqa: E402
from rasa.shared.core.domain import Domain  # noqa: E402
from rasa.shared.core.trackers import DialogueStateTracker  # noqa: E402
from rasa.shared.nlu.constants import INTENT_NAME_KEY  # noqa: E402

from bot.tickets.pii import install_log_redaction, mask_data  # noqa: E402

logger = logging.getLogger(__name__)

install_log_redaction()

# Structural fields that never hold what a user typed; masking them could only corrupt the event.
_STRUCTURAL_KEYS = ("event", "timestamp", "name", "policy", "confidence", "intent", "intent_ranking",
                    "message_id", "input_channel", "action_text", "rasa_only", "hide_rule_turn", "action_name",
                    "start", "end", "extractor", "entity", "processors", "response_selector", "key")


def redact_event(data: Dict[str, Any]) -> Dict[str, Any]:
    """A copy of one serialised event with personal data masked in every free-text field."""
    return mask_data(data, skip_keys=_STRUCTURAL_KEYS)


class RedactingSQLTrackerStore(SQLTrackerStore):
    """SQLTrackerStore (SQLite or PostgreSQL) that writes only masked events."""

    def __init__(self, domain: Optional[Domain] = None, dialect: Text = "sqlite", host: Optional[Text] = None,
                 port: Optional[int] = None, db: Text = "rasa.db", username: Text = None, password: Text = None,
                 event_broker: Optional[EventBroker] = None, login_db: Optional[Text] = None,
                 query: Optional[Dict] = None, **kwargs: Any) -> None:
        if event_broker is not None:
            logger.warning("RedactingSQLTrackerStore does not stream events to the event broker (unmasked texts)")
        if dialect == "sqlite" and db and os.path.dirname(db):
            os.makedirs(os.path.dirname(db), exist_ok=True)
        super().__init__(domain, dialect, host, port, db, username, password, None, login_db, query, **kwargs)

    async def save(self, tracker: DialogueStateTracker) -> None:
        """SQLTrackerStore.save with every event masked on its way into the `events` table."""
        with self.session_scope() as session:
            for event in self._additional_events(session, tracker):
                data = redact_event(event.as_dict())
                session.add(self.SQLEvent(
                    sender_id=tracker.sender_id,
                    type_name=event.type_name,
                    timestamp=data.get("timestamp"),
                    intent_name=data.get("parse_data", {}).get("intent", {}).get(INTENT_NAME_KEY),
                    action_name=data.get("name"),
                    data=json.dumps(data),
                ))
            session.commit()
        logger.debug("Tracker with sender_id '%s' stored to database (masked)", tracker.sender_id)
