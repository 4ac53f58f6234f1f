"""Exact and near duplicates, by 8-byte fingerprints only (the texts are not kept).

Exact: the same turns, byte for byte. Near: the same once letter case, spacing, punctuation, digits, Arabic/Persian
letter variants (ي/ی, ك/ک), Turkish dotted/dotless i, diacritics and zero-width joiners are ignored - what a
re-export, a copy-paste or a template filled with another number leaves behind. Each duplicate counted is a copy
beyond the first.
"""
from __future__ import annotations

import hashlib
import re
from typing import Optional, Set, Tuple

from bot.dataset.formats import Example

FINGERPRINT_BYTES = 8  # 64 bits: a false match among 10^6 examples has odds about 10^-8 (birthday bound)
# (variant, canonical) pairs, replaced with str.replace: a translate() table costs a dict lookup per character
_LETTER_VARIANTS = (("ي", "ی"), ("ى", "ی"), ("ك", "ک"), ("ة", "ه"), ("أ", "ا"), ("إ", "ا"), ("آ", "ا"),
                    ("\u200c", ""), ("\u200d", ""), ("ـ", ""), ("ı", "i"))
# Not a letter: punctuation, spaces, digits, "_" and the combining marks (Arabic-script diacritics are not \w)
_NOT_LETTER = re.compile(r"[\W\d_]+", re.UNICODE)


def _fingerprint(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=FINGERPRINT_BYTES).digest()


def canonical_text(example: Example) -> str:
    return "\x1e".join(f"{role}\x1f{text}" for role, text in example.turns)


def loose_text(example: Example) -> str:
    """The example as the near-duplicate check sees it."""
    text = "\x1e".join(text for _, text in example.turns).casefold()  # casefold: "İ" -> "i̇", the dot dropped below
    for variant, canonical in _LETTER_VARIANTS:
        if variant in text:
            text = text.replace(variant, canonical)
    return _NOT_LETTER.sub("", text)


def fingerprints(example: Example) -> Tuple[bytes, bytes]:
    """(exact, near) fingerprints of an example, FINGERPRINT_BYTES each."""
    return _fingerprint(canonical_text(example)), _fingerprint(loose_text(example))


class DuplicateFinder:
    """Feed examples in file order; each call says whether the example copies an earlier one."""

    def __init__(self):
        self._exact: Set[bytes] = set()
        self._loose: Set[bytes] = set()
        self.exact = 0
        self.near = 0

    def check(self, example: Example) -> Optional[str]:
        """"exact", "near" or None; an exact copy is not also counted as near."""
        return self.check_fingerprints(*fingerprints(example))

    def check_fingerprints(self, exact: bytes, loose: bytes) -> Optional[str]:
        if exact in self._exact:
            self.exact += 1
            return "exact"
        self._exact.add(exact)
        if loose in self._loose:
            self.near += 1
            return "near"
        self._loose.add(loose)
        return None
