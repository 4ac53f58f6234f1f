"""What the bench scripts share: a message to a Rasa REST channel, the percentile they report and how they write
bench/results/*.md."""
from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path
from typing import List, Tuple

ROOT = Path(__file__).resolve().parents[1]


def post(url: str, sender: str, text: str, timeout: float = 60) -> Tuple[float, list]:
    """One message to a REST webhook: (milliseconds until the whole answer arrived, the bot's replies)."""
    body = json.dumps({"sender": sender, "message": text}).encode()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=timeout) as response:
        replies = json.loads(response.read())
    return (time.perf_counter() - started) * 1000, replies


def percentile(values: List[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..1)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


# A results file may end in notes written by hand (what changed between runs, earlier figures): from this line on,
# a new run keeps them below its own figures.
HISTORY_MARKER = "<!-- history: kept by bench/results_io.write_results -->"


def write_results(path: Path, lines: List[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    history = old[old.index(HISTORY_MARKER):] if HISTORY_MARKER in old else ""
    text = "\n".join(lines) + "\n"
    path.write_text(text + ("\n" + history if history else ""), encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT)}")


def machine_speed_s() -> float:
    """Seconds this machine takes for a fixed pure-Python loop (10 million additions), best of three: the figures of
    the bench scripts scale with it. The 2-core machine of the 2026-12-01 evening runs took 0.87 s; Rasa's starter bot
    answered there in 57-71 ms at the median, 21-22 ms on the machine of an earlier session's runs."""
    best = float("inf")
    for _ in range(3):
        started, total = time.perf_counter(), 0
        for number in range(10_000_000):
            total += number
        best = min(best, time.perf_counter() - started)
    return best
