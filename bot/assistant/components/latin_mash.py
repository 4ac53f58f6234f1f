"""Latin letters typed at random ("qwpoeiru zxmcn"): nothing to understand, whatever the classifier guesses.

Issue 21, round 4 (blind set): Latin-letter mash that does not run along a keyboard row (the row checks of
language_normalizer.is_keyboard_mash) reached the classifier, which read it as out of scope. Such words cannot be
said: they hold a run of consonants no word we know holds. Which runs are sayable is learnt from the Latin words
of the texts the bot is built from (the NLU data, knowledge/ and domain/: Finglish, Turkish, English and the
technical names), not typed in as a list; a word we know is never mash, and a Finglish or Turkish word the data
lacks still passes when its consonant runs are ones our words have.

A message is mash when it has no letters of another script and every word of it is an unknown Latin word of at
least ``MIN_LETTERS`` letters with an unsayable run: ``MIN_RUN`` consonants in a row that no known word has, or
no vowel at all.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import FrozenSet, Iterable, Tuple

ROOT = Path(__file__).resolve().parents[3]
# The texts whose Latin words are the known ones (data/nlu is absent where only a trained model is shipped; the
# other two are always there).
SOURCES = ("data/nlu", "knowledge", "domain")
VOWELS = frozenset("aeiouyıöüâîû")
LATIN_WORD = re.compile(r"[a-zçğışöüâîû]+")
MIN_LETTERS = 4
MIN_RUN = 3
_HELD = re.compile(r"(.)\1+")
_CONSONANT_RUN = re.compile(r"[^aeiouyıöüâîû]+")
# Finglish writes one Persian consonant with two Latin letters (خ kh, غ gh, ش sh, چ ch, ژ zh): "akhbar", "bakhsh",
# "eshgh" hold three or four Latin consonants in a row but two or three sounds, so each pair counts as one letter
# (an upper-case stand-in, which no casefolded word holds) before the runs are read, in known words and new ones
# alike (issue 21, round 5: Finglish small talk was read as mash).
_FINGLISH_PAIRS = {"kh": "K", "gh": "G", "sh": "S", "ch": "C", "zh": "Z"}
_FINGLISH_PAIR = re.compile("|".join(_FINGLISH_PAIRS))


def _words(text: str) -> Iterable[str]:
    return LATIN_WORD.findall(text.casefold())


@lru_cache(maxsize=1)
def known_latin() -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """(the known Latin words, every MIN_RUN consonants in a row inside them)."""
    words: set = set()
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*.yml")):
            words.update(_words(path.read_text(encoding="utf-8")))
    runs = {run for word in words for run in _consonant_runs(word)}
    return frozenset(words), frozenset(runs)


def _consonant_runs(word: str) -> Iterable[str]:
    """Every MIN_RUN consonants in a row inside the word (linear in its length: a 4,000-letter word is cheap), a
    Finglish pair of letters counted as one."""
    word = _FINGLISH_PAIR.sub(lambda pair: _FINGLISH_PAIRS[pair.group()], word)
    for match in _CONSONANT_RUN.finditer(word):
        run = match.group()
        for start in range(len(run) - MIN_RUN + 1):
            yield run[start:start + MIN_RUN]


def _unsayable(word: str, words: FrozenSet[str], runs: FrozenSet[str]) -> bool:
    # A letter held down or stressed ("hmmm", "salaaam", "testtt") is one letter.
    word = _HELD.sub(r"\1", word)
    if len(word) < MIN_LETTERS or word in words:
        return False
    if not VOWELS.intersection(word) or word.startswith("ğ") or _doubled(word):
        # No Turkish word begins with ğ ("ğüşiöç": the keys right of P and L); "asdasd", "qweqwe" are one stroke
        # typed twice (issue 21, round 7).
        return True
    return any(run not in runs for run in _consonant_runs(word))


def _doubled(word: str) -> bool:
    """The word is one run of three or more letters typed twice ("asdasd")."""
    half = len(word) // 2
    return len(word) % 2 == 0 and half >= MIN_RUN and word[:half] == word[half:]


def is_latin_mash(text: str) -> bool:
    """Every word of the message is Latin letters typed at random (digits and punctuation are ignored)."""
    if not isinstance(text, str):
        return False
    letters = [ch for ch in text.casefold() if ch.isalpha()]
    if not letters or any(not LATIN_WORD.fullmatch(ch) for ch in letters):
        return False
    words, runs = known_latin()
    found = list(_words(text))
    return bool(found) and all(_unsayable(word, words, runs) for word in found)
