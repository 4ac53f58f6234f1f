"""What a question about the answer asks (issue 21 #3): its kind (why this card, why not another, hours, how many
GPUs, a cheaper or a faster option, which is better) and the catalogue cards it names.

Pure and linear: the message is tokenised once and each word list (knowledge/followups.yml) looked up by first
word, as the value parser does (bot.text.numbers.PhraseTable); no regular expression runs over the message.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from bot.knowledge import parse_file
from bot.knowledge.schemas import FollowupWords
from bot.text.normalize import fold
from bot.text.numbers import READ_TOKENS, PhraseTable, tokenize

FOLLOWUPS_PATH = Path(__file__).resolve().parents[2] / "knowledge" / "followups.yml"
KINDS = ("gpu_count", "hours", "why", "cheaper", "faster", "better")
# Words of a card's name that customers leave out or add ("rtx 4090", "nvidia h100", "a100 80gb").
CARD_NOISE = ("nvidia", "rtx", "geforce", "tesla", "pcie", "sxm")


@dataclass(frozen=True)
class FollowUp:
    kind: Optional[str]  # one of KINDS, None when no kind word is in the message
    cards: Tuple[str, ...] = field(default_factory=tuple)  # catalogue ids named, in order, without repeats


@lru_cache(maxsize=1)
def _words() -> FollowupWords:
    """knowledge/followups.yml, validated by the knowledge layer (schema: bot/knowledge/schemas.py)."""
    return parse_file(FollowupWords, FOLLOWUPS_PATH)


@lru_cache(maxsize=1)
def _kind_table() -> PhraseTable:
    kinds: Dict[str, List[str]] = _words().kinds
    unknown = set(kinds) - set(KINDS)
    if unknown or not all(kinds.get(kind) for kind in KINDS):
        raise ValueError(f"{FOLLOWUPS_PATH}: kinds must be exactly {KINDS} (unknown: {sorted(unknown)})")
    table = PhraseTable()
    for kind in KINDS:
        for phrase in kinds[kind]:
            table.add(str(phrase).split(), kind)
    return table


@lru_cache(maxsize=1)
def _other_workload_table() -> PhraseTable:
    phrases = _words().other_workload  # the schema requires at least one
    table = PhraseTable()
    for phrase in phrases:
        table.add(fold(str(phrase)).split(), "other_workload")
    return table


def names_other_workload(text: str) -> bool:
    """The message names image or vision work ("train an image model on our photos")."""
    tokens = tokenize(fold(text or ""), READ_TOKENS)
    table = _other_workload_table()
    return any(table.longest_at(tokens, i)[0] for i in range(len(tokens)))


_CARD_TABLES: Dict[int, Tuple[object, PhraseTable]] = {}


def _card_table(kb) -> PhraseTable:
    cached = _CARD_TABLES.get(id(kb))
    if cached is not None and cached[0] is kb:
        return cached[1]
    table = PhraseTable()
    for card in kb.gpus:
        for name in (card.name, card.id):
            words = [t.text for t in tokenize(fold(name)) if t.text not in CARD_NOISE]
            if words:
                table.add(words, card.id)
    _CARD_TABLES[id(kb)] = (kb, table)
    return table


def read_followup(text: str, kb) -> FollowUp:
    tokens = tokenize(fold(text or ""), READ_TOKENS)
    kinds, cards = _kind_table(), _card_table(kb)
    found_kinds: List[str] = []
    named: List[str] = []
    i = 0
    while i < len(tokens):
        length, card = cards.longest_at(tokens, i)
        ends_cleanly = i + length >= len(tokens) or not (tokens[i + length].glued and tokens[i + length].is_number)
        if length and ends_cleanly and card is not None:  # a matched phrase always has its label
            if card not in named:
                named.append(card)
            i += length
            continue
        length, kind = kinds.longest_at(tokens, i)
        if length and kind is not None:
            found_kinds.append(kind)
        i += max(length, 1)
    kind = min(found_kinds, key=KINDS.index) if found_kinds else None
    return FollowUp(kind=kind, cards=tuple(named))
