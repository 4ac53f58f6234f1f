"""What every input channel checks before a message reaches the assistant: its length, its sender and its metadata.

- A message longer than MAX_MESSAGE_CHARS (4,000 characters, a little under Telegram's own 4,096) is not read and not
  stored: the channel answers knowledge/channels.yml's `message_too_long` in the user's language instead (a 1 MB
  message blocked the single Rasa process for 13-18 s and was stored 6-12 times over; security review finding 6).
- Clients may send only the metadata keys in CLIENT_METADATA_KEYS, as short strings. Whether a line is a staff line
  (`staff`, `author`) or which channel a message came from is decided by the server, never by the client (findings 4
  and 9).
- A sender id is a non-empty string without control characters, at most MAX_SENDER_CHARS long (finding 11: REST
  calls without a sender all shared the conversation "default"). The REST channel may not name the conversations of
  the other channels (finding 3): numeric ids are Telegram chats, `web-` + 32 hex digits are website sessions.
"""
from __future__ import annotations

import logging
import os
import re
import time
import unicodedata
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

from bot.knowledge import parse_file
from bot.knowledge.schemas import ChannelTexts
from bot.text.language import detect_language

MAX_MESSAGE_CHARS = 4000
MAX_SENDER_CHARS = 128
CLIENT_METADATA_KEYS = ("language_hint", "locale", "language")
_MAX_METADATA_VALUE_CHARS = 35  # a BCP 47 language tag is at most 35 characters
LANGS = ("fa", "tr")
# Conversation ids that belong to a channel with its own authentication: Telegram chat ids and signed website sessions.
OTHER_CHANNEL_SENDER = re.compile(r"-?\d+|web-[0-9a-f]{32}")
logger = logging.getLogger(__name__)
TEXTS_PATH = Path(__file__).resolve().parents[3] / "knowledge" / "channels.yml"


@lru_cache(maxsize=1)
def channel_texts() -> Dict[str, Dict[str, str]]:
    """knowledge/channels.yml's texts by key and language (schema: bot/knowledge/schemas.py ChannelTexts)."""
    texts = parse_file(ChannelTexts, TEXTS_PATH).texts
    return {key: text.dict(exclude_none=True) for key, text in texts.items()}


def too_long(text: Any) -> bool:
    return isinstance(text, str) and len(text) > MAX_MESSAGE_CHARS


def _hint_language(metadata: Optional[Dict[str, Any]]) -> Optional[str]:
    for key in CLIENT_METADATA_KEYS:
        value = (metadata or {}).get(key)
        if isinstance(value, str) and value[:2].lower() in LANGS:
            return value[:2].lower()
    return None


def too_long_answer(text: str, metadata: Optional[Dict[str, Any]] = None, language: Optional[str] = None) -> str:
    """The answer to a message over the limit: in `language` (the conversation's), else in the language of the
    message's beginning, else the client's hint, else both."""
    if language not in LANGS:
        language = detect_language(text[:MAX_MESSAGE_CHARS]) if isinstance(text, str) else None
        language = language if language in LANGS else _hint_language(metadata)
    return channel_answer("message_too_long", language, limit=str(MAX_MESSAGE_CHARS))  # as the tests quote it


_PERSIAN_DIGITS = str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹")


def channel_answer(key: str, language: Optional[str], **values: Any) -> str:
    """knowledge/channels.yml's `key` in `language`, numbers in Persian digits for fa; both languages when unknown."""
    texts = channel_texts()[key]
    chosen = [language] if language in LANGS else list(LANGS)

    def shown(lang: str, value: Any) -> str:
        if not isinstance(value, int):
            return str(value)
        return str(value).translate(_PERSIAN_DIGITS) if lang == "fa" else str(value)

    return "\n\n".join(texts[lang].format(**{k: shown(lang, v) for k, v in values.items()}) for lang in chosen)


# The language of each recent conversation, as its tracker said, for a minute: a flood of refused messages costs
# one look-up a minute, and a customer who changes language is followed within a minute.
_known_languages: "OrderedDict[str, Tuple[str, float]]" = OrderedDict()
_MAX_KNOWN_LANGUAGES = 10000
_KNOWN_LANGUAGE_S = 60.0


async def _stored_language(sender: str) -> Optional[str]:
    known = _known_languages.get(sender)
    if known and time.monotonic() - known[1] < _KNOWN_LANGUAGE_S:
        return known[0]
    try:
        from sanic import Sanic

        tracker = await Sanic.get_app().ctx.agent.tracker_store.retrieve(sender)
    except Exception:  # the language is a convenience: the answer then follows the text
        logger.debug("could not read the language of a conversation", exc_info=True)
        return None
    language = tracker.get_slot("language") if tracker is not None else None
    if language in LANGS:
        _known_languages[sender] = (language, time.monotonic())
        _known_languages.move_to_end(sender)
        while len(_known_languages) > _MAX_KNOWN_LANGUAGES:
            _known_languages.popitem(last=False)
        return language
    return None


async def conversation_language(sender: Optional[str], text: Any = None,
                                metadata: Optional[Dict[str, Any]] = None) -> Optional[str]:
    """The language to answer a channel's own message in (too long, rate limited, an error): the conversation's
    `language` slot (issue 20, finding 9: a long Turkish paste in a Persian conversation was answered in Turkish),
    else the language of the text, else the client's hint; None when nothing tells (then both languages)."""
    if sender:
        stored = await _stored_language(sender)
        if stored:
            return stored
    detected = detect_language(text[:MAX_MESSAGE_CHARS]) if isinstance(text, str) and text.strip() else None
    return detected if detected in LANGS else _hint_language(metadata)


def client_address(remote: Optional[str], forwarded_for: Optional[str]) -> Optional[str]:
    """The client's address: the connection's, or behind the cluster's HAProxy (ADVISOR_TRUSTED_PROXY=1) the last
    address HAProxy appended to X-Forwarded-For (earlier entries are the client's own word)."""
    if os.environ.get("ADVISOR_TRUSTED_PROXY") == "1" and forwarded_for:
        return forwarded_for.split(",")[-1].strip() or remote
    return remote


def client_metadata(raw: Any) -> Dict[str, str]:
    """The part of a client's metadata the server accepts: language hints only, as short strings."""
    if not isinstance(raw, dict):
        return {}
    return {key: raw[key] for key in CLIENT_METADATA_KEYS
            if isinstance(raw.get(key), str) and 0 < len(raw[key]) <= _MAX_METADATA_VALUE_CHARS}


def sender_problem(sender: Any) -> Optional[str]:
    """Why `sender` cannot name a conversation, or None when it can."""
    if not isinstance(sender, str) or not sender.strip():
        return "sender is required: a non-empty string naming the conversation"
    if len(sender) > MAX_SENDER_CHARS:
        return f"sender is longer than {MAX_SENDER_CHARS} characters"
    if any(unicodedata.category(ch) in ("Cc", "Cs") for ch in sender):
        return "sender contains control characters"
    return None


def rest_sender_problem(sender: Any) -> Optional[str]:
    """Like sender_problem, and the REST channel may not speak in a Telegram chat or a website session."""
    problem = sender_problem(sender)
    if problem is None and OTHER_CHANNEL_SENDER.fullmatch(sender.strip()):
        return "this sender id belongs to another channel (Telegram chat ids and website sessions are reserved)"
    return problem
