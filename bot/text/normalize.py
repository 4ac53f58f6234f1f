"""Text normalisation for Persian, Turkish and English chat messages.

Two functions:

* ``normalize(text)`` returns a string of exactly the same length, character for character, so entity offsets
  that Rasa computes on the normalised text point at the same characters of what the user typed. It
  - maps Arabic letters typed on Arabic keyboards to their Persian forms (ي ى → ی, ك → ک, ة ۀ → ه, أ إ ٱ → ا, ؤ → و),
  - maps Persian (۰-۹) and Arabic-Indic (٠-٩) digits to ASCII and the Arabic decimal/thousands separators
    (٫ ٬) to "." and ",", the Arabic comma/semicolon/question mark/percent to ASCII,
  - turns the zero-width non-joiner (half-space, U+200C) and the other invisible or exotic spaces into a plain
    space: "می‌خوام" becomes "می خوام", which is how people type it without a half-space, so both spellings
    give the same tokens to Rasa's whitespace tokenizer,
  - maps fullwidth forms and Arabic presentation forms to their ordinary letters when that is one character,
  - maps the dash family (‐ ‑ – — −) to "-",
  - lower-cases, one character at a time: Turkish "İ" becomes "i" (Python's "İ".lower() is two characters),
    and "I" becomes dotless "ı" inside a word that carries other Turkish letters (a Turkish keyboard writes
    "ı" in upper case as "I"), "i" elsewhere.
  Tatweel (ـ) and Arabic diacritics stay: removing them would change the length.

* ``fold(text)`` is the matching form the parser and the language detector use; it may change the length:
  ``normalize`` plus tatweel and diacritics removed, آ → ا, Turkish letters to ASCII (ç→c ğ→g ı→i ö→o ş→s ü→u,
  â î û → a i u), a suffix after an apostrophe dropped ("LoRA'yı" → "lora").
"""
from __future__ import annotations

import re
import unicodedata

_ARABIC_TO_PERSIAN = {
    "\u064a": "\u06cc",  # ي ARABIC YEH -> ی FARSI YEH
    "\u0649": "\u06cc",  # ى ALEF MAKSURA -> ی
    "\u06d0": "\u06cc",  # ې
    "\u06cd": "\u06cc",  # ۍ
    "\u0643": "\u06a9",  # ك ARABIC KAF -> ک KEHEH
    "\u06aa": "\u06a9",  # ڪ SWASH KAF -> ک
    "\u0629": "\u0647",  # ة TEH MARBUTA -> ه
    "\u06c0": "\u0647",  # ۀ HEH WITH YEH ABOVE -> ه (the hamza is usually omitted in chat)
    "\u06c1": "\u0647",  # ہ HEH GOAL
    "\u06be": "\u0647",  # ھ HEH DOACHASHMEE
    "\u06d5": "\u0647",  # ە AE
    "\u0623": "\u0627",  # أ
    "\u0625": "\u0627",  # إ
    "\u0671": "\u0627",  # ٱ
    "\u0624": "\u0648",  # ؤ
}

_PUNCTUATION = {
    "\u066b": ".",  # ٫ ARABIC DECIMAL SEPARATOR
    "\u066c": ",",  # ٬ ARABIC THOUSANDS SEPARATOR
    "\u060c": ",",  # ، ARABIC COMMA
    "\u061b": ";",  # ؛ ARABIC SEMICOLON
    "\u061f": "?",  # ؟ ARABIC QUESTION MARK
    "\u066a": "%",  # ٪ ARABIC PERCENT SIGN
    "\u066d": "*",  # ٭
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
    "\u2018": "'", "\u2019": "'", "\u201b": "'", "\u02bc": "'", "\u00b4": "'", "\u0060": "'",
    "\u201c": '"', "\u201d": '"', "\u00ab": '"', "\u00bb": '"',
}

# Invisible characters and exotic spaces. All become a plain space (one character for one character).
_SPACES = {
    "\u200c",  # ZERO WIDTH NON-JOINER (Persian half-space)
    "\u200b", "\u200d", "\u2060", "\ufeff",  # zero width space / joiner, word joiner, BOM
    "\u200e", "\u200f", "\u061c",  # LRM, RLM, ARABIC LETTER MARK
    "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069",  # bidi controls
    "\u00a0", "\u2007", "\u202f", "\u3000", "\u00ad",  # no-break spaces, ideographic space, soft hyphen
    "\t", "\r", "\n", "\u000b", "\u000c", "\u2028", "\u2029", "\u0085",
} | {chr(c) for c in range(0x2000, 0x200B)}

_TURKISH_MARKERS = set("ğĞşŞıİçÇöÖüÜ")


def _build_tables():
    """Translation tables (code point -> one character) for str.translate: cased, and lower-casing (adds İ -> i)."""
    table = {ord(ch): " " for ch in _SPACES}
    table.update({ord(k): v for k, v in _ARABIC_TO_PERSIAN.items()})
    table.update({ord(k): v for k, v in _PUNCTUATION.items()})
    for offset in range(10):
        table[0x06F0 + offset] = str(offset)  # Persian digits
        table[0x0660 + offset] = str(offset)  # Arabic-Indic digits
    # Fullwidth forms and Arabic presentation forms: their compatibility form when that is one character, itself
    # passed through the table ("ﻙ" -> "ك" -> "ک"). Ligatures such as "ﻻ" (two letters) stay.
    for code in [*range(0xFF01, 0xFF5F), *range(0xFB50, 0xFE00), *range(0xFE70, 0xFF00)]:
        folded = unicodedata.normalize("NFKC", chr(code))
        if len(folded) == 1 and folded != chr(code):
            table[code] = table.get(ord(folded), folded)
    lowering = dict(table)
    lowering[0x0130] = "i"  # İ: "İ".lower() is "i" + COMBINING DOT ABOVE, two characters
    return table, lowering


_CASED_TABLE, _LOWERING_TABLE = _build_tables()
_WORD_RE = re.compile(r"\w+")


def normalize(text: str, lowercase: bool = True) -> str:
    """Same-length normalisation of a chat message (see the module docstring)."""
    if not text:
        return text
    if not lowercase:
        return text.translate(_CASED_TABLE)
    # Once İ is replaced no character lower-cases to two, so .lower() keeps the length.
    result = text.translate(_LOWERING_TABLE).lower()
    if "I" not in text:
        return result
    chars = list(result)
    for match in _WORD_RE.finditer(text):
        word = match.group()
        if "I" in word and _TURKISH_MARKERS.intersection(word):
            for offset, ch in enumerate(word):
                if ch == "I":
                    chars[match.start() + offset] = "ı"  # a Turkish keyboard writes "ı" in upper case as "I"
    return "".join(chars)


# Arabic diacritics (harakat, tanwin, shadda, sukun, superscript alef, Quranic marks) and tatweel.
_MARKS_RE = re.compile("[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640]")
_TURKISH_FOLD = str.maketrans({
    "ç": "c", "ğ": "g", "ı": "i", "ö": "o", "ş": "s", "ü": "u", "â": "a", "î": "i", "û": "u", "\u0307": None,
    "آ": "ا", "'": " ", '"': " ",
})


# A Turkish case suffix written after an apostrophe ("LoRA'yı", "8B'lik", "GPU'ya") carries nothing the parser needs
# and would otherwise become a word of its own ("yı" looks like the model name "Yi").
_APOSTROPHE_SUFFIX_RE = re.compile(r"(?<=\w)'\w+")


def fold(text: str) -> str:
    """Matching form of a message: ``normalize`` + no diacritics/tatweel + Turkish letters as ASCII."""
    text = _APOSTROPHE_SUFFIX_RE.sub("", _MARKS_RE.sub("", normalize(text)))
    return text.translate(_TURKISH_FOLD)
