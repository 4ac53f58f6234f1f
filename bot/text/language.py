"""Which language a chat message is written in: "fa", "tr", "en", or None when the message gives no signal.

Rules, in order:
  * empty text, a button payload or command ("/greet", "/start abc") -> None;
  * any Arabic-script letter -> "fa" (the bot serves Persian; "llama 8b رو با qlora" is Persian with English terms);
  * Persian typed in Latin letters ("Finglish": "salam", "mikham llama ro ba qlora") counts for "fa", its markers
    that no Turkish sentence has ("che", "chand", "cheghadr", "mikham", "koja", "shoma", and a pronoun ending such
    as "kartetoon") twice as much; so do
    Persian/Arabic digits and punctuation ("۴۰۹۶", "8B؟"): they come from a Persian keyboard;
  * Latin text: a Turkish-only letter (ğ ş ı İ) counts strongly for Turkish, ç ö ü a little; then each word is
    looked up in the Turkish and English word lists of knowledge/lexicon.yml (Turkish also typed without
    diacritics: "butce", "kac gpu lazim"), Turkish stems match word beginnings and long words with Turkish-only
    endings ("-iyor", "-lık") count for Turkish;
  * model names, GPU names, numbers, units and emoji are neutral: "7B QLoRA 4096" -> None; so are currency
    words and signs ("TL", "lira", "₺", "dolar"): a Persian user types "500 TL" too, and a bare amount must not
    switch the conversation to Turkish;
  * the higher score wins; a tie -> None (the conversation keeps its language).
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Optional

from bot.text.normalize import fold, normalize
from bot.text.numbers import Lexicon, load_lexicon, tokenize

_ARABIC_LETTER_RE = re.compile(
    "[\u0621-\u063a\u0641-\u064a\u0671-\u06d3\u06fa-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufefc]")
# Persian/Arabic digits and punctuation come from a Persian keyboard: a signal even without letters ("۴۰۹۶").
_PERSIAN_KEYBOARD_RE = re.compile("[\u06f0-\u06f9\u0660-\u0669\u060c\u061b\u061f\u066b\u066c]")
# whole words only: the "a" of "A100" is not the English article
_LATIN_WORD_RE = re.compile(r"\b[a-z]+\b")
_STRONG_TURKISH = set("ğşıİĞŞ")
_WEAK_TURKISH = set("çöüÇÖÜ")
# labels of the currency groups in knowledge/lexicon.yml `units`
_CURRENCY_UNITS = {"usd", "try", "toman", "eur"}

STRONG_LETTER_SCORE = 2.0
WEAK_LETTER_SCORE = 1.0
PERSIAN_KEYBOARD_SCORE = 1.0
# a Finglish marker ("che", "chand", "cheghadr", "mikham") weighs as much as a Turkish-only letter: a short
# "llama lora che karti?" is Persian although "karti" (کارتی) reads as the Turkish "kartı" (issue 21, round 4)
FINGLISH_MARKER_SCORE = 2.0
MIN_STEM_LENGTH = 4
MIN_SUFFIX_WORD_LENGTH = 6


def detect_language(text: Optional[str], lexicon: Optional[Lexicon] = None) -> Optional[str]:
    """ "fa", "tr", "en", or None when the message carries no language signal (see the module docstring)."""
    if not isinstance(text, str) or not text.strip():
        return None
    if text.strip().startswith("/"):
        return None
    if _ARABIC_LETTER_RE.search(normalize(text)):
        return "fa"
    lexicon = lexicon or load_lexicon()
    tr_score = STRONG_LETTER_SCORE * any(ch in _STRONG_TURKISH for ch in text)
    tr_score += WEAK_LETTER_SCORE * any(ch in _WEAK_TURKISH for ch in text)
    scores = {"fa": PERSIAN_KEYBOARD_SCORE * bool(_PERSIAN_KEYBOARD_RE.search(text)), "tr": tr_score, "en": 0.0}
    # Each distinct word is looked up once: a long message repeats its words, and a look-up tokenises the word and
    # tries the currency units and every Turkish stem (a 4,000-character message of "a a a ..." took 28 ms, issue 20).
    for word, count in Counter(_LATIN_WORD_RE.findall(fold(text))).items():
        language = _word_language(word, lexicon)
        if language is not None:
            scores[language] += count * (FINGLISH_MARKER_SCORE if _is_finglish_marker(word, lexicon) else 1.0)
    best = max(scores.values())
    winners = [lang for lang, score in scores.items() if score == best]
    return winners[0] if best > 0 and len(winners) == 1 else None


def _word_language(word: str, lexicon: Lexicon) -> Optional[str]:
    """The language one Latin word counts for (knowledge/lexicon.yml word lists), None for a neutral word."""
    if _is_currency_word(word, lexicon):
        return None
    if word in lexicon.fa_latin_words or _is_finglish_marker(word, lexicon):
        return "fa"
    if word in lexicon.en_words or word.startswith(lexicon.en_stems):
        return "en"
    if word in lexicon.tr_words or len(word) >= MIN_STEM_LENGTH and word.startswith(lexicon.tr_stems):
        return "tr"
    if len(word) >= MIN_SUFFIX_WORD_LENGTH and word.endswith(lexicon.tr_suffixes):
        return "tr"
    return None


def _is_finglish_marker(word: str, lexicon: Lexicon) -> bool:
    """ "koja", "shoma", "hastin", or a long word with a Finglish pronoun ending ("kartetoon", "modelhatoon") that
    is not an English word of the lexicon."""
    if word in lexicon.fa_latin_markers:
        return True
    return len(word) >= MIN_SUFFIX_WORD_LENGTH and word.endswith(lexicon.fa_latin_marker_suffixes) \
        and word not in lexicon.en_words


def _is_currency_word(word: str, lexicon: Lexicon) -> bool:
    """ "tl", "lira", "liralik", "dolar", "usd": an amount's unit, whatever language the sentence around it is in."""
    tokens = tokenize(word)
    length, label = lexicon.units.longest_at(tokens, 0)
    return length == len(tokens) and label in _CURRENCY_UNITS
