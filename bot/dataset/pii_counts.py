"""The one place the data check reaches the project's personal-data detectors (bot/privacy/).

Findings are counted by kind (phone, email, tc_kimlik, national_id, iban, card, telegram, address); their text is
never kept.
"""
from __future__ import annotations

from collections import Counter
from typing import Dict, Iterable

from bot.privacy import find_pii, mask_pii


def count_pii(texts: Iterable[str]) -> Dict[str, int]:
    """Kind -> number of findings over all ``texts``; kinds with none are left out."""
    counts: Counter = Counter()
    for text in texts:
        if text:
            counts.update(finding.kind for finding in find_pii(text))
    return {kind: count for kind, count in counts.items() if count}


def mask(text: str) -> str:
    """`text` with every finding replaced by its placeholder ([PHONE], [EMAIL], [ADDRESS] ...)."""
    return mask_pii(text)
