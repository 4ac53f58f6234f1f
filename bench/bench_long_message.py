"""How long the estimate form's validation takes for a message at the input limit that is full of job words.

    .venv/bin/python bench/bench_long_message.py [--repeats 5]

The validation runs inside the Rasa process (bot/assistant/patches/in_process_actions.py), so while it reads one message
that instance answers no other. The message: 4,000 characters (the channels' limit) of model names, sizes, methods,
lengths and budgets in Turkish and Persian, drawn with a fixed seed. Times `parse_values` alone and
ValidateEstimateForm (actions/forms.py) as the form calls it: without the parser's name cache
(`bot.text.parse.model_names._RESOLVED`, every name resolved again), with the cache empty at the start, and with the
names cached; and one `resolve_model` call, which the cache saves on every repeat of a name.
Writes bench/results/long_message.md. Not a test.
"""
from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.results_io import machine_speed_s, write_results  # noqa: E402
from bot.assistant.channels.limits import MAX_MESSAGE_CHARS as LIMIT  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "long_message.md"
WORDS = ("llama qwen 8b 7b lora qlora 4096 token bütçe 100 dolar مدل بودجه ۲۰۴۸ gpu h100 a100 ve و با 3.1 14B"
         .split())


def long_message(seed: int = 1) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(LIMIT))[:LIMIT]


def form_tracker(text: str):
    from rasa_sdk import Tracker

    latest = {"text": text, "intent": {"name": "inform", "confidence": 0.9}, "entities": [],
              "detected_language": "tr"}
    events = [{"event": "action", "name": "action_listen"}, {"event": "user", "text": text, "parse_data": latest}]
    return Tracker("bench", {"language": "tr", "requested_slot": "seq_len"}, latest, events, False, None,
                   {"name": "estimate_form"}, "action_listen")


def timed_ms(work) -> float:
    started = time.perf_counter()
    work()
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    from rasa_sdk.executor import CollectingDispatcher

    from actions.forms import ValidateEstimateForm
    from bot.advisor.knowledge import load_knowledge, resolve_model
    from bot.text import parse
    from bot.text.parse import model_names
    from bot.text.parsed import forget_parses

    text = long_message()
    kb = load_knowledge()
    parse.parse_values("llama 3.1 8b qlora 2048")  # the parser's tables and the catalogue, as after start-up
    domain = {"forms": {"estimate_form": {"required_slots": ["model", "method", "seq_len", "budget"]}}}

    def validate() -> None:
        asyncio.run(ValidateEstimateForm().run(CollectingDispatcher(), form_tracker(text), domain))

    rows = []
    keep = model_names._RESOLVED_MAX
    for name, work in (("parse_values", lambda: parse.parse_values(text, expected="seq_len")),
                       ("estimate form validation", validate)):
        without, cold, warm = [], [], []
        for _ in range(args.repeats):
            model_names._RESOLVED.clear()
            model_names._RESOLVED_MAX = 0  # every name resolved again, as before the cache
            forget_parses()  # the form's readings of the message (bot/text/parsed.py): each run parses again
            without.append(timed_ms(work))
            model_names._RESOLVED_MAX = keep
            forget_parses()
            cold.append(timed_ms(work))
            forget_parses()
            warm.append(timed_ms(work))
        rows.append((name, statistics.median(without), statistics.median(cold), statistics.median(warm)))
    def resolve_unknown() -> None:
        try:
            resolve_model("llama 100b", kb)  # a size no preset has: scored against the catalogue, then refused
        except ValueError:
            pass

    resolve = statistics.median(timed_ms(resolve_unknown) for _ in range(args.repeats))

    lines = ["# A message at the input limit full of job words (bench/bench_long_message.py)", "",
             f"{len(text)} characters; median of {args.repeats} runs; a fixed pure-Python loop took "
             f"{machine_speed_s():.2f} s (bench/results_io.machine_speed_s).", "",
             "| work | without the name cache | cache empty at the start | names cached |", "|---|---|---|---|"]
    lines += [f"| {name} | {without:.0f} ms | {cold:.0f} ms | {warm:.0f} ms |" for name, without, cold, warm in rows]
    lines += ["", f"One `resolve_model` call for a name no preset has (\"llama 100b\"): {resolve:.1f} ms.", "",
              f"Command: `.venv/bin/python bench/bench_long_message.py --repeats {args.repeats}`"]
    print("\n".join(lines))
    write_results(RESULTS, lines)


if __name__ == "__main__":
    main()
