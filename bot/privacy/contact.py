"""The contact a customer gives with consent (handoff form): e-mail, phone or Telegram username, canonicalised."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from bot.privacy.checks import e164
from bot.privacy.normalize import normalize_text

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_TELEGRAM = re.compile(r"(?:@|(?:https?://)?t\.me/)([A-Za-z][A-Za-z0-9_]{3,31})")
_PHONE_CHARS = re.compile(r"\+?[\d\s().\-_/]{7,30}")


@dataclass(frozen=True)
class Contact:
    kind: str  # email | phone | telegram
    value: str  # canonical form


def parse_contact(text: str) -> Optional[Contact]:
    """A contact the user typed, canonicalised, or None when it is not a valid e-mail, phone or Telegram username.

    Phone numbers become E.164 (+98..., +90...; phonenumbers decides validity). A Telegram username needs its @ (or a
    t.me link) so that an ordinary word is never taken for one; usernames are 5-32 characters (Telegram's rule).
    """
    if not isinstance(text, str):
        return None
    raw = normalize_text(text).strip().strip(".,;:!?،؛")
    if not raw:
        return None
    if _EMAIL.fullmatch(raw):
        return Contact("email", raw.lower())
    tg = _TELEGRAM.fullmatch(raw)
    if tg:
        username = tg.group(1)
        if not username.endswith("_") and "__" not in username and len(username) >= 5:
            return Contact("telegram", "@" + username)
        return None
    if _PHONE_CHARS.fullmatch(raw):
        number = e164(raw, international=raw.startswith("+"))
        return Contact("phone", number) if number else None
    return None
