"""The slowest messages up to the input limit: the whole NLU pipeline, the parser and the masking, per family.

    .venv/bin/python bench/bench_nlu_worst.py [--repeats 3] [--model models/gpu-advisor.tar.gz]

The families are tests/adversarial.py's (digit groups, model names, number words, punctuation runs, "@" runs,
Persian and Turkish letters ... and two of ordinary requests), each at 1,000, 2,000 and 4,000 characters (the
channels' limit). For every message: the trained model's whole NLU pipeline (config.yml: normaliser, tokenizer,
both featurizers, classifier, fallback, IntentGuard) through Rasa's Agent, `bot.text.parse.parse_values`, and
`bot.privacy.mask_pii`. A message's time is the CPU time the process spent on it (time.process_time: on a
machine shared with other work the wall clock measures that work too; Rasa answers one message at a time on one
thread, so on a machine of its own its wall time is this CPU time), the fastest of its repeats (the slower runs
measure cache misses the other work caused; the family "unknown model names" draws new names for every repeat, so
the parser's name cache never answers); each family reports its worst message and the median of its messages.
Target (issue 20): no message up to the limit over 50 ms in the NLU pipeline.

Also times Rasa's own WhitespaceTokenizer pattern against bot.assistant.components.tokenizer on the punctuation
families (the pattern config.yml used before). Writes bench/results/nlu_worst.md. Not a test.
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.results_io import machine_speed_s, write_results  # noqa: E402
from tests.adversarial import FAMILIES, LENGTHS, LIMIT  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "nlu_worst.md"
TARGET_MS = 50.0  # issue 20: the NLU pipeline's time for any message up to the limit
FRESH_EACH_REPEAT = {"unknown model names"}  # names the parser's cache must not know yet
TOKENIZER_FAMILIES = ("dots between letters", "dashes between letters", "punctuation mix", "spaced dots")


def timed_ms(work: Callable[[], object]) -> Tuple[float, Optional[str]]:
    started = time.process_time()
    try:
        work()
        failure = None
    except Exception as error:  # noqa: BLE001 - a message that raises is reported, not hidden
        failure = type(error).__name__
    return (time.process_time() - started) * 1000, failure


LOOP = asyncio.new_event_loop()


def nlu(agent, text: str) -> dict:
    return LOOP.run_until_complete(agent.parse_message(text))


def message_times(family: str, length: int, repeats: int, agent) -> Dict[str, Tuple[float, Optional[str]]]:
    from bot.text.parse import parse_values
    from bot.text.parsed import forget_parses
    from bot.privacy import mask_pii as mask_text

    build = FAMILIES[family]
    runs: Dict[str, List[float]] = {"nlu": [], "parse": [], "mask": []}
    failures: Dict[str, Optional[str]] = {"nlu": None, "parse": None, "mask": None}
    for repeat in range(repeats):
        seed = repeat if family in FRESH_EACH_REPEAT else 0
        text = build(length, 2 * seed)
        # the parse row gets names of its own: the NLU's parse must not find them cached
        parsed_text = build(length, 2 * seed + 1) if family in FRESH_EACH_REPEAT else text
        work = {"nlu": lambda: nlu(agent, text), "parse": lambda: parse_values(parsed_text),
                "mask": lambda: mask_text(text)}
        for name, step in work.items():
            forget_parses()  # the guard's reading of the message kept from the previous run (bot/text/parsed.py)
            ms, failure = timed_ms(step)
            runs[name].append(ms)
            failures[name] = failures[name] or failure
    return {name: (min(values), failures[name]) for name, values in runs.items()}


def tokenizer_rows(repeats: int) -> List[str]:
    from bot.assistant.components.tokenizer import RASA_PUNCTUATION, blank_punctuation

    rows = []
    for family in TOKENIZER_FAMILIES:
        text = FAMILIES[family](LIMIT)
        rasa = min(timed_ms(lambda: RASA_PUNCTUATION.sub(" ", text))[0] for _ in range(repeats))
        ours = min(timed_ms(lambda: blank_punctuation(text))[0] for _ in range(repeats))
        rows.append(f"| {family} | {rasa:.1f} ms | {ours:.1f} ms |")
    return rows


def cell(values: List[Tuple[float, Optional[str]]]) -> str:
    times = [ms for ms, _ in values]
    failures = sorted({failure for _, failure in values if failure})
    text = f"{max(times):.1f} / {statistics.median(times):.1f}"
    return text + (f" (raised {', '.join(failures)})" if failures else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--model", default=str(ROOT / "models" / "gpu-advisor.tar.gz"))
    parser.add_argument("--families", nargs="*", help="only these families (default: all)")
    args = parser.parse_args()

    import logging

    from rasa.core.agent import Agent
    from rasa.utils.log_utils import configure_structlog

    from bot.text.parse import parse_values
    from bot.privacy import mask_pii as mask_text

    configure_structlog(logging.WARNING)  # Rasa's debug lines would print every 4,000-character message
    agent = Agent.load(args.model)
    nlu(agent, "llama 3.1 8b qlora 2048")  # tables and catalogue loaded, as after start-up
    parse_values("salam"), mask_text("0912 345 67 89")
    families = args.families or list(FAMILIES)
    rows, worst_nlu = [], (0.0, "")
    for family in families:
        per_length = [message_times(family, length, args.repeats, agent) for length in LENGTHS]
        columns = {name: cell([times[name] for times in per_length]) for name in ("nlu", "parse", "mask")}
        slowest = max(per_length, key=lambda times: times["nlu"][0])["nlu"][0]
        worst_nlu = max(worst_nlu, (slowest, family))
        flag = " **over**" if slowest > TARGET_MS else ""
        rows.append(f"| {family} | {columns['nlu']}{flag} | {columns['parse']} | {columns['mask']} |")
        print(rows[-1], flush=True)
    over = [row.split(" | ")[0][2:] for row in rows if "**over**" in row]
    lines = ["# The slowest messages up to the input limit (bench/bench_nlu_worst.py)", "",
             f"Each family of tests/adversarial.py at {', '.join(f'{n:,}' for n in LENGTHS)} characters; a "
             f"message's time is the CPU time of the fastest of {args.repeats} runs; each cell: the worst message / "
             f"the median message, in ms. A fixed pure-Python loop took {machine_speed_s():.2f} s "
             "(bench/results_io.machine_speed_s; the machine was shared with other work).", "",
             f"Target (issue 20): no message up to {LIMIT:,} characters over {TARGET_MS:.0f} ms in the NLU "
             f"pipeline. Worst: **{worst_nlu[0]:.0f} ms** ({worst_nlu[1]}); families over the target: "
             f"{', '.join(over) if over else 'none'}.", "",
             "| family | NLU pipeline (Agent.parse_message) | parse_values | mask_text |", "|---|---|---|---|"]
    lines += rows
    lines += ["", f"Punctuation blanking of the tokenizer at {LIMIT:,} characters (fastest of {args.repeats}):", "",
              "| family | Rasa's WhitespaceTokenizer pattern | bot.assistant.components.tokenizer |", "|---|---|---|"]
    lines += tokenizer_rows(args.repeats)
    lines += ["", f"Command: `.venv/bin/python bench/bench_nlu_worst.py --repeats {args.repeats}`"]
    print("\n".join(lines))
    write_results(RESULTS, lines)


if __name__ == "__main__":
    main()
