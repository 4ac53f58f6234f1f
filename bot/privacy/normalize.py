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
from typing import List, Tuple

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
    starts: Tuple[int, ...]
    ends: Tuple[int, ...]

    def span(self, start: int, end: int) -> Tuple[int, int]:
        """The original span behind the copy's [start, end)."""
        if start >= end:
            return start, start
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
    """Decode %XX runs as UTF-8; the decoded characters keep the span of their %XX sequence."""
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
            decoded, spans = m.group(), [(starts[i], ends[i]) for i in range(m.start(), m.end())]
        else:
            spans = _decoded_spans(raw, m.start(), starts, ends)
        out.append(decoded)
        new_starts.extend(s for s, _ in spans)
        new_ends.extend(e for _, e in spans)
        pos = m.end()
    out.append(text[pos:])
    new_starts.extend(starts[pos:])
    new_ends.extend(ends[pos:])
    return "".join(out), new_starts, new_ends


def _decoded_spans(raw: bytes, offset: int, starts: List[int], ends: List[int]) -> List[Tuple[int, int]]:
    """For each decoded character, the original span of its %XX bytes (3 characters per byte)."""
    spans = []
    byte = 0
    for ch in raw.decode("utf-8"):
        size = len(ch.encode("utf-8"))
        first, last = offset + 3 * byte, offset + 3 * (byte + size) - 1
        spans.append((starts[first], ends[last]))
        byte += size
    return spans


def normalize(text: str) -> Normalized:
    """The searchable copy of `text` (see the module docstring)."""
    if text.isascii() and "%" not in text:
        identity = tuple(range(len(text)))
        return Normalized(text, text, identity, tuple(i + 1 for i in identity))
    out: List[str] = []
    starts: List[int] = []
    ends: List[int] = []
    for i, ch in enumerate(text):
        form = ch if ch.isascii() else _char_form(ch)
        for piece in form:
            out.append(piece)
            starts.append(i)
            ends.append(i + 1)
    copy = "".join(out)
    for _ in range(_URL_DECODE_ROUNDS):
        if "%" not in copy or not _PERCENT_RUN.search(copy):
            break
        copy, starts, ends = _url_decoded(copy, starts, ends)
        if not copy.isascii():  # a decoded Persian digit or NBSP: read it as the rest of the copy
            copy, starts, ends = _renormalized(copy, starts, ends)
    return Normalized(text, copy, tuple(starts), tuple(ends))


def _renormalized(copy: str, starts: List[int], ends: List[int]) -> Tuple[str, List[int], List[int]]:
    out: List[str] = []
    new_starts: List[int] = []
    new_ends: List[int] = []
    for ch, s, e in zip(copy, starts, ends):
        for piece in (ch if ch.isascii() else _char_form(ch)):
            out.append(piece)
            new_starts.append(s)
            new_ends.append(e)
    return "".join(out), new_starts, new_ends


def normalize_text(text: str) -> str:
    """Only the searchable copy (for callers that need no spans, e.g. reading a contact)."""
    return normalize(text).text


def digits_only(text: str) -> str:
    """Every digit of `text`, in any script, as ASCII."""
    return re.sub(r"\D", "", normalize(text).text)
