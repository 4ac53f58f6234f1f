"""Personal data detection and masking (KVKK): what may never be stored in clear text.

Detected and masked: e-mail addresses, Telegram usernames (@name, t.me/name), phone numbers (Iranian, Turkish and international formats), Turkish ID
numbers (TC Kimlik, checksum-validated), Iranian national codes (checksum-validated), IBANs (ISO 13616 mod-97)
and payment card numbers (Luhn). Persian (۰-۹) and Arabic-Indic (٠-٩) digits count as digits: matching runs on a
normalised copy of the same length, so every span found there maps 1:1 onto the original text.

Ten- and eleven-digit numbers that fail their checksum are left alone: those are token counts, prices and the like,
and masking them would make ticket excerpts useless to support staff.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, List, Optional, Tuple

# One character in, one character out: spans on the normalised copy are spans on the original.
_DIGIT_MAP = {ord(c): str(i) for i, c in enumerate("۰۱۲۳۴۵۶۷۸۹")}
_DIGIT_MAP.update({ord(c): str(i) for i, c in enumerate("٠١٢٣٤٥٦٧٨٩")})

MASKS = {
    "email": "[EMAIL]",
    "phone": "[PHONE]",
    "tc_kimlik": "[TC_KIMLIK]",
    "ir_national_id": "[IR_NATIONAL_ID]",
    "iban": "[IBAN]",
    "card": "[CARD]",
    "telegram": "[TELEGRAM]",
}


def normalize_digits(text: str) -> str:
    """Persian/Arabic-Indic digits to ASCII, length preserved."""
    return text.translate(_DIGIT_MAP)


def digits_only(text: str) -> str:
    return re.sub(r"\D", "", normalize_digits(text))


# ---------------------------------------------------------------- checksum validators


def is_valid_tc_kimlik(value: str) -> bool:
    """TC Kimlik No: 11 digits, no leading zero, two check digits (Nüfus ve Vatandaşlık İşleri algorithm)."""
    d = digits_only(value)
    if len(d) != 11 or d[0] == "0":
        return False
    n = [int(c) for c in d]
    odd, even = sum(n[0:9:2]), sum(n[1:8:2])
    return (odd * 7 - even) % 10 == n[9] and sum(n[:10]) % 10 == n[10]


def is_valid_ir_national_id(value: str) -> bool:
    """Iranian national code (کد ملی): 10 digits, weighted mod-11 check digit; repeated-digit codes are invalid."""
    d = digits_only(value)
    if len(d) != 10 or len(set(d)) == 1:
        return False
    remainder = sum(int(d[i]) * (10 - i) for i in range(9)) % 11
    check = int(d[9])
    return check == remainder if remainder < 2 else check == 11 - remainder


def is_valid_iban(value: str) -> bool:
    """ISO 13616: move the first four characters to the end, letters to 10..35, the number mod 97 must be 1."""
    compact = re.sub(r"[\s-]", "", normalize_digits(value)).upper()
    if not re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}", compact):
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(ch, 36)) for ch in rearranged)) % 97 == 1


def is_valid_luhn(value: str) -> bool:
    d = digits_only(value)
    if not 13 <= len(d) <= 19 or len(set(d)) == 1:
        return False
    total = 0
    for i, ch in enumerate(reversed(d)):
        n = int(ch)
        if i % 2 == 1:
            n *= 2
            if n > 9:
                n -= 9
        total += n
    return total % 10 == 0


# ---------------------------------------------------------------- detectors

# Digit patterns must not start or end inside a longer alphanumeric run (message ids, hashes, model names).
_NB = r"(?<![0-9A-Za-z])"
_NA = r"(?![0-9A-Za-z])"

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
# A Telegram username is a contact too (the handoff accepts one): @name or a t.me/name link, 5-32 characters.
_TELEGRAM_HANDLE = re.compile(r"(?:(?<![\w@.])@|(?:https?://)?t\.me/)[A-Za-z][A-Za-z0-9_]{4,31}(?![\w])")
_IBAN = re.compile(_NB + r"[A-Za-z]{2}\d{2}(?:[ -]?[A-Za-z0-9]){11,30}" + _NA)
# 13-19 digits, optionally grouped by single spaces or dashes (as printed on cards).
_CARD = re.compile(_NB + r"\d(?:[ -]?\d){12,18}" + _NA)
_TEN_OR_ELEVEN = re.compile(_NB + r"\d{10,11}" + _NA)
# Also written with separators: 001-234567-8 style national codes, 123 456 789 01 style TC numbers.
_GROUPED_ID = re.compile(_NB + r"\d{2,4}(?:[ -]\d{2,7}){1,4}" + _NA)
_PHONES = [
    # Iranian mobile: 09xx xxx xxxx, +98 9xx..., 0098 9xx...
    re.compile(_NB + r"(?:\+98|0098|0)[ -]?9\d{2}[ -]?\d{3}[ -]?\d{4}" + _NA),
    # Turkish mobile and landline: 05xx xxx xx xx, 0(5xx) ..., +90 ...; area codes start with 2-5.
    re.compile(_NB + r"(?:\+90|0090|0)[ -]?\(?[2-5]\d{2}\)?[ -]?\d{3}[ -]?\d{2}[ -]?\d{2}" + _NA),
    # Iranian landline: 0 + 2-digit area code + 8 digits (021 1234 5678).
    re.compile(_NB + r"0[1-8]\d[ -]?\d{4}[ -]?\d{4}" + _NA),
    # Any international number written with a plus sign.
    re.compile(r"(?<![\w+])\+\d{1,3}(?:[ -]?\(?\d{1,4}\)?){2,5}" + _NA),
    # Bare Turkish/Iranian mobile without the trunk zero: 5xx xxx xx xx / 9xx xxx xxxx.
    re.compile(_NB + r"5\d{2}[ -]?\d{3}[ -]?\d{2}[ -]?\d{2}" + _NA),
    re.compile(_NB + r"9\d{2}[ -]?\d{3}[ -]?\d{4}" + _NA),
]


@dataclass(frozen=True)
class Finding:
    kind: str
    start: int
    end: int


def _national_id_kind(candidate: str) -> Optional[str]:
    if is_valid_tc_kimlik(candidate):
        return "tc_kimlik"
    if is_valid_ir_national_id(candidate):
        return "ir_national_id"
    return None


def _longest_valid_end(text: str, start: int, end: int, valid: Callable[[str], bool]) -> Optional[int]:
    """A grouped number may run into the next word or number ("TR33 0006 ... 26 kart"): try shorter spans that end
    before a separator, longest first."""
    ends = [end] + [i for i in range(end - 1, start, -1) if text[i] in " -" and text[i - 1] not in " -"]
    for candidate_end in ends:
        if valid(text[start:candidate_end]):
            return candidate_end
    return None


def find_pii(text: str) -> List[Finding]:
    """All personal data spans in `text`, non-overlapping, in text order."""
    if not text:
        return []
    norm = normalize_digits(text)
    found: List[Finding] = []
    taken = [False] * len(norm)

    def claim(kind: str, start: int, end: int) -> None:
        if any(taken[start:end]):
            return
        for i in range(start, end):
            taken[i] = True
        found.append(Finding(kind, start, end))

    # Most specific first: validated structures, then the looser phone shapes.
    for m in _EMAIL.finditer(norm):
        claim("email", m.start(), m.end())
    for m in _TELEGRAM_HANDLE.finditer(norm):
        claim("telegram", m.start(), m.end())
    for m in _IBAN.finditer(norm):
        end = _longest_valid_end(norm, m.start(), m.end(), is_valid_iban)
        if end:
            claim("iban", m.start(), end)
    for m in _CARD.finditer(norm):
        end = _longest_valid_end(norm, m.start(), m.end(),
                                 lambda s: is_valid_luhn(s) and not _national_id_kind(s))
        if end:
            claim("card", m.start(), end)
    for pattern in (_TEN_OR_ELEVEN, _GROUPED_ID):
        for m in pattern.finditer(norm):
            kind = _national_id_kind(m.group())
            if kind:
                claim(kind, m.start(), m.end())
    for pattern in _PHONES:
        for m in pattern.finditer(norm):
            if len(digits_only(m.group())) >= 8:
                claim("phone", m.start(), m.end())
    return sorted(found, key=lambda f: f.start)


def mask_text(text: str) -> str:
    """`text` with every personal data span replaced by its placeholder (e.g. ``[PHONE]``)."""
    if not isinstance(text, str) or not text:
        return text
    findings = find_pii(text)
    if not findings:
        return text
    out, pos = [], 0
    for f in findings:
        out.append(text[pos:f.start])
        out.append(MASKS[f.kind])
        pos = f.end
    out.append(text[pos:])
    return "".join(out)


def contains_pii(text: str) -> bool:
    return bool(find_pii(text))


def mask_data(value: Any, skip_keys: Iterable[str] = ()) -> Any:
    """Deep copy of JSON-like data with every string masked; values under `skip_keys` are kept as they are."""
    skip = frozenset(skip_keys)

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return mask_text(v)
        if isinstance(v, dict):
            return {k: (val if k in skip else walk(val)) for k, val in v.items()}
        if isinstance(v, (list, tuple)):
            return [walk(x) for x in v]
        return v

    return walk(value)


# ---------------------------------------------------------------- contact validation (consented contact field)

_TELEGRAM = re.compile(r"(?:@|(?:https?://)?t\.me/)([A-Za-z][A-Za-z0-9_]{3,31})")


@dataclass(frozen=True)
class Contact:
    kind: str  # email | phone | telegram
    value: str  # canonical form


def parse_contact(text: str) -> Optional[Contact]:
    """A contact the user typed, canonicalised, or None when it is not a valid e-mail, phone or Telegram username.

    Phone numbers become E.164 (+98..., +90...). A Telegram username needs its @ (or a t.me link) so that an
    ordinary word is never taken for one; usernames are 5-32 characters (Telegram's rule).
    """
    if not isinstance(text, str):
        return None
    raw = normalize_digits(text).strip().strip(".,;:!?،؛")
    if not raw:
        return None
    if re.fullmatch(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}", raw):
        return Contact("email", raw.lower())
    tg = _TELEGRAM.fullmatch(raw)
    if tg:
        username = tg.group(1)
        if not username.endswith("_") and "__" not in username and len(username) >= 5:
            return Contact("telegram", "@" + username)
        return None
    if re.fullmatch(r"\+?[\d\s().-]{7,22}", raw):
        return _canonical_phone(raw)
    return None


def _canonical_phone(raw: str) -> Optional[Contact]:
    plus = raw.startswith("+") or raw.startswith("00")
    d = digits_only(raw)
    if raw.startswith("00"):
        d = d[2:]
    if not plus:
        if len(d) == 11 and d.startswith("09"):  # Iranian mobile
            d = "98" + d[1:]
        elif len(d) == 11 and d[0] == "0" and d[1] in "2345":  # Turkish mobile / landline
            d = "90" + d[1:]
        elif len(d) == 11 and d[0] == "0":  # Iranian landline
            d = "98" + d[1:]
        elif len(d) == 10 and d[0] == "5":
            d = "90" + d
        elif len(d) == 10 and d[0] == "9":
            d = "98" + d
        else:
            return None
    if d.startswith("98") and len(d) != 12:
        return None
    if d.startswith("90") and len(d) != 12:
        return None
    if not 8 <= len(d) <= 15:
        return None
    return Contact("phone", "+" + d)


# ---------------------------------------------------------------- logging


_ESCAPED_DIGIT = re.compile(r"\\u(06f[0-9]|066[0-9])", re.IGNORECASE)


class PiiLogFilter(logging.Filter):
    """Masks personal data in log records (message and arguments) before any handler writes them."""

    def filter(self, record: logging.LogRecord) -> bool:
        mask_log_record(record)
        return True


def mask_log_record(record: logging.LogRecord) -> logging.LogRecord:
    if getattr(record, "_pii_masked", False):
        return record
    try:
        message = record.getMessage()
    except Exception:  # a broken format string must still reach the log, masked
        message = str(record.msg)
    # Rasa's structured debug logs are JSON with non-ASCII escaped: Persian/Arabic digits arrive as \u06f0...
    # and would slip past the detectors, so they are written as the ASCII digits they are.
    message = _ESCAPED_DIGIT.sub(lambda m: str(int(m.group(1), 16) & 0xF), message)
    record.msg = mask_text(message)
    record.args = ()
    if record.exc_text:
        record.exc_text = mask_text(record.exc_text)
    record._pii_masked = True
    return record


_installed = False


def install_log_redaction() -> None:
    """Mask personal data in every log record of this process, whichever logger or handler emits it.

    A filter on the root logger would miss records of child loggers (filters do not propagate), so the record
    factory is wrapped instead: records are created only for enabled levels, so disabled debug logging costs nothing.
    """
    global _installed
    if _installed:
        return
    previous: Callable[..., logging.LogRecord] = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        return mask_log_record(previous(*args, **kwargs))

    logging.setLogRecordFactory(factory)
    _installed = True


def masked_pairs(text: str) -> List[Tuple[str, str]]:
    """(kind, original span) pairs — for tests and diagnostics only, never for storage."""
    return [(f.kind, text[f.start:f.end]) for f in find_pii(text)]
