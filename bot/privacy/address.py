"""Postal addresses in Turkish and Persian messages, found in the normalised copy of a text.

No library reads Turkish or Persian addresses, so this is a small rule set over the word lists in
knowledge/privacy.yml: street words with their place name ("Moda Mah.", "Bahariye Sok.", «خیابان ولیعصر»), numbered
words with their number ("No: 12/3", "Daire 5", «پلاک ۱۲»), postal codes («کد پستی ۱۲۳۴۵۶۷۸۹۰»). Hits next to each
other make one address; it is an address when it has a street word, a postal code or two numbered words. A Turkish
"İlçe/İl" right after it ("Kadıköy/İstanbul") belongs to it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Pattern, Tuple

from bot.knowledge import KnowledgeError, parse_file
from bot.knowledge.schemas import PrivacyWords
from bot.privacy.normalize import normalize_text

WORDS_PATH = Path(__file__).resolve().parents[2] / "knowledge" / "privacy.yml"
LANGS = ("tr", "fa")
KINDS = ("street", "numbered", "postal_code")
# Same-length folding for matching: Turkish dotted/dotless i and capitals read as "i" (str.lower alone would turn
# "İ" into two characters and shift every span after it).
_FOLD = str.maketrans({"İ": "i", "I": "i", "ı": "i"})
# Between two parts of one address: separators and at most two other words ("Moda Mah. Bahariye Sok.", the name is
# part of the second hit; «کوچه بهار، پلاک ۱۲»).
_GAP = re.compile(r"[\s,،؛;:/\-.]*(?:[^\s,،؛;:/\-.]+[\s,،؛;:/\-.]+){0,2}")
_WORD = r"[^\W_][\w'’.\-]*"
_PERSIAN_NAME = r"[^\s,،؛;:.!?()]+"
_NUMBER = r"\d+(?:\s*[/\-]\s*\d+)?(?:[A-Za-z](?![\w]))?"
# "Kadıköy/İstanbul", "34710 Kadıköy / İstanbul" right after the address.
_DISTRICT_CITY = re.compile(r"[\s,]*(?:\d{5}\s+)?[^\W\d_]+\s*/\s*[^\W\d_]+")


class AddressWordsError(KnowledgeError):
    """knowledge/privacy.yml is missing a language or a list, or a list is empty."""


@dataclass(frozen=True)
class _Hit:
    kind: str
    start: int
    end: int


def _alternation(words: List[str]) -> str:
    folded = sorted({normalize_text(w).translate(_FOLD).lower() for w in words}, key=len, reverse=True)
    parts = [re.escape(w).replace(r"\ ", r"\s+") for w in folded]
    return "(?:" + "|".join(parts) + ")"


def load_words(path: Path = WORDS_PATH) -> Dict[str, Dict[str, List[str]]]:
    """knowledge/privacy.yml, checked (bot/knowledge/schemas.py PrivacyWords): both languages have every list."""
    try:
        return parse_file(PrivacyWords, path).dict()
    except KnowledgeError as exc:
        raise AddressWordsError(exc.file, exc.field, exc.reason) from None


@lru_cache(maxsize=2)
def words_before(context: str) -> Pattern[str]:
    """Matches when a text ends with a word of `context` (phone_words, iban_words) and at most a few characters after
    it ("tel: ", «موبایلم », "IBAN: ")."""
    words = load_words()[context]
    return re.compile(rf"(?<![\w]){_alternation(words['tr'] + words['fa'])}[\s:.\-=]{{0,4}}$")


@lru_cache(maxsize=1)
def _patterns() -> Tuple[Tuple[str, Pattern[str]], ...]:
    words = load_words()
    end = r"(?![\w])"
    tr, fa = words["tr"], words["fa"]
    postal = _alternation(tr["postal_code"] + fa["postal_code"])
    numbered = _alternation(tr["numbered"] + fa["numbered"])
    return (
        # Turkish: the place name comes first ("Atatürk Mah.", "1453 Sok."), one or two words.
        ("street", re.compile(rf"(?:{_WORD}\s+){{1,2}}{_alternation(tr['street'])}(?:(?<=\.)|{end})")),
        # Persian: the street word comes first («خیابان ولیعصر», «کوچه شهید رضایی»).
        ("street", re.compile(rf"(?<![\w]){_alternation(fa['street'])}\s*(?:{_PERSIAN_NAME}\s*){{1,2}}")),
        ("postal_code", re.compile(rf"(?<![\w]){postal}\s*[:.]?\s*\d(?:[\s\-]?\d){{4,9}}(?!\d)")),
        ("numbered", re.compile(rf"(?<![\w]){numbered}\s*[:.]?\s*{_NUMBER}")),
    )


def _hits(folded: str) -> List[_Hit]:
    hits: List[_Hit] = []
    for kind, pattern in _patterns():
        hits.extend(_Hit(kind, m.start(), m.end()) for m in pattern.finditer(folded))
    return sorted(hits, key=lambda h: (h.start, -h.end))


def _clusters(folded: str, hits: List[_Hit]) -> List[List[_Hit]]:
    clusters: List[List[_Hit]] = []
    for hit in hits:
        if clusters:
            last_end = max(h.end for h in clusters[-1])
            if hit.start <= last_end or _GAP.fullmatch(folded, last_end, hit.start):
                clusters[-1].append(hit)
                continue
        clusters.append([hit])
    return clusters


def _is_address(cluster: List[_Hit]) -> bool:
    kinds = [h.kind for h in cluster]
    return "street" in kinds or "postal_code" in kinds or kinds.count("numbered") >= 2


def address_spans(norm: str) -> List[Tuple[int, int]]:
    """(start, end) of every address in the normalised copy `norm`."""
    folded = norm.translate(_FOLD).lower()
    if len(folded) != len(norm):  # a letter whose lower case is longer: match on the copy as it is
        folded = norm
    spans = []
    for cluster in _clusters(folded, _hits(folded)):
        if not _is_address(cluster):
            continue
        start, end = min(h.start for h in cluster), max(h.end for h in cluster)
        tail = _DISTRICT_CITY.match(folded, end)
        spans.append((start, tail.end() if tail else end))
    return spans


def may_hold_address(norm: str) -> bool:
    """Cheap test before the full search: the text has one of the words an address needs."""
    return bool(_any_word().search(norm.translate(_FOLD).lower()))


@lru_cache(maxsize=1)
def _any_word() -> Pattern[str]:
    """A street or postal-code word, or a numbered word with its number: what every address has."""
    words = load_words()
    named = [w for lang in LANGS for kind in ("street", "postal_code") for w in words[lang][kind]]
    numbered = [w for lang in LANGS for w in words[lang]["numbered"]]
    named_word = rf"(?<![\w]){_alternation(named)}(?:(?<=\.)|(?![\w]))"
    return re.compile(rf"{named_word}|(?<![\w]){_alternation(numbered)}\s*[:.]?\s*\d")
