"""What the bench scripts share: the percentile they report and how they write bench/results/*.md."""
from __future__ import annotations

from pathlib import Path
from typing import List

ROOT = Path(__file__).resolve().parents[1]


def percentile(values: List[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..1)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def write_results(path: Path, lines: List[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT)}")
