"""Rasa's WhitespaceTokenizer, with the same words found in linear time (issue 20, finding 1).

Rasa 3.6's WhitespaceTokenizer (rasa/nlu/tokenizers/whitespace_tokenizer.py) blanks punctuation with one
``regex.sub`` of three alternatives before it splits at whitespace (``RASA_PUNCTUATION`` below). The first,
``[^\\w#@&]+(?=\\s|$)``, reads a run of punctuation to its end from every character of the run and gives up when
no space follows it; the other two do not rescue a run of ``. , - ! ? : ; / ( ) [ ] ~ + * = $`` between two
letters, so "a" + 3,998 dots + "a" took 0.8 s on this machine (a 2,000-character one 0.2 s: quadratic), inside
the NLU pipeline, where the whole Rasa instance waits for it.

``blank_punctuation`` computes what that ``regex.sub`` returns in one pass: each alternative's greedy match with
its backtracking is worked out from the end of the run and the last space (or the last other character) inside it,
found with arrays built once per message. The character classes are the same ``regex`` classes Rasa uses, so
Unicode spaces, word characters and marks are classified exactly as there. tests/test_message_path_fuzz.py checks
it against Rasa's pattern on random text; ``LinearWhitespaceTokenizer`` is otherwise Rasa's tokenizer unchanged
(emoji removal, offsets, token pattern), so the features and the trained model are the same.
"""
from __future__ import annotations

import hashlib
import inspect
import sys
from typing import Any, Dict, List, Optional, Text

import regex
from rasa.engine.recipes.default_recipe import DefaultV1Recipe
from rasa.nlu.tokenizers.tokenizer import Token
from rasa.nlu.tokenizers.whitespace_tokenizer import WhitespaceTokenizer
from rasa.shared.nlu.training_data.message import Message

from bot.text.numbers import READ_TOKENS

# The longest word of the training data has 18 characters («مقرون‌به‌صرفه‌ترین», "çalıştırılabiliyor"); a Hugging
# Face id such as "allenai/OLMo-2-1124-13B-Instruct" is split at "/" and "-" well before 40.
FEATURIZED_WORD_CHARS = 40

# The pattern of rasa/nlu/tokenizers/whitespace_tokenizer.py (Rasa 3.6.21), kept to compare with (tests, bench).
RASA_PUNCTUATION = regex.compile(
    r"[^\w#@&]+(?=\s|$)|"
    r"(\s|^)[^\w#@&]+(?=[^0-9\s])|"
    r"(?<=[^0-9\s])[^\w._~:/?#\[\]()@!$&*+,;=-]+(?=[^0-9\s])")
# Runs of the characters each alternative may blank: "not a word" (the first two), "not a word and not a URL
# character" (the third); and single spaces, by Rasa's definitions (the ``regex`` module's \w and \s).
_NOT_WORD_RUN = regex.compile(r"[^\w#@&]+")
_NOT_URL_RUN = regex.compile(r"[^\w._~:/?#\[\]()@!$&*+,;=-]+")
_SPACE = regex.compile(r"\s")
_ASCII_DIGITS = frozenset("0123456789")


class _Classes:
    """Per position: where its run of each class ends, and the last space / the last other character before it."""

    def __init__(self, text: str) -> None:
        n = len(text)
        self.text, self.n = text, n
        self.not_word_end = self._run_ends(_NOT_WORD_RUN, text)
        self.not_url_end = self._run_ends(_NOT_URL_RUN, text)
        spaces = [False] * n
        for match in _SPACE.finditer(text):
            spaces[match.start()] = True
        self.space = spaces
        # last_space[j] / last_solid[j]: the last index < j holding a space / anything but a space (-1: none)
        self.last_space, self.last_solid = [-1] * (n + 1), [-1] * (n + 1)
        for j in range(n):
            self.last_space[j + 1] = j if spaces[j] else self.last_space[j]
            self.last_solid[j + 1] = self.last_solid[j] if spaces[j] else j

    @staticmethod
    def _run_ends(run: "regex.Pattern[str]", text: str) -> List[int]:
        ends = [-1] * len(text)
        for match in run.finditer(text):
            for k in range(match.start(), match.end()):
                ends[k] = match.end()
        return ends

    def digit_or_end(self, position: int) -> bool:
        return position >= self.n or self.text[position] in _ASCII_DIGITS


def _first_alternative(c: _Classes, i: int) -> Optional[int]:
    """``[^\\w#@&]+(?=\\s|$)`` at i: the longest stretch of the run followed by a space or the end."""
    end = c.not_word_end[i]
    if end < 0:
        return None
    if end == c.n:
        return end
    last_space = c.last_space[end]  # a space inside the run; the character after the run is a word character
    return last_space if last_space > i else None


def _run_before_solid(c: _Classes, start: int, run_end: List[int]) -> Optional[int]:
    """``<run class>+(?=[^0-9\\s])`` at ``start``: the longest stretch followed by neither an ASCII digit nor a space
    (nor the end). The character after the whole run is outside the class, hence no space (spaces are in both
    classes); inside the run no character is a digit, so the stretch ends before the run's last non-space."""
    if start >= c.n or run_end[start] < 0:
        return None
    end = run_end[start]
    if not c.digit_or_end(end):
        return end
    last_solid = c.last_solid[end]
    return last_solid if last_solid > start else None


def _second_alternative(c: _Classes, i: int) -> Optional[int]:
    """``(\\s|^)[^\\w#@&]+(?=[^0-9\\s])`` at i: after a space, or (when that fails) at the very beginning."""
    if c.space[i]:
        end = _run_before_solid(c, i + 1, c.not_word_end)
        if end is not None:
            return end
    return _run_before_solid(c, 0, c.not_word_end) if i == 0 else None


def _third_alternative(c: _Classes, i: int) -> Optional[int]:
    """``(?<=[^0-9\\s])[^\\w._~:/?#\\[\\]()@!$&*+,;=-]+(?=[^0-9\\s])`` at i."""
    if i == 0 or c.space[i - 1] or c.text[i - 1] in _ASCII_DIGITS:
        return None
    return _run_before_solid(c, i, c.not_url_end)


# Below this length of the longest run of punctuation and spaces Rasa's own pattern is used: it reads at most
# this many characters from each position, and it is faster than this module's pass on everyday messages
# (0.2 vs 2 ms for 1,000 characters). The cut-off bounds its work at 64 characters per character of the message.
LONGEST_RUN_FOR_RASA_PATTERN = 64


def blank_punctuation(text: str) -> str:
    """``RASA_PUNCTUATION.sub(" ", text)``, in time linear in the length of ``text``."""
    longest_run = max((m.end() - m.start() for m in _NOT_WORD_RUN.finditer(text)), default=0)
    if longest_run <= LONGEST_RUN_FOR_RASA_PATTERN:
        return RASA_PUNCTUATION.sub(" ", text)
    return blank_punctuation_in_one_pass(text)


def blank_punctuation_in_one_pass(text: str) -> str:
    """``RASA_PUNCTUATION.sub(" ", text)`` worked out in one pass over ``text`` (see the module docstring)."""
    c = _Classes(text)
    pieces: List[str] = []
    kept_from = i = 0
    while i < c.n:
        end = _first_alternative(c, i) or _second_alternative(c, i) or _third_alternative(c, i)
        if end is None:
            i += 1
            continue
        pieces += [text[kept_from:i], " "]
        kept_from = i = end
    pieces.append(text[kept_from:])
    return "".join(pieces)


@DefaultV1Recipe.register([DefaultV1Recipe.ComponentType.MESSAGE_TOKENIZER], is_trainable=False)
class LinearWhitespaceTokenizer(WhitespaceTokenizer):
    """Rasa's WhitespaceTokenizer; the punctuation is blanked by ``blank_punctuation`` instead of its regex."""

    @classmethod
    def fingerprint_addon(cls, config: Dict[Text, Any]) -> Optional[str]:
        # Rasa fingerprints only the class source (notes §0.12); the words come from the module's functions.
        return hashlib.sha256(inspect.getsource(sys.modules[__name__]).encode()).hexdigest()

    def tokenize(self, message: Message, attribute: Text) -> List[Token]:
        text = message.get(attribute)
        # From here on as in Rasa 3.6.21's WhitespaceTokenizer.tokenize.
        words = [self.remove_emoji(w) for w in blank_punctuation(text).split()]
        # Only the first READ_TOKENS words are featurized and classified (bot/text/numbers.py says why); no
        # training message comes near it, so the trained model does not change.
        words = [w for w in words if w][:READ_TOKENS]
        if not words:
            words = [text]  # everything removed (":)"): the whole text is one token
        tokens = self._apply_token_pattern(self._convert_words_to_tokens(words, text))
        for token in tokens:
            # A word longer than any word people write ("5-5-5-…" over 4,000 characters) gave the char n-gram
            # featurizer 12,000 n-grams to count (80 ms); its first FEATURIZED_WORD_CHARS say all a classifier can use.
            token.text = token.text[:FEATURIZED_WORD_CHARS]
            token.lemma = token.lemma[:FEATURIZED_WORD_CHARS]  # what the featurizers read (use_lemma)
        return tokens
