"""Personal data detection and masking (KVKK): what may never be stored or logged in clear text.

The one masking module of the product: the tracker store, the ticket store, the staff page, the website and every
log record of every process mask through it; the dataset check counts personal data with it (count_pii).

Kinds and placeholders (MASKS): phone ([PHONE]; phonenumbers: Turkish and Iranian numbers in every prefix form,
other countries written as international), email ([EMAIL]; also spelled "[at]"/"dot" forms), tc_kimlik
([TC_KIMLIK]; stdnum.tr.tckimlik), iban ([IBAN]; stdnum.iban, Iranian Sheba, also without the country code), card
([CARD]; stdnum.luhn), national_id ([IR_NATIONAL_ID]; the Iranian national code's mod-11 check), address ([ADDRESS];
Turkish and Persian street, number and postal-code words from knowledge/privacy.yml) and telegram ([TELEGRAM];
@username, t.me/ links: a contact the handoff accepts).

Detection runs on a normalised copy (bot.privacy.normalize: digits of every script, separators, line breaks,
invisible characters, URL-encoding), and every span found there masks exactly the original characters behind it.
Overlapping findings are masked as one span, so digits next to a number can never leave part of it in clear.
Numbers that fail their checksum are left alone: token counts, prices, dates and model sizes stay readable for
support staff. Conversation ids are never masked in the stores (they skip them by key; a numeric Telegram chat id
can pass an ID checksum): views and logs show them through mask_sender_id.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Tuple

from bot.privacy.accounts import email_spans, iban_spans, telegram_spans
from bot.privacy.address import address_spans, may_hold_address
from bot.privacy.checks import is_valid_card, is_valid_tc_kimlik, phone_kind
from bot.privacy.normalize import Normalized, normalize
from bot.privacy.numbers import MIN_NUMBER_DIGITS, number_spans

MASKS = {
    "phone": "[PHONE]",
    "email": "[EMAIL]",
    "tc_kimlik": "[TC_KIMLIK]",
    "iban": "[IBAN]",
    "card": "[CARD]",
    "national_id": "[IR_NATIONAL_ID]",
    "address": "[ADDRESS]",
    "telegram": "[TELEGRAM]",
}
KINDS = tuple(MASKS)
# Which finding names an overlap of two (the first listed wins): the validated structures before the loose ones.
_PRIORITY = {kind: rank for rank, kind in enumerate(("email", "iban", "card", "tc_kimlik", "national_id", "phone",
                                                      "telegram", "address"))}
# A text without a digit, an "@", a t.me/ link, an "at" word or an address word holds no personal data: most strings
# of an event (names, ids, words) skip the full pass (issue 10: masking was 11 % of the Rasa server's time).
_MAY_HOLD_MARKS = re.compile(r"\d|@|t\.me/|\bat\b|[\[({<]\s*at\s*[\])}>]", re.I)


@dataclass(frozen=True)
class Finding:
    kind: str
    start: int
    end: int


def find_pii(text: str) -> List[Finding]:
    """All personal data spans of `text` as (kind, start, end) on the original text, non-overlapping, in order."""
    if not isinstance(text, str) or not text:
        return []
    norm = normalize(text)
    spans = _spans_in_copy(norm.text)
    found = [Finding(kind, *norm.span(start, end)) for kind, start, end in _merged(spans)]
    return sorted(found, key=lambda f: f.start)


def _spans_in_copy(copy: str) -> List[Tuple[str, int, int]]:
    marks = _MAY_HOLD_MARKS.search(copy) is not None
    address = may_hold_address(copy)
    if not marks and not address:
        return []
    spans: List[Tuple[str, int, int]] = []
    if marks:
        spans += [("email", s, e) for s, e in email_spans(copy)]
        if "@" in copy or "t.me/" in copy:
            spans += [("telegram", s, e) for s, e in telegram_spans(copy)]
        if sum(map(str.isdigit, copy)) >= MIN_NUMBER_DIGITS:
            spans += [("iban", s, e) for s, e in iban_spans(copy)]
            spans += [(f.kind, f.start, f.end) for f in number_spans(copy)]
    if address:
        spans += [("address", s, e) for s, e in address_spans(copy)]
    return spans


def _merged(spans: List[Tuple[str, int, int]]) -> List[Tuple[str, int, int]]:
    """Overlapping spans become one, named after the longest of them (on equal length, the kind of _PRIORITY)."""
    merged: List[Tuple[str, int, int]] = []
    for kind, start, end in sorted(spans, key=lambda s: (s[1] - s[2], _PRIORITY[s[0]])):
        for i, (m_kind, m_start, m_end) in enumerate(merged):
            if start < m_end and m_start < end:
                merged[i] = (m_kind, min(m_start, start), max(m_end, end))
                break
        else:
            merged.append((kind, start, end))
    # A merge can make two spans touch each other: repeat until stable (a handful of spans per message).
    return merged if len(merged) == len(spans) else _merged(merged)


def mask_pii(text: str) -> str:
    """`text` with every personal data span replaced by its placeholder (e.g. ``[PHONE]``)."""
    if not isinstance(text, str) or not text:
        return text
    return replace_findings(text, find_pii(text))


def replace_findings(text: str, findings: List[Finding]) -> str:
    """`text` with each of `findings` (spans of it) replaced by its kind's placeholder."""
    if not findings:
        return text
    out, pos = [], 0
    for f in findings:
        out.append(text[pos:f.start])
        out.append(MASKS[f.kind])
        pos = f.end
    out.append(text[pos:])
    return "".join(out)


def count_pii(text: str) -> Dict[str, int]:
    """How many personal data values of each kind `text` holds, by kind name (every kind of KINDS present, 0 when
    none): for statistics over data sets. Never returns the values."""
    counts = dict.fromkeys(KINDS, 0)
    for f in find_pii(text):
        counts[f.kind] += 1
    return counts


def contains_pii(text: str) -> bool:
    return bool(find_pii(text))


def number_is_pii(value: Any) -> Optional[str]:
    """The kind of personal data a number kept as a number is (a slot filled with 5321234567.0), or None.

    Digits only, no grouping to read: a mobile number (the trunk zero is lost in a number) or one with its country
    code, a TC kimlik or a card. Not the ten-digit national code: one count in ten passes its check digit, and
    token counts of that size are common slot values.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return None
    digits = str(abs(int(value)))
    if len(digits) < MIN_NUMBER_DIGITS:
        return None
    if is_valid_tc_kimlik(digits):
        return "tc_kimlik"
    if is_valid_card(digits):
        return "card"
    return "phone" if phone_kind(digits, False) else None


def mask_data(value: Any, skip_keys: Iterable[str] = ()) -> Any:
    """Deep copy of JSON-like data with every string masked; values under `skip_keys` are kept as they are.

    A number that is personal data (a phone number a slot kept as a float) becomes None: a placeholder string would
    change the slot's type, and the number has no other use in the conversation.
    """
    skip = frozenset(skip_keys)

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return mask_pii(v)
        if isinstance(v, dict):
            return {k: (val if k in skip else walk(val)) for k, val in v.items()}
        if isinstance(v, (list, tuple)):
            return [walk(x) for x in v]
        if isinstance(v, (int, float)) and number_is_pii(v):
            return None
        return v

    return walk(value)


def mask_sender_id(sender_id: Optional[str]) -> str:
    """A conversation id as logs and staff views show it: a REST client may use a phone number or an e-mail address
    as the id. Ids that are not personal data are shown as they are, so staff can still tell conversations apart."""
    if not sender_id:
        return ""
    return mask_pii(str(sender_id))


def masked_pairs(text: str) -> List[Tuple[str, str]]:
    """(kind, original span) pairs — for tests and diagnostics only, never for storage."""
    return [(f.kind, text[f.start:f.end]) for f in find_pii(text)]


__all__ = ["MASKS", "KINDS", "Finding", "Normalized", "find_pii", "mask_pii", "count_pii", "contains_pii",
           "mask_data", "mask_sender_id", "number_is_pii", "masked_pairs", "replace_findings"]
