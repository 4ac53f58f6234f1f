"""A large JSONL measured by two processes, one per half of the file, merged as if read in one pass.

Each worker parses, counts tokens, languages, personal data and short examples of its half (bot/dataset/analysis.py
_Pass) and keeps its examples' exact fingerprints and MinHash signatures in file order; the parent, which never loads a
tokenizer, merges the counts and finds the duplicates over them in file order, so the figures equal a single
pass's. Both halves are cut at line starts (reader.line_starts) and keep the file's own line numbers.
"""
from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from typing import Any, Dict, Optional

from bot.dataset.duplicates import FINGERPRINT_BYTES
from bot.dataset.reader import ReadLimits, jsonl_range, line_starts


def _worker(path: str, start: int, end: int, first_line: int, limits: ReadLimits,
            model_id: Optional[str]) -> Dict[str, Any]:
    from bot.dataset.analysis import _Pass, run_pass
    from bot.dataset.texts import load_dataset_knowledge

    state = _Pass(load_dataset_knowledge(), model_id, deferred_duplicates=True)
    run_pass(state, jsonl_range(path, start, end, first_line, limits.max_line_bytes))
    return {name: getattr(state, name) for name in (
        "problems", "problem_counts", "formats", "format_lines", "short_lines", "short", "languages", "pii",
        "token_counts", "fingerprints", "example_lines", "signatures")}


def analyse_jsonl_in_parallel(path: str, limits: ReadLimits, model_id: Optional[str], kb, workers: int):
    """The merged _Pass of `workers` processes over the file's parts."""
    import multiprocessing

    from bot.dataset.analysis import MAX_LINES_KEPT, _Pass

    ranges = line_starts(path, workers)
    context = multiprocessing.get_context("spawn")  # no fork of a server's threads and event loop
    with ProcessPoolExecutor(max_workers=len(ranges), mp_context=context) as pool:
        parts = list(pool.map(_worker, *zip(*[(path, start, end, first, limits, model_id)
                                              for start, end, first in ranges])))
    state = _Pass(kb, model_id)
    state.signatures = bytearray(sum(len(part["signatures"]) for part in parts))  # one allocation, no regrowth
    filled = 0
    while parts:
        part = parts.pop(0)  # each part's signatures freed once copied
        for code, lines in part["problems"].items():
            state.problems[code] = (state.problems.get(code, []) + lines)[:MAX_LINES_KEPT]
        for fmt, lines in part["format_lines"].items():
            state.format_lines[fmt] = (state.format_lines.get(fmt, []) + lines)[:MAX_LINES_KEPT]
        state.problem_counts.update(part["problem_counts"])
        state.formats.update(part["formats"])
        state.languages.update(part["languages"])
        state.pii.update(part["pii"])
        state.short += part["short"]
        state.short_lines = (state.short_lines + part["short_lines"])[:MAX_LINES_KEPT]
        state.token_counts.extend(part["token_counts"])
        state.signatures[filled:filled + len(part["signatures"])] = part["signatures"]
        filled += len(part["signatures"])
        prints, step = part["fingerprints"], FINGERPRINT_BYTES
        for index, line in enumerate(part["example_lines"]):
            state.example_lines.append(line)
            state.add_fingerprint(line, bytes(prints[index * step:(index + 1) * step]))
    return state
