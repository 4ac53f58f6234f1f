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

import re
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, Optional

import yaml
from pydantic import BaseModel, root_validator

from bot.text.language import detect_language

MAX_MESSAGE_CHARS = 4000
MAX_SENDER_CHARS = 128
CLIENT_METADATA_KEYS = ("language_hint", "locale", "language")
_MAX_METADATA_VALUE_CHARS = 35  # a BCP 47 language tag is at most 35 characters
LANGS = ("fa", "tr")
# Conversation ids that belong to a channel with its own authentication: Telegram chat ids and signed website sessions.
OTHER_CHANNEL_SENDER = re.compile(r"-?\d+|web-[0-9a-f]{32}")
TEXTS_PATH = Path(__file__).resolve().parents[3] / "knowledge" / "channels.yml"


class _ChannelTexts(BaseModel):
    texts: Dict[str, Dict[str, str]]

    @root_validator(skip_on_failure=True)
    def every_text_in_both_languages(cls, values):
        import string

        for key, by_lang in values["texts"].items():
            missing = [lang for lang in LANGS if not (by_lang.get(lang) or "").strip()]
            if missing:
                raise ValueError(f"{key}: missing {', '.join(missing)}")
            fields = {lang: {f for _, f, _, _ in string.Formatter().parse(by_lang[lang]) if f} for lang in LANGS}
            if fields["fa"] != fields["tr"]:
                raise ValueError(f"{key}: fa and tr use different placeholders {fields}")
        return values


@lru_cache(maxsize=1)
def channel_texts() -> Dict[str, Dict[str, str]]:
    return _ChannelTexts.parse_obj(yaml.safe_load(TEXTS_PATH.read_text(encoding="utf-8"))).texts


def too_long(text: Any) -> bool:
    return isinstance(text, str) and len(text) > MAX_MESSAGE_CHARS


def _hint_language(metadata: Optional[Dict[str, Any]]) -> Optional[str]:
    for key in CLIENT_METADATA_KEYS:
        value = (metadata or {}).get(key)
        if isinstance(value, str) and value[:2].lower() in LANGS:
            return value[:2].lower()
    return None


def too_long_answer(text: str, metadata: Optional[Dict[str, Any]] = None) -> str:
    """The answer to a message over the limit, in the language of its beginning (else the client's hint, else both)."""
    language = detect_language(text[:MAX_MESSAGE_CHARS]) if isinstance(text, str) else None
    language = language if language in LANGS else _hint_language(metadata)
    texts = channel_texts()["message_too_long"]
    chosen = [language] if language in LANGS else list(LANGS)
    return "\n\n".join(texts[lang].format(limit=MAX_MESSAGE_CHARS) for lang in chosen)


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
