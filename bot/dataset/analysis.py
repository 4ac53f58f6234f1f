"""The data check: a training file in, aggregate figures out (never a line of its content).

One streaming pass: each record is parsed, checked for duplicates, length in words, language and personal data,
and counted in tokens in batches; only fingerprints, MinHash sketches, counts and line numbers are kept.
"""
from __future__ import annotations

import math
import os
import re
from array import array
from collections import Counter as Tally
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from bot.dataset.duplicates import (SIGNATURE_DTYPE, DuplicateFinder, exact_fingerprint, find_near,
                                    sketch_from_knowledge, word_hashes)
from bot.dataset.formats import Example, Problem
from bot.dataset.pii_counts import count_pii
from bot.dataset.reader import DatasetReader, ReadLimits
from bot.dataset.texts import DatasetKnowledge, load_dataset_knowledge
from bot.dataset.tokens import counter_for_model

WORKERS = min(2, os.cpu_count() or 1)  # the development and CI machines have 2 cores (env README)
PARALLEL_MIN_BYTES = 8_000_000  # below this, starting a second process costs more than it saves
BATCH = 2000  # examples tokenized at once: enough to keep both tokenizer threads busy, small in memory
SKETCH_BATCH = 500  # examples whose word hashes wait for one numpy MinHash pass (about 2 MB of Python ints)
LANGUAGE_SAMPLE_CHARS = 400  # the language of an example is read from its first characters (a few sentences)
SHORT_CHARS = 80  # words are counted only in examples this short: four words never take more characters than this
MAX_LINES_KEPT = 1000  # line numbers kept per problem kind (the count is always exact)
_ARABIC_SCRIPT = re.compile(r"[\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff]")
_LATIN_LETTER = re.compile(r"[A-Za-z\u00c0-\u024f]")
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass
class DatasetReport:
    """Aggregate figures of one file; safe to show, log and store (no content)."""

    file_kind: str
    examples: int
    formats: Dict[str, int]
    invalid_lines: List[int]
    problems: Dict[str, List[int]]
    problem_counts: Dict[str, int]
    mixed_format_lines: List[int]
    duplicates: Dict[str, object]
    short_examples: Dict[str, object]
    languages: Dict[str, int]
    pii: Dict[str, int]
    tokens: Dict[str, float]
    seq_len_cover: Dict[str, int]
    seq_len: int
    seq_len_given: bool
    truncated: int
    tokens_per_epoch: int
    histogram: Dict[str, List[float]]
    validation: Dict[str, int]
    tokenizer: Dict[str, object]
    chat_template: str
    estimate: Optional[dict] = None
    extra: Dict[str, object] = field(default_factory=dict)

    def to_json(self) -> dict:
        return asdict(self)


def language_of(texts: Sequence[str], kb: DatasetKnowledge) -> str:
    """fa | ar | tr | en | other, from the script and the function words of the example's first characters."""
    sample = "\n".join(texts)[:LANGUAGE_SAMPLE_CHARS]
    arabic = len(_ARABIC_SCRIPT.findall(sample))
    latin = len(_LATIN_LETTER.findall(sample))
    if not arabic and not latin:
        return "other"
    words = kb.languages
    if arabic >= latin:
        return "fa" if any(letter in sample for letter in words["persian_letters"]) or "ی" in sample else "ar"
    if any(letter in sample for letter in words["turkish_letters"]):
        return "tr"
    tokens = sample.casefold().split()
    turkish_words, english_words = _word_sets(kb)
    turkish = sum(1 for token in tokens if token in turkish_words)
    english = sum(1 for token in tokens if token in english_words)
    if turkish > english:
        return "tr"
    return "en" if english else "other"


_WORD_SETS: Dict[int, Tuple[frozenset, frozenset]] = {}


def _word_sets(kb: DatasetKnowledge) -> Tuple[frozenset, frozenset]:
    if id(kb) not in _WORD_SETS:
        _WORD_SETS[id(kb)] = (frozenset(kb.languages["turkish_words"]), frozenset(kb.languages["english_words"]))
    return _WORD_SETS[id(kb)]


def _keep(lines: List[int], line: int) -> None:
    if len(lines) < MAX_LINES_KEPT:
        lines.append(line)


class _Pass:
    """The state of one pass over the file."""

    def __init__(self, kb: DatasetKnowledge, model_id: Optional[str], deferred_duplicates: bool = False):
        self.kb, self.model_id, self._counter = kb, model_id, None
        self.duplicates = DuplicateFinder()
        self.sketch = sketch_from_knowledge(kb.analysis)
        # A worker of a parallel pass keeps the exact fingerprints in file order; the parent finds the copies
        self.deferred_duplicates = deferred_duplicates
        self.fingerprints = bytearray()
        self.exact_copy = bytearray()  # 1 per example that copies an earlier one byte for byte
        self.example_lines = array("I")  # the line of each example, in file order
        self.signatures = bytearray()  # SIGNATURE_DTYPE x permutations per example, in file order
        self._word_hashes: List[List[int]] = []
        self.problems: Dict[str, List[int]] = {}
        self.problem_counts: Tally = Tally()
        self.formats: Tally = Tally()
        self.format_lines: Dict[str, List[int]] = {}
        self.duplicate_lines: Dict[str, List[int]] = {"exact": [], "near": []}
        self.short_lines: List[int] = []
        self.short = 0
        self.languages: Tally = Tally()
        self.pii: Tally = Tally()
        self.token_counts = array("I")
        self._batch: List[Example] = []

    def add_problem(self, line: int, problem: Problem) -> None:
        self.problem_counts[problem.code] += 1
        _keep(self.problems.setdefault(problem.code, []), line)

    def add_example(self, line: int, example: Example) -> None:
        self.formats[example.fmt] += 1
        _keep(self.format_lines.setdefault(example.fmt, []), line)
        self.example_lines.append(line)
        if self.deferred_duplicates:
            self.fingerprints += exact_fingerprint(example)
        else:
            self.add_fingerprint(line, exact_fingerprint(example))
        self._word_hashes.append(word_hashes(example, self.sketch.shingle))
        if len(self._word_hashes) >= SKETCH_BATCH:
            self._sketch_batch()
        texts = example.texts()
        if sum(map(len, texts)) < SHORT_CHARS and \
                sum(len(_WORD.findall(text)) for text in texts) < self.kb.analysis["short_words"]:
            self.short += 1
            _keep(self.short_lines, line)
        self.languages[language_of(texts, self.kb)] += 1
        self.pii.update(count_pii(["\n\n".join(texts)]))  # one pass per example; \n is no digit separator
        self._batch.append(example)
        if len(self._batch) >= BATCH:
            self.flush()

    def add_fingerprint(self, line: int, exact: bytes) -> None:
        copy = self.duplicates.check_exact(exact)
        self.exact_copy.append(copy)
        if copy:
            _keep(self.duplicate_lines["exact"], line)

    def find_near_duplicates(self) -> None:
        """Once every example is in: the near copies (bot/dataset/duplicates.py)."""
        signatures = np.frombuffer(self.signatures, dtype=SIGNATURE_DTYPE).reshape(-1, self.sketch.permutations)
        near = find_near(signatures, np.frombuffer(self.exact_copy, dtype=np.uint8).astype(bool), self.sketch)
        self.duplicates.near = int(near.size)
        self.duplicate_lines["near"] = [int(line) for line in np.asarray(self.example_lines)[near[:MAX_LINES_KEPT]]]

    def _sketch_batch(self) -> None:
        if self._word_hashes:
            self.signatures += self.sketch.signatures(self._word_hashes).astype(SIGNATURE_DTYPE).tobytes()
            self._word_hashes = []

    def flush(self) -> None:
        self._sketch_batch()
        if self._batch:
            if self._counter is None:  # loaded on first use: the parent of a parallel pass never needs it
                self._counter = counter_for_model(self.model_id)
            self.token_counts.extend(self._counter.count_examples(self._batch))
            self._batch = []


def _cover(counts: np.ndarray, percent: int) -> int:
    """The smallest length that holds at least `percent` % of the examples whole."""
    if not counts.size:
        return 0
    rank = max(1, math.ceil(counts.size * percent / 100))
    return int(np.partition(counts, rank - 1)[rank - 1])


def _choose_length(cover_99: int, standard: Sequence[int]) -> int:
    return next((length for length in standard if length >= cover_99), standard[-1])


def _validation(examples: int, rule: dict) -> Dict[str, int]:
    if examples < rule["no_split_below"]:
        return {"validation": 0, "train": examples}
    fraction = rule["small_fraction"] if examples < rule["small_below"] else rule["large_fraction"]
    size = int(min(rule["maximum"], max(rule["minimum"], math.ceil(examples * fraction))))
    return {"validation": size, "train": examples - size}


def _histogram(counts: np.ndarray, bins: int) -> Dict[str, List[float]]:
    if not counts.size:
        return {"edges": [], "counts": []}
    top = max(1, int(np.percentile(counts, 99.5, method="higher")))  # a few giants would squash the picture
    frequencies, edges = np.histogram(np.minimum(counts, top), bins=bins, range=(0, top))
    return {"edges": [round(float(edge)) for edge in edges], "counts": [int(value) for value in frequencies]}


def _mixed_format_lines(state: _Pass) -> List[int]:
    if len(state.formats) < 2:
        return []
    main = state.formats.most_common(1)[0][0]
    return sorted(line for fmt, lines in state.format_lines.items() if fmt != main for line in lines)[:MAX_LINES_KEPT]


def analyse_file(path: str, limits: ReadLimits, model_id: Optional[str] = None, seq_len: Optional[int] = None,
                 columns: Optional[Tuple[int, int]] = None, kb: Optional[DatasetKnowledge] = None) -> DatasetReport:
    """Read and measure the file; FileRejected / ColumnsNeeded when it cannot be read at all."""
    kb = kb or load_dataset_knowledge()
    reader = DatasetReader(path, limits, columns=columns, header_words=kb.header_words())
    if reader.kind == "jsonl" and os.path.getsize(path) >= PARALLEL_MIN_BYTES and WORKERS > 1:
        from bot.dataset.parallel import analyse_jsonl_in_parallel

        state = analyse_jsonl_in_parallel(path, limits, model_id, kb, WORKERS)
    else:
        state = _Pass(kb, model_id)
        run_pass(state, reader)
    return _report(reader.kind, state, kb, model_id, seq_len)


def run_pass(state: "_Pass", lines) -> "_Pass":
    for line, parsed in lines:
        if isinstance(parsed, Problem):
            state.add_problem(line, parsed)
        else:
            state.add_example(line, parsed)
    state.flush()
    return state


def _report(kind: str, state: _Pass, kb: DatasetKnowledge, model_id: Optional[str],
            seq_len: Optional[int]) -> DatasetReport:
    state.find_near_duplicates()
    counts = np.frombuffer(state.token_counts, dtype=np.uint32).astype(np.int64)
    analysis = kb.analysis
    cover = {str(p): _cover(counts, p) for p in analysis["cover"]}
    chosen = seq_len or _choose_length(cover.get("99", 0), analysis["standard_lengths"])
    choice = kb.tokenizer_for_model(model_id)
    spec = kb.tokenizer(choice["tokenizer"])
    invalid = sorted(line for lines in state.problems.values() for line in lines)
    return DatasetReport(
        file_kind=kind,
        examples=int(counts.size),
        formats=dict(state.formats),
        invalid_lines=invalid,
        problems={code: lines for code, lines in sorted(state.problems.items())},
        problem_counts=dict(state.problem_counts),
        mixed_format_lines=_mixed_format_lines(state),
        duplicates={"exact": state.duplicates.exact, "near": state.duplicates.near,
                    "exact_lines": state.duplicate_lines["exact"], "near_lines": state.duplicate_lines["near"]},
        short_examples={"count": state.short, "lines": state.short_lines},
        languages=dict(state.languages.most_common()),
        pii=dict(state.pii.most_common()),
        tokens={"median": float(np.median(counts)) if counts.size else 0.0,
                "p95": _cover(counts, 95), "max": int(counts.max()) if counts.size else 0,
                "mean": round(float(counts.mean()), 1) if counts.size else 0.0,
                "total": int(counts.sum())},
        seq_len_cover=cover,
        seq_len=int(chosen),
        seq_len_given=seq_len is not None,
        truncated=int((counts > chosen).sum()),
        tokens_per_epoch=int(np.minimum(counts, chosen).sum()),
        histogram=_histogram(counts, analysis["histogram_bins"]),
        validation=_validation(int(counts.size), analysis["validation"]),
        tokenizer={"id": spec["id"], "name": spec["display"], "stand_in": bool(choice.get("stand_in")),
                   "model": model_id},
        chat_template=choice["template"],
    )
