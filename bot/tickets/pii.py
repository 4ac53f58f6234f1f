"""Personal data detection and masking (KVKK): what may never be stored or logged in clear text.

The one masking module of the product: the tracker store, the ticket store, the staff page and every log record of
every process (install_log_redaction) mask through it.

Detected and masked: e-mail addresses (also IDN and upper-case), Telegram usernames (@name, t.me/name), phone
numbers (Turkish and Iranian in every prefix form: +90, 0090, 90, 0, none; WhatsApp and tel: links; international
numbers written with "+"), Turkish ID numbers (TC Kimlik, checksum-validated), Iranian national codes
(checksum-validated), IBANs (ISO 13616 mod-97) and payment card numbers (Luhn).

Matching runs on a normalised copy of the same length (Persian, Arabic-Indic and fullwidth digits as ASCII; NBSP,
thin and zero-width characters as spaces; dash look-alikes as "-"), so every span found there maps 1:1 onto the
original text. Numbers are read as runs of digit groups joined by spaces, dots, dashes, slashes or brackets, and
every contiguous range of groups is checked, so the grouping a customer chooses does not hide a number.

Ten- and eleven-digit numbers that fail their checksum are left alone: those are token counts, prices and the like,
and masking them would make ticket excerpts useless to support staff. Conversation ids are never masked (the stores
skip them by key): a numeric Telegram chat id can pass an ID checksum.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, List, Optional, Tuple

# One character in, one character out: spans on the normalised copy are spans on the original. Persian, Arabic-Indic
# and fullwidth digits become ASCII digits; fullwidth ASCII (＠, ＋, Ｔ...) becomes ASCII; every kind of space (NBSP,
# narrow NBSP, thin space, ideographic space, tab) becomes " "; dash-likes become "-"; invisible format characters
# (zero-width space/joiners, LRM/RLM, bidi controls, BOM) become " " so that they separate digit groups instead of
# hiding a number from the detectors.
_CHAR_MAP = {ord(c): str(i) for i, c in enumerate("۰۱۲۳۴۵۶۷۸۹")}
_CHAR_MAP.update({ord(c): str(i) for i, c in enumerate("٠١٢٣٤٥٦٧٨٩")})
_CHAR_MAP.update({cp: chr(cp - 0xFEE0) for cp in range(0xFF01, 0xFF5F)})  # fullwidth ASCII block
_CHAR_MAP.update({ord(c): " " for c in "\t\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
                  "\u2009\u200a\u202f\u205f\u3000"})
_CHAR_MAP.update({ord(c): " " for c in "\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff"
                  "\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u00ad"})
_CHAR_MAP.update({ord(c): "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63"})
_CHAR_MAP.update({ord("\u066b"): ".", ord("\u066c"): ",", ord("\u06d4"): ".", ord("\u00b7"): "."})
_DIGIT_MAP = _CHAR_MAP  # kept for callers of the old name

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
    """Persian/Arabic-Indic/fullwidth digits to ASCII and look-alike separators to ASCII, length preserved."""
    return text.translate(_CHAR_MAP)


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
    compact = re.sub(r"[\s.-]", "", normalize_digits(value)).upper()
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

# Alphanumeric patterns must not start or end inside a longer alphanumeric run (message ids, hashes, model names).
_NB = r"(?<![0-9A-Za-z])"
_NA = r"(?![0-9A-Za-z])"

# Unicode word characters on both sides: IDN addresses (ali@örnek.com.tr) and upper-case Turkish letters (ALİ@...).
_EMAIL = re.compile(r"[\w.%+-]+@[\w-]+(?:\.[\w-]+)*\.[^\W\d_]{2,}|[\w.%+-]+@[\w-]+(?:\.[\w-]+)*\.xn--[\w-]+")
# A Telegram username is a contact too (the handoff accepts one): @name or a t.me/name link, 5-32 characters.
_TELEGRAM_HANDLE = re.compile(r"(?:(?<![\w@.])@|(?:https?://)?t\.me/)[A-Za-z][A-Za-z0-9_]{4,31}(?![\w])")
# Country code, check digits, then 11-30 letters/digits, grouped by single spaces, dots or dashes (also after the
# country code: "TR 33 0006 ..."). Letters may precede it ("ibanTR33..."): the mod-97 check keeps this precise.
_IBAN = re.compile(r"(?<![0-9])[A-Za-z]{2}[ .-]?\d{2}(?:[ .-]?[A-Za-z0-9]){11,30}" + _NA)

# Numbers are read as runs of digit groups: groups of digits joined by at most three separator characters (space,
# dot, dash, slash, brackets). Every contiguous range of groups is tried against the number kinds, so the way a
# number is grouped ("0912 123 45 67", "100.000.001.46", "532/123 45 67") does not matter.
_DIGIT_GROUP = re.compile(r"\d+")
_GROUP_SEPARATOR = re.compile(r"[ .\-/()]{1,3}")
_MAX_NUMBER_DIGITS = 19  # the longest kind: a 19-digit card
# Written before a number, these make it an international phone number: "+90 ...", "wa.me/90...", "tel:0090...".
_INTERNATIONAL_BEFORE = re.compile(r"(?:\+[ (]?|(?:wa\.me|whatsapp\.com/send\?phone=|tel:|callto:)/?\+?)$", re.I)


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
    ends = [end] + [i for i in range(end - 1, start, -1) if text[i] in " .-" and text[i - 1] not in " .-"]
    for candidate_end in ends:
        if valid(text[start:candidate_end]):
            return candidate_end
    return None


def _phone_digits_ok(d: str, international: bool) -> bool:
    """Turkish and Iranian numbers in every usual prefix form, other countries only when written as international."""
    if d.startswith("00"):
        d, international = d[2:], True
    if international and (d.startswith("90") or d.startswith("98")) and len(d) == 12:
        return d[2] in "2345" if d.startswith("90") else d[2] != "0"
    if re.fullmatch(r"90[2-5]\d{9}|989\d{9}", d):  # country code without "+", as in WhatsApp links
        return True
    if re.fullmatch(r"0[2-5]\d{9}|09\d{9}|0[1-8]\d{9}", d):  # trunk zero: Turkish, Iranian mobile, Iranian landline
        return True
    if re.fullmatch(r"5\d{9}|9\d{9}", d):  # mobile without the trunk zero
        return True
    return international and 8 <= len(d) <= 15 and not d.startswith(("90", "98"))


def _card_grouping_ok(groups: List[str]) -> bool:
    """Card numbers are written in one piece, in fours (the last group shorter), or 4-6-5 / 4-6-4 (Amex, Diners)."""
    sizes = [len(g) for g in groups]
    if len(sizes) == 1:
        return True
    if all(n == 4 for n in sizes[:-1]) and 1 <= sizes[-1] <= 4:
        return True
    return sizes in ([4, 6, 5], [4, 6, 4])


def _number_kind(groups: List[str], international: bool) -> Optional[str]:
    d = "".join(groups)
    if len(d) == 11 and is_valid_tc_kimlik(d):
        return "tc_kimlik"
    if len(d) == 10 and is_valid_ir_national_id(d):
        return "ir_national_id"
    if 13 <= len(d) <= 19 and _card_grouping_ok(groups) and is_valid_luhn(d):
        return "card"
    if 8 <= len(d) <= 17 and _phone_digits_ok(d, international):
        return "phone"
    return None


def _digit_runs(norm: str) -> List[List[Tuple[int, int]]]:
    """Runs of digit groups as lists of (start, end) spans. A group glued to letters on one side is kept ("tc" +
    number, number + "abc"), but a group inside a mixed token such as a hash or an id ("4f1c2a90b3") is not."""
    runs: List[List[Tuple[int, int]]] = []
    current: List[Tuple[int, int]] = []
    last_end = -1
    for m in _DIGIT_GROUP.finditer(norm):
        start, end = m.start(), m.end()
        if _inside_mixed_token(norm, start, end):
            if current:
                runs.append(current)
            current, last_end = [], -1
            continue
        if current and _GROUP_SEPARATOR.fullmatch(norm[last_end:start]):
            current.append((start, end))
        else:
            if current:
                runs.append(current)
            current = [(start, end)]
        last_end = end
    if current:
        runs.append(current)
    return runs


def _inside_mixed_token(norm: str, start: int, end: int) -> bool:
    i = start
    while i > 0 and norm[i - 1].isascii() and norm[i - 1].isalpha():
        i -= 1
    if i < start and i > 0 and norm[i - 1].isdigit():
        return True
    j = end
    while j < len(norm) and norm[j].isascii() and norm[j].isalpha():
        j += 1
    return j > end and j < len(norm) and norm[j].isdigit()


# The shortest number kind: an 8-digit phone number (_number_kind). A run of groups with fewer digits in all holds
# none, and a text's prices, sizes and token counts are such runs: they skip the window search (issue 10).
_MIN_NUMBER_DIGITS = 8


def _number_findings(norm: str) -> List[Finding]:
    candidates: List[Tuple[int, int, int, str]] = []  # (-digits, start, end, kind)
    for run in _digit_runs(norm):
        if sum(end - start for start, end in run) < _MIN_NUMBER_DIGITS:
            continue
        for first in range(len(run)):
            window_start = max(0, run[first][0] - 40)
            prefix = _INTERNATIONAL_BEFORE.search(norm[window_start:run[first][0]])
            international = prefix is not None
            # The "+" belongs to the number: mask "+90 532 ..." as a whole.
            plus = norm.rfind("+", window_start + prefix.start(), run[first][0]) if prefix else -1
            groups: List[str] = []
            for last in range(first, len(run)):
                groups.append(norm[run[last][0]:run[last][1]])
                digits = sum(len(g) for g in groups)
                if digits > _MAX_NUMBER_DIGITS:
                    break
                kind = _number_kind(groups, international)
                if kind:
                    start = plus if kind == "phone" and plus >= 0 else run[first][0]
                    if start > 0 and norm[start - 1] == "(" and norm[run[first][1]:run[first][1] + 1] == ")":
                        start -= 1  # "(0532) 123 45 67"
                    candidates.append((-digits, start, run[last][1], kind))
    return [Finding(kind, start, end) for _, start, end, kind in sorted(candidates)]


def _merge_overlapping(findings: List[Finding]) -> List[Finding]:
    """Overlapping numbers become one masked span named after the longest of them (the list is longest first), so
    that digits written next to a number can never leave part of it in clear."""
    merged: List[Finding] = []
    for f in findings:
        for i, m in enumerate(merged):
            if f.start < m.end and m.start < f.end:
                merged[i] = Finding(m.kind, min(m.start, f.start), max(m.end, f.end))
                break
        else:
            merged.append(f)
    # A merge can make two clusters touch each other: repeat until stable (a handful of numbers per message).
    return merged if len(merged) == len(findings) else _merge_overlapping(merged)


# Every detector above needs an "@" (e-mail, @username), "t.me/" (Telegram link) or a digit (IBAN, phone, ID, card
# numbers) in the normalised text; `\d` is any Unicode decimal digit, as in the detectors. Most strings of an event
# (names, ids, words) have none of them and skip the full pass (issue 10: masking was 11 % of the Rasa server's time).
_MAY_HOLD_PII = re.compile(r"[\d@]|t\.me/")


def find_pii(text: str) -> List[Finding]:
    """All personal data spans in `text`, non-overlapping, in text order."""
    if not text:
        return []
    norm = normalize_digits(text)
    if not _MAY_HOLD_PII.search(norm):
        return []
    found: List[Finding] = []
    taken = [False] * len(norm)

    def claim(kind: str, start: int, end: int) -> None:
        if any(taken[start:end]):
            return
        for i in range(start, end):
            taken[i] = True
        found.append(Finding(kind, start, end))

    # Most specific first: addresses, then validated structures, then numbers by length. The address patterns need
    # a literal "@" or "t.me/"; without one they would only backtrack through every word (0.2 ms per long answer).
    has_at = "@" in norm
    if has_at:
        for m in _EMAIL.finditer(norm):
            claim("email", m.start(), m.end())
    if has_at or "t.me/" in norm:
        for m in _TELEGRAM_HANDLE.finditer(norm):
            claim("telegram", m.start(), m.end())
    for m in _IBAN.finditer(norm):
        end = _longest_valid_end(norm, m.start(), m.end(), is_valid_iban)
        if end:
            claim("iban", m.start(), end)
    numbers = [f for f in _number_findings(norm) if not any(taken[f.start:f.end])]
    for f in _merge_overlapping(numbers):
        claim(f.kind, f.start, f.end)
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


# JSON written with ensure_ascii (Rasa's structured debug logs) carries non-ASCII as \\uXXXX: Persian digits,
# NBSP separators, "ö" in an IDN address. Such escapes are written as the characters they stand for before masking.
_ESCAPED_CHAR = re.compile(r"\\u([0-9a-fA-F]{4})")


def _unescape_json_chars(message: str) -> str:
    def char(m: "re.Match[str]") -> str:
        code = int(m.group(1), 16)
        return m.group(0) if 0xD800 <= code <= 0xDFFF else chr(code)

    return _ESCAPED_CHAR.sub(char, message)


class PiiLogFilter(logging.Filter):
    """Masks personal data in log records (message and arguments) before any handler writes them."""

    def filter(self, record: logging.LogRecord) -> bool:
        mask_log_record(record)
        return True


def mask_log_record(record: logging.LogRecord) -> logging.LogRecord:
    """Mask the message, its arguments, the exception (message and traceback) and the stack of a log record.

    The traceback is formatted here, while the record is created: logging.Formatter would format it later, after
    every filter has run, and write an exception message that quotes the customer's text in clear.
    """
    if getattr(record, "_pii_masked", False):
        return record
    try:
        message = record.getMessage()
    except Exception:  # a broken format string must still reach the log, masked
        message = str(record.msg)
    record.msg = mask_text(_unescape_json_chars(message))
    record.args = ()
    if record.exc_info and not record.exc_text:
        try:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        except Exception:  # an exception whose str() fails: keep its type only
            record.exc_text = getattr(record.exc_info[0], "__name__", "exception")
    if record.exc_text:
        record.exc_text = mask_text(_unescape_json_chars(record.exc_text))
    if record.stack_info:
        record.stack_info = mask_text(record.stack_info)
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
