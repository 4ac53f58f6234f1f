"""Assistant performance on this machine: training time, start-up, reply latency over REST, Rasa server memory.

    .venv/bin/python bench/bench_assistant.py [--turns 200] [--skip-train]

1. `rasa train --force` (into a temporary folder) - target <= 60 s.
2. Start-up: `rasa run` spawned until /status reports the loaded model - target <= 20 s.
3. Latency: 200 user turns of mixed fa/tr conversations (greetings, FAQ, form turns, full estimates with chart,
   value changes, fallbacks) over POST /webhooks/rest/webhook, one at a time - target p95 <= 100 ms.
4. Resident memory (VmRSS and peak VmHWM) of the Rasa server after the run - target <= 650 MB.
Writes bench/results/assistant.md.
"""
from __future__ import annotations

import argparse
import itertools
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Dict, List, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.results_io import percentile, post, write_results  # noqa: E402
from tests.servers import BIN, MODEL_PATH, ensure_model, start_action_server, start_rasa_server  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "assistant.md"
TARGETS = {"train_s": 60, "startup_s": 20, "p95_ms": 100, "rss_mb": 650}

# Each conversation is a list of (kind, user text); kinds group the latency figures.
CONVERSATIONS: List[List[Tuple[str, str]]] = [
    [("rule", "سلام وقت بخیر"), ("form", "میخوام یه مدل رو فاین تیون کنم"), ("form", "Llama 3.1 8B"),
     ("form", "QLoRA"), ("form", "۲۰۴۸"), ("estimate", "۵۰ دلار"), ("estimate", "با LoRA چطور؟"),
     ("rule", "ممنون")],
    [("rule", "Merhaba"), ("estimate", "13B modeli QLoRA ile 4096 token ile eğitmek istiyorum, bütçe yok"),
     ("estimate", "LoRA olursa?"), ("faq", "fiyatlara KDV dahil mi?"), ("rule", "hoşça kalın")],
    [("faq", "دیتاهامون کجا نگهداری میشه؟ KVKK چی؟"), ("faq", "H100 بهتره یا A100؟"),
     ("fallback", "دستور پخت قرمه سبزی؟"), ("rule", "تو رباتی؟")],
    [("form", "Merhaba, fine-tuning için hangi GPU'yu kiralamalıyım?"), ("form", "Qwen2.5 14B"),
     ("faq", "LoRA ile QLoRA arasındaki fark ne?"), ("form", "lora"), ("form", "4 bin"),
     ("estimate", "bütçem 100 dolar"), ("estimate", "2048 token olursa?")],
    [("estimate", "70B full fine-tune 4096 token, محدودیت بودجه ندارم"), ("rule", "hello there"),
     ("fallback", "😂😂"), ("faq", "فاکتور الکترونیکی میدید؟")],
]


def train_time() -> float:
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        subprocess.run([str(BIN / "rasa"), "train", "--force", "--fixed-model-name", "bench", "--out", out,
                        "--domain", "domain", "--config", "config.yml", "--data", "data"],
                       cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - started


def memory_mb(pid: int) -> Dict[str, float]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return fields


def run_turns(url: str, turns: int) -> Dict[str, List[float]]:
    latencies: Dict[str, List[float]] = {}
    done = 0
    for conversation in itertools.cycle(CONVERSATIONS):
        sender = f"bench-{uuid.uuid4().hex[:8]}"
        for kind, text in conversation:
            latencies.setdefault(kind, []).append(post(url, sender, text)[0])
            done += 1
            if done >= turns:
                return latencies
    return latencies


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--skip-train", action="store_true")
    args = parser.parse_args()

    train_s = None if args.skip_train else train_time()
    if train_s is not None:
        print(f"rasa train --force: {train_s:.1f} s", flush=True)
    ensure_model()
    actions = start_action_server()
    started = time.perf_counter()
    rasa = start_rasa_server(actions.port, model=MODEL_PATH)
    startup_s = time.perf_counter() - started
    print(f"start-up until /status has the model: {startup_s:.1f} s", flush=True)
    try:
        url = f"{rasa.url}/webhooks/rest/webhook"
        post(url, "bench-warmup", "سلام")  # first request loads lazily created objects; not a user-facing turn
        latencies = run_turns(url, args.turns)
        memory = memory_mb(rasa.proc.pid)
        actions_memory = memory_mb(actions.proc.pid)
    finally:
        rasa.stop()
        actions.stop()

    all_turns = [ms for values in latencies.values() for ms in values]
    p50, p95 = statistics.median(all_turns), percentile(all_turns, 0.95)
    print(f"{len(all_turns)} turns: p50 {p50:.0f} ms, p95 {p95:.0f} ms; Rasa RSS {memory['VmRSS']:.0f} MB "
          f"(peak {memory['VmHWM']:.0f} MB)")

    def verdict(value, target):
        return "✅" if value is not None and value <= target else ("—" if value is None else "❌")

    lines = ["# Assistant benchmark", "",
             "Produced by `bench/bench_assistant.py` on this machine (2 cores), LogisticRegression pipeline, "
             "SQLite tracker store, action server and Rasa server as separate processes.", "",
             "| measure | value | target | |", "|---|---|---|---|"]
    if train_s is not None:
        lines.append(f"| `rasa train --force` | {train_s:.1f} s | ≤ {TARGETS['train_s']} s | "
                     f"{verdict(train_s, TARGETS['train_s'])} |")
    lines += [
        f"| start-up until the server answers with the model loaded | {startup_s:.1f} s | ≤ {TARGETS['startup_s']} s"
        f" | {verdict(startup_s, TARGETS['startup_s'])} |",
        f"| reply latency p50 over REST ({len(all_turns)} turns) | {p50:.0f} ms | | |",
        f"| reply latency p95 over REST ({len(all_turns)} turns) | {p95:.0f} ms | ≤ {TARGETS['p95_ms']} ms | "
        f"{verdict(p95, TARGETS['p95_ms'])} |",
        f"| Rasa server resident memory after the run (peak) | {memory['VmRSS']:.0f} MB ({memory['VmHWM']:.0f} MB)"
        f" | ≤ {TARGETS['rss_mb']} MB | {verdict(memory['VmRSS'], TARGETS['rss_mb'])} |",
        f"| action server resident memory (peak) | {actions_memory['VmRSS']:.0f} MB "
        f"({actions_memory['VmHWM']:.0f} MB) | | |",
        "", "Latency by kind of turn:", "", "| kind | turns | p50 | p95 | max |", "|---|---|---|---|---|"]
    for kind, values in sorted(latencies.items()):
        lines.append(f"| {kind} | {len(values)} | {statistics.median(values):.0f} ms | "
                     f"{percentile(values, 0.95):.0f} ms | {max(values):.0f} ms |")
    lines += ["", "Kinds: `rule` greetings/thanks/bot challenge/English (NLU + rule, one action-server call for "
              "the language slot); `faq` answered by action_answer_faq; `form` one form question; `estimate` a "
              "full estimate with chart (first drawing of a chart costs most; repeated requests reuse the file); "
              "`fallback` out of scope / emoji."]
    write_results(RESULTS, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
