"""The copy of a text that personal data is searched in, with a map back to the original characters.

People hide numbers from a reader without meaning to: Persian, Arabic-Indic, fullwidth, mathematical or superscript
digits; line breaks, U+2028, wide gaps, underscores or doubled dashes between the groups; an Arabic comma or
thousands separator, a katakana middle dot; a zero-width joiner inside a number; a tel: or viber: link written
URL-encoded (%2B90%20532...). The detectors see one form of all of these: ASCII digits, "+", "@", "." and "-", every
kind of space as " ", invisible format characters removed and %XX sequences decoded. Each character of the copy
knows the span of the original it came from, so a span found in the copy masks exactly those original characters.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import List, Optional, Tuple

# Dots, commas and dashes written with other code points (Unicode General Punctuation, Arabic, CJK blocks).
_AS_DOT = "\u00b7\u2022\u2027\u2219\u22c5\u30fb\uff65\u06d4\u066b\u0387\u2024\u2e31\u318d\u00b8\ufe52"
_AS_COMMA = "\u060c\u066c\u3001\uff64\ufe50\ufe51\u201a\u02cf"
_AS_DASH = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d\u2e3a\u2e3b\u30fc\u2043\u05be"
_AS_PLUS = "\u207a\u208a\ufb29\ufe62\uff0b\u2795"
_AS_AT = "\uff20\ufe6b"
# One level of %XX is a link; a second (%252B) is a link copied out of another link.
_URL_DECODE_ROUNDS = 2
_PERCENT_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


@dataclass(frozen=True)
class Normalized:
    """`text` is the searchable copy; `starts[i]`/`ends[i]` is the span of the original its character i came from."""

    original: str
    text: str
    starts: Optional[Tuple[int, ...]] = None  # None: one character of the copy per character of the original
    ends: Optional[Tuple[int, ...]] = None

    def span(self, start: int, end: int) -> Tuple[int, int]:
        """The original span behind the copy's [start, end)."""
        if start >= end or self.starts is None or self.ends is None:
            return start, max(start, end)
        return self.starts[start], self.ends[end - 1]


@lru_cache(maxsize=4096)
def _char_form(ch: str) -> str:
    """What one non-ASCII character reads as in the copy ("" for invisible format characters)."""
    digit = unicodedata.digit(ch, None)
    if digit is not None and unicodedata.category(ch) in ("Nd", "No") and 0 <= digit <= 9:
        return str(digit)  # Persian, Arabic-Indic, fullwidth, mathematical, superscript, circled digits
    if ch.isspace():
        return " "  # NBSP, thin spaces, U+2028/2029, ideographic space
    if ch in _AS_DOT:
        return "."
    if ch in _AS_COMMA:
        return ","
    if ch in _AS_DASH:
        return "-"
    if ch in _AS_PLUS:
        return "+"
    if ch in _AS_AT:
        return "@"
    if unicodedata.category(ch) == "Cf" or ch == "\u00ad":
        return ""  # zero-width (non-)joiners, LRM/RLM, bidi controls, BOM, soft hyphen: they only hide a number
    folded = unicodedata.normalize("NFKC", ch)
    # Fullwidth and mathematical letters become ASCII letters; a ligature that expands stays what it was.
    return folded if len(folded) == 1 else ch


def _url_decoded(text: str, starts: List[int], ends: List[int]) -> Tuple[str, List[int], List[int]]:
    """Decode %XX runs as UTF-8 (a decoded Persian digit or NBSP read as the rest of the copy); the decoded
    characters keep the span of their %XX sequence."""
    out: List[str] = []
    new_starts: List[int] = []
    new_ends: List[int] = []
    pos = 0
    for m in _PERCENT_RUN.finditer(text):
        out.append(text[pos:m.start()])
        new_starts.extend(starts[pos:m.start()])
        new_ends.extend(ends[pos:m.start()])
        raw = bytes.fromhex(m.group().replace("%", ""))
        decoded = raw.decode("utf-8", errors="replace")
        if "\ufffd" in decoded:  # not UTF-8 text: keep the sequence as written
            pieces = [(text[i], starts[i], ends[i]) for i in range(m.start(), m.end())]
        else:
            pieces = _decoded_pieces(raw, m.start(), starts, ends)
        out.extend(p for p, _, _ in pieces)
        new_starts.extend(s for _, s, _ in pieces)
        new_ends.extend(e for _, _, e in pieces)
        pos = m.end()
    out.append(text[pos:])
    new_starts.extend(starts[pos:])
    new_ends.extend(ends[pos:])
    return "".join(out), new_starts, new_ends


def _decoded_pieces(raw: bytes, offset: int, starts: List[int], ends: List[int]) -> List[Tuple[str, int, int]]:
    """Each decoded character in its copy form, with the original span of its %XX bytes (3 characters a byte)."""
    pieces = []
    byte = 0
    for ch in raw.decode("utf-8"):
        size = len(ch.encode("utf-8"))
        first, last = offset + 3 * byte, offset + 3 * (byte + size) - 1
        for piece in (ch if ch.isascii() else _char_form(ch)):
            pieces.append((piece, starts[first], ends[last]))
        byte += size
    return pieces


def normalize(text: str) -> Normalized:
    """The searchable copy of `text` (see the module docstring)."""
    if text.isascii() and "%" not in text:
        return Normalized(text, text)
    forms = {ord(ch): _char_form(ch) for ch in set(text) if not ch.isascii()}
    starts: Optional[List[int]] = None
    ends: Optional[List[int]] = None
    if all(len(form) == 1 for form in forms.values()):
        # Most texts (Persian words and digits, Turkish letters): one character for one, str.translate, and the
        # spans need no map (a fifth of the time of the loop below on a 1,700-character answer).
        copy = text.translate(forms)
    else:
        copy, starts, ends = _mapped_copy(text)
    for _ in range(_URL_DECODE_ROUNDS):
        if "%" not in copy or not _PERCENT_RUN.search(copy):
            break
        if starts is None or ends is None:
            starts, ends = list(range(len(copy))), list(range(1, len(copy) + 1))
        copy, starts, ends = _url_decoded(copy, starts, ends)
    if starts is None or ends is None:
        return Normalized(text, copy)
    return Normalized(text, copy, tuple(starts), tuple(ends))


def _mapped_copy(text: str) -> Tuple[str, List[int], List[int]]:
    """The copy built character by character, when some characters vanish (zero-width) or expand."""
    out: List[str] = []
    starts: List[int] = []
    ends: List[int] = []
    for i, ch in enumerate(text):
        form = ch if ch.isascii() else _char_form(ch)
        for piece in form:
            out.append(piece)
            starts.append(i)
            ends.append(i + 1)
    return "".join(out), starts, ends


def normalize_text(text: str) -> str:
    """Only the searchable copy (for callers that need no spans, e.g. reading a contact)."""
    return normalize(text).text


def digits_only(text: str) -> str:
    """Every digit of `text`, in any script, as ASCII."""
    return re.sub(r"\D", "", normalize(text).text)
