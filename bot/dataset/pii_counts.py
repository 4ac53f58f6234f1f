"""The one place the data check reaches the project's personal-data detectors (bot/tickets/pii.py today).

When the detectors move (bot/privacy/), only the import below changes. Findings are counted by kind; their text is
never kept. Addresses, which the ticket detectors do not look for, are found here: a street word
(knowledge/dataset.yml `address_words`) followed within a few words by a house number.
"""
from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import Dict, Iterable

from bot.tickets.pii import find_pii, mask_text  # the adapter's single import of the detectors

ADDRESS_MASK = "[ADDRESS]"
_WORDS_BETWEEN = 3  # "Atatürk Caddesi No: 12", "خیابان آزادی پلاک ۱۲": the number follows within three words


@lru_cache(maxsize=1)
def _address_pattern() -> "re.Pattern[str]":
    from bot.dataset.texts import load_dataset_knowledge

    words = sorted(load_dataset_knowledge().address_words, key=len, reverse=True)
    alternatives = "|".join(re.escape(word) for word in words)
    return re.compile(rf"(?i)(?<!\w)(?:{alternatives})(?:\s+\S+){{0,{_WORDS_BETWEEN}}}?\s*[:.]?\s*[0-9۰-۹٠-٩]+")


@lru_cache(maxsize=1)
def _address_words() -> tuple:
    from bot.dataset.texts import load_dataset_knowledge

    return tuple(word.casefold() for word in load_dataset_knowledge().address_words)


def count_pii(texts: Iterable[str]) -> Dict[str, int]:
    """Kind -> number of findings (phone, email, tc_kimlik, ir_national_id, iban, card, telegram, address)."""
    counts: Counter = Counter()
    pattern, words = _address_pattern(), _address_words()
    for text in texts:
        if not text:
            continue
        for finding in find_pii(text):
            counts[finding.kind] += 1
        folded = text.casefold()
        if any(word in folded for word in words):  # substring tests first: the pattern is slow on every position
            counts["address"] += sum(1 for _ in pattern.finditer(text))
    return {kind: count for kind, count in counts.items() if count}


def mask(text: str) -> str:
    """`text` with every finding replaced by its placeholder ([PHONE], [EMAIL], [ADDRESS] ...)."""
    return _address_pattern().sub(ADDRESS_MASK, mask_text(text))
