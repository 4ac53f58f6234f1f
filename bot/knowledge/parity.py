"""fa/tr parity of every text in a knowledge file, whatever its schema: wherever a mapping has a Persian or a
Turkish entry it has both, neither empty, with the same placeholders (and English, when given, the same too).

A text in one language only is an answer the other half of the customers never gets; a placeholder missing in one
language silently drops a number from that answer."""
from __future__ import annotations

import string
from typing import Any, List, Set, Tuple

PAIR = ("fa", "tr")


def placeholders(template: str) -> Set[str]:
    """The names a ``str.format`` template fills ("{cost_vat}", "{n:,}" -> {"cost_vat", "n"}).
    Raises ValueError for a broken template ("{" alone)."""
    return {name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(template) if name}


def _text_problem(entry: dict) -> str:
    fa, tr = entry["fa"], entry["tr"]
    if not fa.strip() or not tr.strip():
        return "empty text in " + ("fa" if not fa.strip() else "tr")
    languages = {lang: entry[lang] for lang in ("fa", "tr", "en") if isinstance(entry.get(lang), str)}
    try:
        names = {lang: placeholders(text) for lang, text in languages.items()}
    except ValueError as exc:
        return f"broken template: {exc}"
    if len({frozenset(v) for v in names.values()}) > 1:
        return "placeholders differ between languages: " + ", ".join(f"{k}={sorted(v)}" for k, v in names.items())
    return ""


def _pair_problem(entry: dict) -> str:
    missing = [lang for lang in PAIR if entry.get(lang) is None]
    if missing:
        return f"{missing[0]} missing beside {PAIR[1 - PAIR.index(missing[0])]}"
    fa, tr = entry["fa"], entry["tr"]
    if type(fa) is not type(tr):
        return f"fa is a {type(fa).__name__}, tr a {type(tr).__name__}"
    if isinstance(fa, str):
        return _text_problem(entry)
    if isinstance(fa, (list, dict)) and (not fa) != (not tr):  # word lists: their words differ, both are there
        return f"a {type(fa).__name__} empty in one language only"
    return ""


def parity_problems(data: Any, path: str = "") -> List[Tuple[str, str]]:
    """(dotted field, reason) for every fa/tr pair in ``data`` that is not complete and alike."""
    problems: List[Tuple[str, str]] = []
    if isinstance(data, dict):
        if any(lang in data for lang in PAIR):
            reason = _pair_problem(data)
            if reason:
                problems.append((path or "-", reason))
        for key, value in data.items():
            problems += parity_problems(value, f"{path}.{key}" if path else str(key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            problems += parity_problems(value, f"{path}.{index}" if path else str(index))
    return problems


def pairs_checked(data: Any) -> int:
    """How many fa/tr pairs :func:`parity_problems` looks at (the test shows each file has its texts checked)."""
    if isinstance(data, dict):
        return int(any(lang in data for lang in PAIR)) + sum(pairs_checked(v) for v in data.values())
    if isinstance(data, list):
        return sum(pairs_checked(v) for v in data)
    return 0
