"""A conversation-store failure (PostgreSQL down) is answered in the customer's language, not swallowed.

Rasa 3.6 wraps the tracker store in FailSafeTrackerStore, which answers "no such conversation" when the database
fails: each message during an outage then starts a blank conversation (the values, the form and the language are
gone, so a customer who types "4096" in the middle of the estimate gets "I did not understand"). Where the failure
escapes instead, the REST channel answers an empty list and socket.io and Telegram customers get nothing at all.
Patched here: reading the conversation lets a database error through, and a database error while the turn is
handled is logged and answered with `utter_storage_unavailable` (domain/service.yml). The conversation's language
cannot be read from the store that just failed, so it comes from the message: the language hint a channel sent
(Telegram's client language, the widget's page language), else the language of the text, else Persian.

The tickets do not depend on this: a ticket written while PostgreSQL is down goes to the spool (bot/tickets/spool.py).
Installed by bot/assistant/patches/__init__.py.
"""
from __future__ import annotations

import logging
from typing import Any, Dict, List, Optional

from bot.assistant.patches.import_hooks import replace, when_imported

logger = logging.getLogger(__name__)

STORAGE_UNAVAILABLE_RESPONSE = "utter_storage_unavailable"
ASSISTANT_LANGUAGES = ("fa", "tr")
DEFAULT_LANGUAGE = "fa"


def is_store_failure(error: BaseException) -> bool:
    """A database error from SQLAlchemy or the driver (connection refused, server gone, database not accepting)."""
    import sqlalchemy.exc

    try:
        import psycopg2
        driver_errors: tuple = (psycopg2.Error,)
    except ImportError:  # pragma: no cover - psycopg2 is a dependency of the project
        driver_errors = ()
    return isinstance(error, (sqlalchemy.exc.SQLAlchemyError,) + driver_errors)


def message_language(message: Any) -> str:
    metadata: Dict[str, Any] = message.metadata if isinstance(message.metadata, dict) else {}
    for key in ("language_hint", "language", "locale"):
        value = str(metadata.get(key) or "").split("-")[0].lower()
        if value in ASSISTANT_LANGUAGES:
            return value
    from bot.text.language import detect_language

    detected = detect_language(message.text or "")
    return detected if detected in ASSISTANT_LANGUAGES else DEFAULT_LANGUAGE


async def answer_store_failure(processor: Any, message: Any) -> None:
    from rasa.shared.core.events import SlotSet
    from rasa.shared.core.trackers import DialogueStateTracker

    language = message_language(message)
    tracker = DialogueStateTracker(message.sender_id or "unknown", processor.domain.slots)
    tracker.update(SlotSet("language", language))
    channel = message.output_channel
    generated = await processor.nlg.generate(STORAGE_UNAVAILABLE_RESPONSE, tracker, channel.name())
    if not generated:
        logger.error("%s is missing from the domain: the customer got no answer", STORAGE_UNAVAILABLE_RESPONSE)
        return
    await channel.send_response(message.sender_id, generated)


def _handle_message_answering_store_failures(_original_handle_message: Any) -> Any:
    async def handle_message(self: Any, message: Any) -> Optional[List[Dict[str, Any]]]:
        return await _answer_store_failures(_original_handle_message, self, message)

    setattr(handle_message, PATCH_MARKER, True)
    return handle_message


PATCH_MARKER = "_advisor_store_failures"


async def _answer_store_failures(_original_handle_message: Any, self: Any, message: Any) -> Any:
    from rasa.core.channels.channel import CollectingOutputChannel

    try:
        return await _original_handle_message(self, message)
    except Exception as error:  # noqa: BLE001 - only database failures are answered here, the rest re-raised
        if not is_store_failure(error):
            raise
        logger.error("Conversation store unavailable, message of %s not recorded: %s", message.sender_id,
                     type(error).__name__)
        try:
            await answer_store_failure(self, message)
        except Exception:  # noqa: BLE001 - the channel itself failed: nothing more we can do
            logger.exception("Could not send the store-failure answer")
        if isinstance(message.output_channel, CollectingOutputChannel):
            return message.output_channel.messages
        return None


def _raising_retrieve(original: Any) -> Any:
    """FailSafeTrackerStore.retrieve that lets a database failure through instead of answering "no conversation"."""
    async def retrieve(self: Any, sender_id: str) -> Any:
        try:
            return await self._tracker_store.retrieve(sender_id)
        except Exception as error:  # noqa: BLE001 - sorted below
            if not is_store_failure(error):
                return await original(self, sender_id)  # Rasa's own handling for anything else
            raise  # logged and answered by the patched handle_message

    setattr(retrieve, PATCH_MARKER, True)
    return retrieve


def _patch(processor_module: Any) -> None:
    processor = processor_module.MessageProcessor
    if not getattr(processor.handle_message, PATCH_MARKER, False):
        replace(processor, "handle_message", _handle_message_answering_store_failures(processor.handle_message))
    # Rasa wraps the tracker store in FailSafeTrackerStore (rasa/core/agent.py), whose retrieve answers None when the
    # database fails: every message during an outage would start a blank conversation (values and language gone,
    # a customer in the middle of a form gets "I did not understand"). Saving keeps Rasa's in-memory fallback.
    from rasa.core.tracker_store import FailSafeTrackerStore

    if not getattr(FailSafeTrackerStore.retrieve, PATCH_MARKER, False):
        replace(FailSafeTrackerStore, "retrieve", _raising_retrieve(FailSafeTrackerStore.retrieve))


def install() -> None:
    """Patch now if Rasa's processor is loaded, otherwise as soon as it is (without importing Rasa's core now)."""
    when_imported("rasa.core.processor", _patch)
