"""Compare NLU classifiers on the held-out split: LogisticRegression (config.yml) vs DIET.

Trains an NLU-only model per candidate on data/nlu/*.yml, parses every example of tests/nlu/{fa,tr}_test.yml and
reports intent accuracy per language, NLU parse latency (p50/p95, one message at a time), training time and the
confusions. Writes bench/results/nlu_compare.md.

    .venv/bin/python bench/nlu_compare.py [--only lr|diet] [--diet-epochs 100]
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import copy
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.results_io import percentile, write_results  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "nlu_compare.md"
TEST_SETS = {"fa": ROOT / "tests" / "nlu" / "fa_test.yml", "tr": ROOT / "tests" / "nlu" / "tr_test.yml"}


def load_examples(path: Path) -> List[Tuple[str, str]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    examples = []
    for block in data["nlu"]:
        if "intent" not in block:
            continue
        for line in block["examples"].splitlines():
            line = line.strip()
            if line.startswith("- "):
                examples.append((line[2:].strip(), block["intent"]))
    return examples


def candidate_configs(diet_epochs: int) -> Dict[str, dict]:
    base = yaml.safe_load((ROOT / "config.yml").read_text(encoding="utf-8"))
    lr = copy.deepcopy(base)
    diet = copy.deepcopy(base)
    diet["pipeline"] = [
        {"name": "DIETClassifier", "epochs": diet_epochs, "random_seed": 42, "entity_recognition": False,
         "constrain_similarities": True}
        if step["name"].endswith("LogisticRegressionClassifier") else step
        for step in diet["pipeline"]]
    return {"lr": lr, "diet": diet}


async def evaluate(model_path: str) -> dict:
    from rasa.core.agent import Agent

    agent = Agent.load(model_path)
    report = {}
    for lang, path in TEST_SETS.items():
        examples = load_examples(path)
        latencies, correct, confusions = [], 0, collections.Counter()
        for text, intent in examples:
            started = time.perf_counter()
            parsed = await agent.parse_message(text)
            latencies.append((time.perf_counter() - started) * 1000)
            predicted = parsed["intent"]["name"]
            if predicted == intent:
                correct += 1
            else:
                confusions[(intent, predicted)] += 1
        report[lang] = {"n": len(examples), "accuracy": correct / len(examples),
                        "p50_ms": statistics.median(latencies), "p95_ms": percentile(latencies, 0.95),
                        "confusions": confusions.most_common(8)}
    return report


def train(name: str, config: dict, workdir: Path) -> Tuple[str, float]:
    from rasa.model_training import train_nlu

    config_path = workdir / f"{name}.yml"
    config_path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    started = time.perf_counter()
    model = train_nlu(str(config_path), str(ROOT / "data" / "nlu"), str(workdir / "models"),
                      fixed_model_name=f"nlu-{name}")
    return model, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", choices=["lr", "diet"])
    parser.add_argument("--diet-epochs", type=int, default=100)
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        # A fresh training cache, so the training times are not cache hits from earlier runs.
        os.environ["RASA_CACHE_DIRECTORY"] = str(Path(tmp) / "cache")
        for name, config in candidate_configs(args.diet_epochs).items():
            if args.only and name != args.only:
                continue
            model, seconds = train(name, config, Path(tmp))
            results[name] = {"train_s": seconds, **asyncio.run(evaluate(model))}
            print(name, f"train {seconds:.1f}s",
                  {lang: f"{r['accuracy']:.1%} p50 {r['p50_ms']:.1f}ms p95 {r['p95_ms']:.1f}ms"
                   for lang, r in results[name].items() if lang in TEST_SETS}, flush=True)

    lines = ["# NLU classifier comparison on the held-out split", "",
             "Trained on `data/nlu/*.yml`, tested on `tests/nlu/{fa,tr}_test.yml` (examples never seen in "
             "training), NLU parse latency per message on this machine (2 cores). Produced by "
             "`bench/nlu_compare.py`.", "",
             "| classifier | language | examples | intent accuracy | parse p50 | parse p95 | NLU train time |",
             "|---|---|---|---|---|---|---|"]
    for name, result in results.items():
        label = "LogisticRegression" if name == "lr" else f"DIET ({args.diet_epochs} epochs)"
        for lang in TEST_SETS:
            r = result[lang]
            lines.append(f"| {label} | {lang} | {r['n']} | {r['accuracy']:.1%} | {r['p50_ms']:.1f} ms | "
                         f"{r['p95_ms']:.1f} ms | {result['train_s']:.0f} s |")
    lines += ["", "Most frequent confusions (expected → predicted, count):", ""]
    for name, result in results.items():
        for lang in TEST_SETS:
            pairs = ", ".join(f"{a}→{b} ({n})" for (a, b), n in result[lang]["confusions"]) or "none"
            lines.append(f"- {name} {lang}: {pairs}")
    write_results(RESULTS, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
