"""Numbers that are personal data, found in the normalised copy of a text (bot.privacy.normalize).

A number is read as a run of digit groups: groups joined by spaces of any width (line breaks included), dots,
commas, dashes (doubled too), slashes, brackets or underscores. Every contiguous range of groups is tried against the
kinds (bot.privacy.checks), so the way a customer groups a number does not hide it. A long group of digits is also
searched inside: two numbers glued together ("10000000146" + "05321234567") are both found. A group inside a
hash-like token ("4f1c2a90b3d8...") is no number; a group glued to a word ("tc10000000146", "05321234567abc") is.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, Iterator, List, Optional, Tuple

from bot.privacy.address import words_before
from bot.privacy.checks import (is_valid_card, is_valid_iban, is_valid_ir_national_id, is_valid_tc_kimlik,
                                phone_number)

_FOLD = str.maketrans({"İ": "i", "I": "i", "ı": "i"})  # as bot.privacy.address: same length
_DIGIT_GROUP = re.compile(r"\d+")
# Between two groups of one number: any whitespace, and at most four of the other separators people type.
_GROUP_SEPARATOR = re.compile(r"\s*(?:[.,\-/()_'*~|\\]\s*){0,4}")
# Written right before a number, these make it international: "+90 ...", wa.me/90..., tel:/viber:/sms: links.
_INTERNATIONAL_BEFORE = re.compile(
    r"(?:\+\s*\(?\s*|(?:wa\.me/|whatsapp\.com/send\?phone=|(?:tel|callto|sms|viber|skype|whatsapp):/{0,2}"
    r"(?:[\w.?&]*(?:number|phone)=)?)\+?\s*\(?)$", re.I)
# An extension after a phone number: "x12", "ext. 12", "dahili 12", «داخلی ۱۲».
_EXTENSION_AFTER = re.compile(r"\s*(?:x|ext\.?|extension|dahili|داخلی)\s*[:.]?\s*\d{1,6}", re.I)
# After an IBAN word: a Turkish or Iranian IBAN without its country code (24 digits) or also without its check
# digits (22), as grouped by the writer.
_IBAN_BODY_DIGITS = (22, 24)
_MAX_NUMBER_DIGITS = 24  # the longest kind: an IBAN written without its country code (TR/IR: 24 digits)
# The shortest kind: a seven-digit phone number of a country written with "+". A run of groups with fewer digits in
# all holds none, and a text's prices, sizes and token counts are such runs: they skip the window search (issue 10).
MIN_NUMBER_DIGITS = 7
# A group longer than a card may be two numbers glued together: searched inside from this length on.
_GLUED_FROM_DIGITS = 14
# Letter/digit changes in one token from which it is a hash or an id, not a number glued to a word.
_HASH_TRANSITIONS = 4


@dataclass(frozen=True)
class Span:
    kind: str
    start: int
    end: int


def number_spans(norm: str) -> List[Span]:
    """Personal-data numbers in the normalised copy `norm`, longest first (they may overlap)."""
    candidates: List[Tuple[int, int, int, str]] = []  # (-digits, start, end, kind)
    for run in _digit_runs(norm):
        if sum(end - start for start, end in run) < MIN_NUMBER_DIGITS:
            continue
        dates = _unit_groups(norm, run)
        for first in range(len(run)):
            candidates.extend(_windows_from(norm, run, first, dates))
        for start, end in run:
            if end - start >= _GLUED_FROM_DIGITS:
                candidates.extend(_glued_inside(norm, start, end))
    spans = [Span(kind, start, end) for _, start, end, kind in sorted(candidates)]
    return [_with_extension(norm, s) for s in spans]


def _windows_from(norm: str, run: List[Tuple[int, int]], first: int, dates: Dict[int, int]) -> \
        Iterator[Tuple[int, int, int, str]]:
    prefix_start = max(0, run[first][0] - 40)
    prefix = _INTERNATIONAL_BEFORE.search(norm, prefix_start, run[first][0])
    international = prefix is not None
    plus = norm.rfind("+", prefix.start(), run[first][0]) if prefix else -1
    before = norm[max(0, run[first][0] - 20):run[first][0]].translate(_FOLD).lower()
    said_phone = international or words_before("phone_words").search(before) is not None
    said_iban = words_before("iban_words").search(before) is not None
    groups: List[str] = []
    separators: List[str] = []
    digits = 0
    first_unit = dates.get(first)
    mixes_unit = False
    for last in range(first, len(run)):
        groups.append(norm[run[last][0]:run[last][1]])
        digits += run[last][1] - run[last][0]
        if digits > _MAX_NUMBER_DIGITS:
            return
        if last > first:
            separators.append(norm[run[last - 1][1]:run[last][0]].strip())
            # part of a date or amount and another number next to it ("03.12.2026 — 2048 token")
            mixes_unit = mixes_unit or dates.get(last) != first_unit
        if mixes_unit or digits < MIN_NUMBER_DIGITS:
            continue
        kind = "iban" if said_iban and digits in _IBAN_BODY_DIGITS else \
            _number_kind_cached(tuple(groups), international, tuple(separators), said_phone)
        if not kind:
            continue
        start = run[first][0]
        if kind == "phone" and plus >= 0:
            start = plus  # the "+" belongs to the number: "+90 532 ..." is masked whole
        if kind == "iban" and start >= 2 and norm[start - 2:start].isalpha():
            start -= 2  # "TR" written before the digits, maybe glued to them
        if start > 0 and norm[start - 1] == "(":
            start -= 1  # "(0532) 123 45 67"
        yield -digits, start, run[last][1], kind


def _unit_groups(norm: str, run: List[Tuple[int, int]]) -> Dict[int, int]:
    """The groups of a run that make a date or an amount, each mapped to the index of its unit's first group.

    A date is three groups joined by one "." "/" or "-" with a four-digit year first or last (03.12.2026,
    2026-12-03, ۱۴۰۵/۰۹/۱۲); an amount is a longest series of groups joined by one "," "." or "'" in thousands
    groups (2,500, 1.500.000.000). Neither counts right after a "+" ("+90.236 538 ..." is a country code). Such a
    unit next to another number ("$2,500 — 1.500.000.000 token") is two values side by side.
    """
    groups = [norm[s:e] for s, e in run]
    raw = [norm[run[i][1]:run[i + 1][0]] for i in range(len(run) - 1)]
    units: Dict[int, int] = {}
    for i in range(len(groups) - 2):
        if raw[i] == raw[i + 1] and _is_date(groups[i:i + 3], raw[i]):
            units.update({j: i for j in (i, i + 1, i + 2) if j not in units})
    start = 0
    while start < len(raw):
        end = start + 1
        while end < len(raw) and raw[end] == raw[start]:
            end += 1
        chain = groups[start:end + 1]
        if raw[start] in (",", ".", "'") and _thousands(chain, [raw[start]] * (len(chain) - 1)):
            units.update({j: start for j in range(start, end + 1) if j not in units})
        start = end
    return {j: u for j, u in units.items()
            if not _INTERNATIONAL_BEFORE.search(norm, max(0, run[u][0] - 40), run[u][0])}


def _is_date(chain: List[str], separator: str) -> bool:
    sizes = [len(g) for g in chain]
    return separator in (".", "/", "-") and (sizes in ([1, 1, 4], [1, 2, 4], [2, 1, 4], [2, 2, 4]) or
                                               sizes == [4, 2, 2])


def _thousands(groups: List[str], separators: List[str]) -> bool:
    """2,500 / 1.500.000.000 / 5 320 000 000: an amount in thousands groups, not a phone number or an ID."""
    if len(groups) < 2 or groups[0].startswith("0") or not 1 <= len(groups[0]) <= 3:
        return False
    if not all(len(g) == 3 for g in groups[1:]) or len(set(separators)) != 1:
        return False
    return separators[0] in (",", ".", "'") or separators[0] == "" and len(groups) >= 3


@lru_cache(maxsize=4096)
def _number_kind_cached(groups: Tuple[str, ...], international: bool, separators: Tuple[str, ...],
                        said_phone: bool) -> Optional[str]:
    """number_kind for the windows of a text: a long run of repeated groups asks the same question many times."""
    return number_kind(list(groups), international, list(separators), said_phone)


def number_kind(groups: List[str], international: bool = False, separators: Optional[List[str]] = None,
                said_phone: bool = False) -> Optional[str]:
    """The kind of personal data the digits of `groups` (one number as grouped by its writer) are, or None.

    `said_phone`: a phone word or "+" comes right before the number; a ten-digit number that is both a mobile
    number and a valid national code is then a phone, otherwise a national code."""
    d = "".join(groups)
    amount = not international and _thousands(groups, separators or [])
    if len(d) == 11 and is_valid_tc_kimlik(d):
        return "tc_kimlik"
    if 13 <= len(d) <= 19 and _card_grouping_ok(groups) and is_valid_card(d):
        return "card"
    if len(d) == 24 and (is_valid_iban("TR" + d) or is_valid_iban("IR" + d)):
        return "iban"
    if amount:
        return None
    phone = phone_number(d, international) if len(d) <= 15 else None
    if phone is not None and (said_phone or len(d) != 10):
        return "phone"
    if len(d) == 10 and is_valid_ir_national_id(d):
        return "national_id"
    return "phone" if phone is not None else None


def _card_grouping_ok(groups: List[str]) -> bool:
    """Card numbers are written in one piece, in fours (the last group shorter), or 4-6-5 / 4-6-4 (Amex, Diners)."""
    sizes = [len(g) for g in groups]
    if len(sizes) == 1:
        return True
    if all(n == 4 for n in sizes[:-1]) and 1 <= sizes[-1] <= 4:
        return True
    return sizes in ([4, 6, 5], [4, 6, 4])


def _glued_inside(norm: str, start: int, end: int) -> Iterator[Tuple[int, int, int, str]]:
    """Numbers inside one long group of digits: the whole group is masked under the kind of the longest found."""
    digits = norm[start:end]
    if number_kind([digits]) or _patterned(digits):
        return
    for length in (11, 12, 13, 10, 16, 15, 19, 14, 17, 18):
        for offset in range(0, len(digits) - length + 1):
            kind = number_kind([digits[offset:offset + length]])
            if kind:
                yield -(end - start), start, end, kind
                return


def _patterned(digits: str) -> bool:
    """One or two digits repeated, or a block that is no number repeated ("1234567890" x 3): filler a customer types
    to test a form, not two numbers glued together (any long string holds a valid ten-digit code somewhere)."""
    if len(set(digits)) <= 2:
        return True
    for period in range(1, 12):
        if len(digits) >= 2 * period and all(digits[i] == digits[i + period] for i in range(len(digits) - period)):
            return number_kind([digits[:period]]) is None
    return False


def _digit_runs(norm: str) -> List[List[Tuple[int, int]]]:
    """Runs of digit groups as lists of (start, end) spans."""
    runs: List[List[Tuple[int, int]]] = []
    current: List[Tuple[int, int]] = []
    last_end = -1
    hashes = _hash_tokens(norm)
    hash_starts = [s for s, _ in hashes]
    for m in _DIGIT_GROUP.finditer(norm):
        start, end = m.start(), m.end()
        k = bisect.bisect_right(hash_starts, start) - 1
        if k >= 0 and hashes[k][0] <= start < hashes[k][1]:
            if current:
                runs.append(current)
            current, last_end = [], -1
            continue
        if current and _GROUP_SEPARATOR.fullmatch(norm, last_end, start):
            current.append((start, end))
        else:
            if current:
                runs.append(current)
            current = [(start, end)]
        last_end = end
    if current:
        runs.append(current)
    return runs


_ASCII_TOKEN = re.compile(r"[A-Za-z0-9]+")
_LETTER_DIGIT_CHANGE = re.compile(r"[A-Za-z](?=[0-9])|[0-9](?=[A-Za-z])")


def _hash_tokens(norm: str) -> List[Tuple[int, int]]:
    """Spans of the ASCII letters-and-digits tokens that change between letters and digits often: ids and hashes
    ("4f1c2a90b3d8..."), not a number glued to a word ("tc10000000146", "05321234567abc"). Found once per text."""
    return [(m.start(), m.end()) for m in _ASCII_TOKEN.finditer(norm)
            if not m.group().isdigit() and len(_LETTER_DIGIT_CHANGE.findall(m.group())) >= _HASH_TRANSITIONS]


def _with_extension(norm: str, span: Span) -> Span:
    if span.kind != "phone":
        return span
    ext = _EXTENSION_AFTER.match(norm, span.end)
    return Span(span.kind, span.start, ext.end()) if ext else span
