"""Reading an answer to the hand-over's consent and contact questions (issue 21, round 4). Pure functions.

The word lists are data: knowledge/lexicon.yml ``declines_contact`` (refuse / here / cancel, also read by
bot.text.replies.declines_contact) and ``consent_answers`` (yes_first / gives / name_intro).

- ``decline_labels``: every kind of decline a message holds, so that "I won't give my number, answer me here" is
  both a refusal and a request to be answered in this chat (declines_contact returns only the first of them).
- ``agrees_to_contact``: "olur, bilgilerimi vereyim", «باشه، اطلاعاتم رو میدم»: a yes with words after it, or
  "I'll give my details" without a yes, that the classifier did not read as affirm.
- ``name_in_answer``: the customer's name typed instead of "yes" ("adım Deniz Kaya", «اسمم سارا رضایی است»,
  "Deniz Kaya", «سارا رضایی»): a yes, and the name goes on the ticket.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import FrozenSet, List, Optional

from bot.text.normalize import fold
from bot.text.numbers import LEXICON_PATH, PhraseTable, load_lexicon, tokenize

# A name typed alone: two or three words, each a capitalised word of Latin letters (Turkish ones included), or
# each a word of Persian letters that no text the bot is built from holds («نگار صالحی»).
_LATIN_NAME_WORD = re.compile(r"^[A-ZÇĞİÖŞÜ][a-zçğıöşü]+$")
_PERSIAN_WORD = re.compile(r"^[\u0600-\u06FF]+$")
NAME_WORDS = (2, 3)
_WORD = re.compile(r"[^\W\d_]+")
ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("data/nlu", "knowledge", "domain")
# The longest name kept after an introduction ("adım Deniz Kaya Yılmaz"), in words.
NAME_MAX_WORDS = 4


@lru_cache(maxsize=1)
def _tables() -> dict:
    from bot.knowledge import read_yaml

    groups = read_yaml(LEXICON_PATH)["consent_answers"]
    tables = {}
    for key, phrases in groups.items():
        table = PhraseTable()
        for words in phrases:
            table.add(words, key)
        tables[key] = table
    return tables


@lru_cache(maxsize=1)
def _known_words() -> FrozenSet[str]:
    """Every word (folded) of the texts the bot is built from (the same as bot.assistant.components.latin_mash
    reads; not imported from there, which would load Rasa into the action server)."""
    words: set = set()
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*.yml")):
            words.update(_WORD.findall(fold(path.read_text(encoding="utf-8"))))
    return frozenset(words)


def _persian_name(words: List[str]) -> bool:
    """Two or three Persian words none of which is a word we know: a name («سارا رضایی»). Keyboard mash is
    unknown too: the caller leaves out messages the NLU found no words in (actions/handoff.py)."""
    if len(words) not in NAME_WORDS or not all(_PERSIAN_WORD.match(w) for w in words):
        return False
    known = _known_words()
    folded = _WORD.findall(fold(" ".join(words)))
    return len(folded) == len(words) and not any(w in known for w in folded)


def _labels(table: PhraseTable, text: str) -> FrozenSet[str]:
    tokens = tokenize(fold(text))
    return frozenset(label for k in range(len(tokens)) for label in (table.longest_at(tokens, k)[1],) if label)


def decline_labels(text: str) -> FrozenSet[str]:
    """Every label of ``declines_contact`` found in ``text`` (a leading "no" counts as "refuse")."""
    if not isinstance(text, str) or not text.strip():
        return frozenset()
    table = load_lexicon().declines_contact
    tokens = tokenize(fold(text))
    found = set(_labels(table, text))
    if tokens and table.longest_at(tokens, 0)[1] == "no_first":
        found.add("refuse")
    found.discard("no_first")
    return frozenset(found)


def agrees_to_contact(text: str) -> bool:
    """A yes with more words after it, or a promise to give the contact; never when the message declines."""
    if not isinstance(text, str) or not text.strip() or decline_labels(text):
        return False
    tokens = tokenize(fold(text))
    if not tokens:
        return False
    if _tables()["yes_first"].any_at(tokens, 0):
        return True
    gives = _tables()["gives"]
    return any(gives.any_at(tokens, k) for k in range(len(tokens)))


def name_in_answer(text: str) -> Optional[str]:
    """The name a customer typed in answer to the consent question, or None.

    Either introduced ("adım Deniz Kaya", «اسمم سارا رضایی است», "my name is ...": the words after the
    introduction, at most NAME_MAX_WORDS, without a closing «است» / «هستم»), or typed alone as two or three
    capitalised Latin words ("Deniz Kaya") or Persian words we do not know («سارا رضایی»). A message that
    declines is never a name.
    """
    if not isinstance(text, str) or not text.strip() or decline_labels(text) or "?" in text or "؟" in text:
        return None
    stripped = text.strip().strip(".!،,")
    words = stripped.split()
    if len(words) in NAME_WORDS and all(_LATIN_NAME_WORD.match(w) for w in words) or _persian_name(words):
        return stripped
    folded = fold(stripped)
    # fold() keeps the length for the letters names are written in; when it did not, the folded name is kept.
    source = stripped if len(folded) == len(stripped) else folded
    tokens = tokenize(folded)
    intro = _tables()["name_intro"]
    for k in range(len(tokens)):
        length, _ = intro.longest_at(tokens, k)
        if length:
            ends = _tables()["name_end"]
            rest = [t for i, t in enumerate(tokens[k + length:], k + length)
                    if t.text.isalpha() and not ends.any_at(tokens, i)]
            return source[rest[0].start:rest[-1].end] if 1 <= len(rest) <= NAME_MAX_WORDS else None
    return None
