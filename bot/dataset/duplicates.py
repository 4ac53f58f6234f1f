"""Exact and near duplicates, from fingerprints and MinHash sketches only (the texts are not kept).

Exact: the same turns, byte for byte (an 8-byte fingerprint per example).

Near: examples whose word shingles overlap by at least the Jaccard threshold in knowledge/dataset.yml
(`analysis.near_duplicate`), once letter case, punctuation, digits, Arabic/Persian letter variants (ي/ی, ك/ک), Turkish
dotted/dotless i, diacritics and zero-width joiners are ignored: an answer edited by a few words, a name or a number
changed, two sentences swapped. The overlap is estimated with MinHash (datasketch's "affine32" scheme, computed here
for a whole batch at once with numpy; tests/test_dataset_near.py checks it equals datasketch's own MinHash) and the
candidate pairs come from LSH banding with the bands and rows datasketch chooses for the threshold. datasketch itself
is not run: its MinHash costs 80 us per example (8 s per 100,000), its MinHashLSH index about 300 MB per 100,000
examples (a dict of sets; measured) and its import 38 MB per process; the bands here are sorted numpy columns.
Each example keeps 2 bytes per permutation (the low 16 bits of each minimum, b-bit MinHash, Li & König 2010: a false
equal value has odds 2^-16, so the Jaccard estimate rises by at most 0.00002).

A near-duplicate cluster is a connected set of examples whose estimated Jaccard with their band bucket's first
example reaches the threshold; `near` counts the examples beyond each cluster's first (in file order), exact copies
excluded (they are counted as exact only).
"""
from __future__ import annotations

import hashlib
import re
import zlib
from functools import lru_cache
from itertools import chain
from typing import List, Sequence, Set

import numpy as np

from bot.dataset.formats import Example

FINGERPRINT_BYTES = 8  # 64 bits: a false match among 10^6 examples has odds about 10^-8 (birthday bound)
SIGNATURE_DTYPE = np.uint16  # b-bit MinHash with b = 16 (module docstring)
SHINGLES_PER_CHUNK = 16_384  # shingles x permutations x 4 bytes stays about 4 MB per numpy temporary
PAIRS_PER_CHUNK = 16_384  # candidate pairs compared at once: 2 x 2 MB of signatures gathered
# (variant, canonical) pairs, replaced with str.replace: a translate() table costs a dict lookup per character
_LETTER_VARIANTS = (("ي", "ی"), ("ى", "ی"), ("ك", "ک"), ("ة", "ه"), ("أ", "ا"), ("إ", "ا"), ("آ", "ا"),
                    ("\u200c", ""), ("\u200d", ""), ("ـ", ""), ("ı", "i"))
# Not a letter: punctuation, spaces, digits, "_" and the combining marks (Arabic-script diacritics are not \w)
_NOT_LETTER = re.compile(r"[\W\d_]+", re.UNICODE)
# Odd multipliers that fold a shingle's word hashes into one 32-bit value, position by position (the golden-ratio
# constant and MurmurHash3's; any odd constants would do: the result goes through datasketch's MurmurHash3 mix)
_POSITION_MULTIPLIERS = (0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D, 0x27D4EB2F, 0x165667B1, 0xD3A2646C | 1)


def _fingerprint(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=FINGERPRINT_BYTES).digest()


def canonical_text(example: Example) -> str:
    return "\x1e".join(f"{role}\x1f{text}" for role, text in example.turns)


def exact_fingerprint(example: Example) -> bytes:
    return _fingerprint(canonical_text(example))


def loose_text(example: Example) -> str:
    """The example as the near-duplicate check sees it: its words, separated by one space."""
    text = "\x1e".join(text for _, text in example.turns).casefold()  # casefold: "İ" -> "i̇", the dot dropped below
    for variant, canonical in _LETTER_VARIANTS:
        if variant in text:
            text = text.replace(variant, canonical)
    return _NOT_LETTER.sub(" ", text).strip()


def loose_words(example: Example) -> List[str]:
    return loose_text(example).split(" ") if loose_text(example) else []


def word_hashes(example: Example, shingle: int) -> List[int]:
    """CRC-32 of each word, padded to one whole shingle; an example without letters hashes its whole text."""
    text = loose_text(example) or "\x00" + canonical_text(example).casefold()
    # bytes.split and map(crc32) run in C: three times faster than a loop over the words (bench/bench_dataset.py)
    hashes = list(map(zlib.crc32, text.encode("utf-8", "surrogatepass").split(b" ")))
    return hashes + [0] * (shingle - len(hashes)) if len(hashes) < shingle else hashes


class NearDuplicateSketch:
    """MinHash signatures of examples' word shingles, with the settings of knowledge/dataset.yml.

    The permutations are datasketch's for the "affine32" scheme and the seed (numpy RandomState, as
    datasketch.MinHash._init_permutations), made here so that no process of the check imports datasketch (38 MB each);
    tests/test_dataset_near.py checks them, the signatures and the bands against datasketch.
    """

    def __init__(self, settings: dict):
        self.shingle = int(settings["shingle_words"])
        self.threshold = float(settings["threshold"])
        self.permutations = int(settings["permutations"])
        self.bands, self.rows = int(settings["lsh_bands"]), int(settings["lsh_rows"])
        if not 1 <= self.shingle <= len(_POSITION_MULTIPLIERS) or self.bands * self.rows > self.permutations:
            raise ValueError(f"shingle_words must be 1..{len(_POSITION_MULTIPLIERS)}, bands x rows <= permutations")
        generator = np.random.RandomState(int(settings["seed"]))
        self._a = generator.randint(0, 1 << 31, self.permutations, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
        self._b = generator.randint(0, 1 << 32, self.permutations, dtype=np.uint32)

    @property
    def permutation_parameters(self) -> np.ndarray:
        return np.array([self._a, self._b])

    def shingle_hashes(self, hashes: Sequence[int]) -> np.ndarray:
        """One 32-bit value per run of `shingle` consecutive words."""
        return self._fold(np.asarray(hashes, dtype=np.uint32))

    def _fold(self, words: np.ndarray) -> np.ndarray:
        count = words.size - self.shingle + 1
        out = np.zeros(count, dtype=np.uint32)
        for position in range(self.shingle):
            out += words[position:position + count] * np.uint32(_POSITION_MULTIPLIERS[position])
        return out

    def signatures(self, examples_hashes: Sequence[Sequence[int]]) -> np.ndarray:
        """(examples, permutations) uint32: datasketch MinHash(scheme="affine32").update_batch over each example's
        shingle hashes, computed for the whole batch at once (the permutations in chunks)."""
        lengths = np.fromiter(map(len, examples_hashes), dtype=np.int64, count=len(examples_hashes))
        words = np.fromiter(chain.from_iterable(examples_hashes), dtype=np.uint32, count=int(lengths.sum()))
        starts = np.cumsum(lengths) - lengths
        # a shingle starting at word i belongs to its example when the example has `shingle` words from i on
        position = np.arange(words.size) - np.repeat(starts, lengths)
        valid = (position <= np.repeat(lengths - self.shingle, lengths))[:words.size - self.shingle + 1]
        values = _murmur_mix(self._fold(words)[valid])
        shingle_counts = lengths - self.shingle + 1
        offsets = np.cumsum(shingle_counts) - shingle_counts
        out = np.empty((len(examples_hashes), self.permutations), dtype=np.uint32)
        first = 0
        while first < len(examples_hashes):
            last = max(first + 1, int(np.searchsorted(offsets, offsets[first] + SHINGLES_PER_CHUNK)))
            end = offsets[last] if last < len(offsets) else values.size
            permuted = values[offsets[first]:end, None] * self._a  # uint32 wraps: mod 2^32, as datasketch's
            permuted += self._b  # in place: one (shingles x permutations) array, not two
            out[first:last] = np.minimum.reduceat(permuted, offsets[first:last] - offsets[first], axis=0)
            first = last
        return out


def _murmur_mix(values: np.ndarray) -> np.ndarray:
    """datasketch.minhash._fmix for 32 bits (the MurmurHash3 finalizer), applied before the permutations."""
    values = values ^ (values >> np.uint32(16))
    values = values * np.uint32(0x85EBCA6B)
    values = values ^ (values >> np.uint32(13))
    values = values * np.uint32(0xC2B2AE35)
    return values ^ (values >> np.uint32(16))


@lru_cache(maxsize=4)
def _sketch_for(settings: tuple) -> NearDuplicateSketch:
    return NearDuplicateSketch(dict(settings))


def sketch_from_knowledge(analysis: dict) -> NearDuplicateSketch:
    return _sketch_for(tuple(sorted(analysis["near_duplicate"].items())))


def _band_keys(signatures: np.ndarray, rows: np.ndarray, band: int, band_rows: int) -> np.ndarray:
    """One 64-bit key per example (the `rows` of `signatures`) for its `band`-th run of values (a polynomial over
    2^64; a false equal key has odds 2^-64)."""
    key = np.zeros(rows.size, dtype=np.uint64)
    for column in range(band * band_rows, (band + 1) * band_rows):
        key = key * np.uint64(0x100000001B3) + signatures[rows, column].astype(np.uint64)
    return key


def _band_pairs(signatures: np.ndarray, rows: np.ndarray, band: int, band_rows: int):
    """(first, member) positions in `rows` sharing the band's bucket: each bucket's members with its first."""
    keys = _band_keys(signatures, rows, band, band_rows)
    order = np.argsort(keys, kind="stable")  # stable: equal keys stay in file order, the first is the lowest
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    firsts = np.repeat(order[starts], np.diff(np.r_[starts, rows.size]))
    keep = firsts != order
    return firsts[keep], order[keep]


def near_duplicate_indices(signatures: np.ndarray, rows: np.ndarray, sketch: NearDuplicateSketch) -> np.ndarray:
    """Positions in `rows` (rows of `signatures`, in file order) of the examples beyond the first of each
    near-duplicate cluster. Each band's candidate pairs are checked and joined into the clusters at once, so at
    most one band's pairs are held (a pair found in several bands is checked again: cheaper than keeping them)."""
    count = rows.size
    labels = np.arange(count, dtype=np.int64)
    for band in range(sketch.bands if count > 1 else 0):
        firsts, members = _band_pairs(signatures, rows, band, sketch.rows)
        close = np.zeros(firsts.size, dtype=bool)
        for start in range(0, firsts.size, PAIRS_PER_CHUNK):
            first, member = rows[firsts[start:start + PAIRS_PER_CHUNK]], rows[members[start:start + PAIRS_PER_CHUNK]]
            close[start:start + first.size] = (signatures[first] == signatures[member]).mean(axis=1) >= sketch.threshold
        _join(labels, firsts[close], members[close])
    return np.flatnonzero(labels != np.arange(count))


def _join(labels: np.ndarray, firsts: np.ndarray, members: np.ndarray) -> None:
    """Joins the clusters of each (first, member) pair in place: every label ends as its cluster's lowest position.
    Each root takes the lowest root across its pairs, then every position jumps to its root, until every pair
    shares one (scipy.sparse.csgraph would do it too, but its import costs the parent 16 MB)."""
    while True:
        root_first, root_member = labels[firsts], labels[members]
        differ = root_first != root_member
        if not differ.any():
            return
        root_first, root_member = root_first[differ], root_member[differ]
        lowest = np.minimum(root_first, root_member)
        np.minimum.at(labels, root_first, lowest)
        np.minimum.at(labels, root_member, lowest)
        while True:
            jumped = labels[labels]
            if np.array_equal(jumped, labels):
                break
            labels[:] = jumped


class DuplicateFinder:
    """Exact copies as examples are fed in file order; near copies over all signatures at the end."""

    def __init__(self):
        self._exact: Set[bytes] = set()
        self.exact = 0
        self.near = 0

    def check_exact(self, fingerprint: bytes) -> bool:
        """Whether the example copies an earlier one byte for byte."""
        if fingerprint in self._exact:
            self.exact += 1
            return True
        self._exact.add(fingerprint)
        return False


def find_near(signatures: np.ndarray, exact_copy: np.ndarray, sketch: NearDuplicateSketch) -> np.ndarray:
    """Positions (in file order) of the near copies among the examples that are not exact copies."""
    kept = np.flatnonzero(~exact_copy)
    return kept[near_duplicate_indices(signatures, kept, sketch)]
