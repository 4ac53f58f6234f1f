"""E-mail addresses, Telegram usernames and IBANs written with their country code, in the normalised copy of a text.

E-mail addresses come in the forms people use to keep them from robots, and in the forms a copy-paste leaves:
"ali [at] example [dot] com", "ali(at)example.com", "ali at example dot com", "ali @ example . com", "＠" and "．"
(normalised to "@" and "."), mailto: links with %40 (URL-decoded by the normaliser), IDN domains (örnek.com.tr) and
upper case (ALİ@...). The spelled-out "at"/"dot" words are read only with a complete domain after them, so "meet at
5" or "a dot" stay text.
"""
from __future__ import annotations

import re
from typing import Iterator, Optional, Tuple

from bot.privacy.checks import is_valid_iban

# A local part starts where no other local-part character is before it: one attempt per word, not one per
# character (a 4,000-character word with an "@" after it took half a second).
_LOCAL = r"(?<![\w.%+\-])[\w.%+\-]+"
_LABEL = r"[\w\-]+"
_TLD = r"(?:[^\W\d_]{2,}|xn--[\w\-]+)"
# "@" glued or with spaces around it ("ali @ example . com", "ali @example.com"); the domain needs its ".tld", so a
# Telegram username after a word ("yaz @ali_rezaei. Sonra") stays a username.
_PLAIN = rf"{_LOCAL}\s*@\s*{_LABEL}(?:(?:\.|\s+\.\s+){_LABEL})*(?:\.|\s+\.\s+){_TLD}(?![\w])"
# Spelled or bracketed: "ali [at] example [dot] com", "ali(at)example.com", "ali at example dot com". Only with a
# common top-level domain after it, so that "meet at home. Thanks" stays text.
_SPELLED_AT = r"(?:\s*[\[({<]\s*(?:at|@)\s*[\])}>]\s*|\s+at\s+)"
_SPELLED_DOT = r"(?:\s*[\[({<]\s*(?:dot|\.|nokta)\s*[\])}>]\s*|\s+(?:dot|nokta)\s+|\.)"
_COMMON_TLDS = r"(?:com|net|org|edu|gov|info|io|ai|dev|app|me|co|ir|tr|uk|de|ru|biz)"
_SPELLED = rf"{_LOCAL}{_SPELLED_AT}{_LABEL}(?:{_SPELLED_DOT}{_LABEL})*{_SPELLED_DOT}{_COMMON_TLDS}(?![\w])"
EMAIL = re.compile(rf"{_PLAIN}|{_SPELLED}", re.I)
# The spelled forms are tried only when a text has one of their "at" words.
MAY_HOLD_EMAIL = re.compile(r"@|\bat\b|[\[({<]\s*at\s*[\])}>]", re.I)

# A Telegram username is a contact too (the handoff accepts one): @name or a t.me/name link, 5-32 characters.
TELEGRAM_HANDLE = re.compile(r"(?:(?<![\w@.])@|(?:https?://)?t\.me/)[A-Za-z][A-Za-z0-9_]{4,31}(?![\w])")

# Country code, check digits, then 11-30 letters/digits, grouped by spaces, dots, dashes or underscores (also after
# the country code: "TR 33 0006 ..."). Letters may precede it ("ibanTR33..."): the mod-97 check keeps this precise.
_IBAN = re.compile(r"(?<![0-9])[A-Za-z]{2}[\s.\-_]{0,3}\d{2}(?:[\s.\-_]{0,3}[A-Za-z0-9]){11,30}(?![0-9A-Za-z])")


def email_spans(norm: str) -> Iterator[Tuple[int, int]]:
    if MAY_HOLD_EMAIL.search(norm):
        for m in EMAIL.finditer(norm):
            yield m.start(), m.end()


def telegram_spans(norm: str) -> Iterator[Tuple[int, int]]:
    for m in TELEGRAM_HANDLE.finditer(norm):
        yield m.start(), m.end()


def iban_spans(norm: str) -> Iterator[Tuple[int, int]]:
    for m in _IBAN.finditer(norm):
        end = _longest_valid_end(norm, m.start(), m.end())
        if end:
            yield m.start(), end


def _longest_valid_end(text: str, start: int, end: int) -> Optional[int]:
    """A grouped IBAN may run into the next word or number ("TR33 0006 ... 26 kart"): try shorter spans that end
    before a separator, longest first."""
    ends = [end] + [i for i in range(end - 1, start, -1) if text[i] in " .-_" and text[i - 1] not in " .-_"]
    for candidate_end in ends:
        if is_valid_iban(text[start:candidate_end]):
            return candidate_end
    return None
