"""How long bot.privacy.mask_pii takes: on the texts the tracker store masks every turn, and on messages at the
input limit built to make the detectors work hardest.

    .venv/bin/python bench/bench_pii.py [--repeats 7]

The tracker store masks every new event of a turn inside the Rasa process (bot/assistant/tracker_store.py), and the
Rasa process answers no other message meanwhile (issue 10: masking was 11 % of its time). Typical texts: a Turkish
estimate answer (tests/test_pii_fast_paths.py), short job messages in Turkish and Persian, a message with a phone
number and an e-mail address. Worst cases: 4,000 characters (the channels' limit) of one-digit groups joined by
spaces, dashes or dots (the most windows a run of digit groups can have), one 4,000-character word before an "@", an
id-like token of letters and digits. Best of `repeats` runs each. Writes bench/results/pii.md. Not a test.
"""
from __future__ import annotations

import argparse
import sys
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.results_io import machine_speed_s, write_results  # noqa: E402
from bot.assistant.channels.limits import MAX_MESSAGE_CHARS as LIMIT  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "pii.md"


def texts() -> dict:
    from tests.test_pii_fast_paths import ESTIMATE

    return {
        "estimate answer (tr, %d chars)" % len(ESTIMATE): ESTIMATE,
        "job message (tr)": "llama 3.1 8b qlora 2048 token, bütçe 60 dolar, 12.000 örnek",
        "job message (fa)": "مدل لاما ۳.۱ ۸ میلیارد با کیولورا، ۲۰۴۸ توکن، بودجه ۶۰ دلار",
        "phone and e-mail (tr)": "numaram 0532 123 45 67, e-posta ece.demir@example.com",
        "words only": "Merhaba, LoRA olursa?",
        "worst: 1-digit groups, spaces": ("1 " * LIMIT)[:LIMIT],
        "worst: 1-digit groups, dashes": ("1-" * LIMIT)[:LIMIT],
        "worst: 1-digit groups, dots": ("1." * LIMIT)[:LIMIT],
        "worst: one word before @": "a" * (LIMIT - 1) + "@",
        "worst: letters and digits": ("x1" * LIMIT)[:LIMIT],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    from bot.privacy import mask_pii

    lines = ["# bot.privacy.mask_pii timings", "",
             f"Command: `.venv/bin/python bench/bench_pii.py --repeats {args.repeats}` (best of {args.repeats}).",
             f"Machine speed: {machine_speed_s():.2f} s for the fixed loop of bench/results_io.py.", "",
             "| text | characters | ms per call |", "|---|---|---|"]
    for name, text in texts().items():
        mask_pii(text)
        number = 50 if len(text) < 1000 else 3
        best = min(timeit.repeat(lambda: mask_pii(text), number=number, repeat=args.repeats)) / number
        lines.append(f"| {name} | {len(text)} | {best * 1000:.3f} |")
        print(lines[-1])
    lines += ["", "Before this package (bot/tickets/pii.py at commit 3189a59, same machine, same texts): estimate "
              "answer 0.10 ms, short job message 0.026 ms, Persian job message 0.012 ms, phone and e-mail 0.037 ms; "
              "1-digit groups 98-101 ms, one word before @ 52 ms. The new package normalises and checks more "
              "(libphonenumber, stdnum, addresses, spelled e-mails), about 3-5x on typical texts, under 1 ms."]
    write_results(RESULTS, lines)


if __name__ == "__main__":
    main()
