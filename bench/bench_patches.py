"""Each speed patch to Rasa measured alone: leave-one-out against all patches on, in the same run, alternating.

    .venv/bin/python bench/bench_patches.py [--rounds 40] [--long-turns 60] [--only fast_rules,fast_copies]
                                            [--out bench/results/patches.md]

12 Rasa servers (about 7 GB of memory). The run of bench/results/patches.md took 15 minutes at load 5-11 on the
2-core machine, about 5 of them starting the servers side by side; a quieter machine takes less. --only measures
fewer patches (fewer servers), to re-run the close calls (bench/results/patches_confirm.md: 7.5 minutes).

Starts one action server and, side by side, the advisor's Rasa server (the trained model, the project's SQLite
tracker store, as the tests start it) once per configuration: twice with every patch on (ADVISOR_RASA_PATCHES=on:
two servers of the same code, whose difference is the noise of the method), and once per speed patch with that
one patch left out (ADVISOR_RASA_PATCHES=-name): the patch's gain in the product as shipped, where the other patches
are in effect. The behaviour patches (action_timeout, store_unavailable, payload_depth) are not measured: they stay
for what they do, not for speed.

1. Short conversations (a greeting, a full estimate, two what-ifs, a goodbye; Turkish and Persian in turn), turn by
   turn across every configuration (turn 1 to each server, in an order shuffled each round, then turn 2, ...), so
   that every configuration sees the same load of this shared machine. Measured per advice turn (estimate and
   what-ifs): CPU time of the Rasa server and the action server together, from /proc/PID/task/*/schedstat
   (nanoseconds of CPU, every thread; the load of other processes changes it little, unlike latency), and latency
   p50/p95.
2. One longer conversation per configuration (--long-turns what-ifs after a full estimate), again turn by turn
   across the configurations: CPU per turn over the last ten turns, where the patches that bound the per-turn work
   of a long conversation (the rule lookup).show.

A patch's gain is, round by round, the leave-one-out server's CPU per advice turn minus the mean of the two all-on
servers' (paired, so slow and quiet minutes cancel), with a 95 % interval (mean ± 1.96 standard errors over the
rounds). The same figure between the two all-on servers gives the noise. Writes bench/results/patches.md.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.results_io import machine_speed_s, percentile, post, write_results  # noqa: E402
from bot.assistant import patches  # noqa: E402
from tests.servers import Server, ensure_model, start_action_server, start_rasa_server  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "patches.md"
BEHAVIOUR = ("action_timeout", "store_unavailable", "payload_depth")
SPEED = tuple(p.module for p in patches.PATCHES if p.module not in BEHAVIOUR)
ALL_ON = ("all on (A)", "all on (B)")

CONVERSATIONS: List[List[Tuple[str, str]]] = [
    [("greeting", "İyi günler"),
     ("advice", "Mistral 7B modelini QLoRA ile 2048 token uzunlukta eğitmek istiyorum"),
     ("advice", "Peki 8192 token olursa?"), ("advice", "LoRA ile yapsam?"), ("goodbye", "teşekkürler, görüşürüz")],
    [("greeting", "درود"),
     ("advice", "قصد دارم Qwen2.5 14B رو با LoRA و طول ۴۰۹۶ توکن آموزش بدم"),
     ("advice", "اگه QLoRA باشه چی؟"), ("advice", "با ۲۰۴۸ توکن چطور؟"), ("goodbye", "مرسی، فعلا")],
]
LONG_SETUP = "Llama 3.1 8B modelini QLoRA ile 4096 token ile eğitmek istiyorum"
LONG_WHAT_IFS = ["LoRA ile olursa?", "QLoRA ile olursa?"]


def thread_cpu_ns(pid: int) -> Dict[int, int]:
    """Nanoseconds on CPU so far of each thread of `pid` (the first field of /proc/PID/task/TID/schedstat)."""
    found = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found[int(task.name)] = int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):  # the thread ended meanwhile
            continue
    return found


def cpu_snapshot(pids: Sequence[int]) -> Dict[Tuple[int, int], int]:
    return {(pid, tid): ns for pid in pids for tid, ns in thread_cpu_ns(pid).items()}


def cpu_used_ms(before: Dict[Tuple[int, int], int], pids: Sequence[int]) -> float:
    """CPU time these processes' threads used since `before`, in ms (a thread started since counts in full)."""
    after = cpu_snapshot(pids)
    return sum(ns - before.get(key, 0) for key, ns in after.items()) / 1e6


@dataclass
class Config:
    name: str
    switch: str  # ADVISOR_RASA_PATCHES
    server: Optional[Server] = None
    advice_cpu: List[List[float]] = field(default_factory=list)  # per round, CPU ms of each advice turn
    advice_ms: List[float] = field(default_factory=list)
    all_cpu: List[float] = field(default_factory=list)
    long_cpu: List[float] = field(default_factory=list)
    long_ms: List[float] = field(default_factory=list)

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"{self.server.url}/webhooks/rest/webhook"


def configurations(only: Sequence[str]) -> List[Config]:
    left_out = only or SPEED
    return ([Config(name, "on") for name in ALL_ON]
            + [Config(f"without {name}", f"-{name}") for name in left_out])


def start_all(configs: List[Config], action_port: int, done: threading.Event) -> List[threading.Thread]:
    """Every configuration's Rasa server, started side by side (each loads TensorFlow and the model). Each is started
    by a thread that lives until `done` is set and then stops it: bot.launcher ends a server when the thread that
    started it ends (the parent-death signal follows the thread)."""
    errors: List[BaseException] = []
    ready = threading.Semaphore(0)

    def serve(config: Config) -> None:
        try:
            config.server = start_rasa_server(action_port, env={"ADVISOR_RASA_PATCHES": config.switch},
                                              timeout=900)
        except BaseException as error:  # noqa: BLE001 - reported by start_all
            errors.append(error)
            return
        finally:
            ready.release()
        done.wait()
        config.server.stop()

    threads = [threading.Thread(target=serve, args=(config,)) for config in configs]
    for thread in threads:
        thread.start()
    for _ in threads:
        ready.acquire()
    if errors:
        raise errors[0]
    return threads


def turn(config: Config, sender: str, text: str, pids: Sequence[int]) -> Tuple[float, float]:
    """(CPU ms of the Rasa server + action server, latency ms) of one message."""
    before = cpu_snapshot(pids)
    ms, replies = post(config.url, sender, text, timeout=120)
    used = cpu_used_ms(before, pids)
    if not replies:
        raise RuntimeError(f"{config.name}: no answer to {text!r}")
    return used, ms


def short_conversations(configs: List[Config], rounds: int, action_pid: int, order: random.Random) -> None:
    for number in range(rounds):
        conversation = CONVERSATIONS[number % len(CONVERSATIONS)]
        senders = {config.name: f"pt-{uuid.uuid4().hex[:8]}" for config in configs}
        for config in configs:
            config.advice_cpu.append([])
        for kind, text in conversation:
            shuffled = list(configs)
            order.shuffle(shuffled)
            for config in shuffled:
                assert config.server is not None
                used, ms = turn(config, senders[config.name], text, [config.server.proc.pid, action_pid])
                config.all_cpu.append(used)
                if kind == "advice":
                    config.advice_cpu[-1].append(used)
                    config.advice_ms.append(ms)
        print(f"round {number + 1}/{rounds}", flush=True)


def long_conversations(configs: List[Config], turns: int, action_pid: int, order: random.Random) -> None:
    senders = {config.name: f"long-{uuid.uuid4().hex[:8]}" for config in configs}
    for config in configs:
        post(config.url, senders[config.name], LONG_SETUP, timeout=120)
    for number in range(turns):
        shuffled = list(configs)
        order.shuffle(shuffled)
        for config in shuffled:
            assert config.server is not None
            used, ms = turn(config, senders[config.name], LONG_WHAT_IFS[number % 2],
                            [config.server.proc.pid, action_pid])
            config.long_cpu.append(used)
            config.long_ms.append(ms)


def interval(differences: List[float]) -> Tuple[float, float]:
    """Mean and half-width of its 95 % interval (1.96 standard errors)."""
    mean = statistics.fmean(differences)
    half = 1.96 * statistics.stdev(differences) / len(differences) ** 0.5 if len(differences) > 1 else float("inf")
    return mean, half


def round_means(config: Config) -> List[float]:
    return [statistics.fmean(values) for values in config.advice_cpu]


def gain(config: Config, baseline: List[float]) -> Tuple[float, float]:
    return interval([mine - base for mine, base in zip(round_means(config), baseline)])


def long_gain(config: Config, baseline: List[float], last: int) -> Tuple[float, float]:
    return interval([mine - base for mine, base in zip(config.long_cpu[-last:], baseline[-last:])])


def verdict(mean: float, half: float, noise: float) -> str:
    """'pays' when the gain's interval lies above zero and the gain is above the A/A difference and its interval."""
    return "pays" if mean - half > 0 and mean > noise else "within noise"


def report(configs: List[Config], args: argparse.Namespace, load: Tuple[float, float], speed: float,
           wall_s: float) -> List[str]:
    a, b = configs[0], configs[1]
    baseline = [(x + y) / 2 for x, y in zip(round_means(a), round_means(b))]
    long_base = [(x + y) / 2 for x, y in zip(a.long_cpu, b.long_cpu)]
    last = min(10, args.long_turns)
    aa_mean, aa_half = interval([x - y for x, y in zip(round_means(a), round_means(b))])
    laa_mean, laa_half = interval([x - y for x, y in zip(a.long_cpu[-last:], b.long_cpu[-last:])])
    noise, long_noise = abs(aa_mean) + aa_half, abs(laa_mean) + laa_half
    base_cpu = statistics.fmean(baseline)
    lines = [
        "# Each patch to Rasa measured alone (leave-one-out)", "",
        f"Produced by `bench/bench_patches.py --rounds {args.rounds} --long-turns {args.long_turns}"
        + (f" --only {args.only}" if args.only else "") + "` on this machine "
        f"(2 cores shared with other engineers' work: load average {load[0]:.1f} before, {load[1]:.1f} after; a fixed "
        f"pure-Python loop took {speed:.2f} s, see bench/results_io.machine_speed_s; the run took {wall_s / 60:.1f} "
        "min). One action server; one Rasa server per configuration (trained model, SQLite tracker store), all "
        "running at once, every turn sent to each configuration in a shuffled order before the next turn: the same "
        "load for all. CPU is the Rasa server's and the action server's together per turn, every thread, from "
        "/proc/PID/task/*/schedstat: the figure to trust on this shared machine. Latency moves with the load.", "",
        f"Advice turns (estimate and what-ifs) of {args.rounds} short conversations per configuration, "
        f"{sum(len(r) for r in a.advice_cpu)} turns each. Gain = CPU per advice turn without the patch minus with "
        "every patch (mean of the two all-on servers), paired round by round, with its 95 % interval. All on: "
        f"**{base_cpu:.1f} ms** CPU per advice turn. Noise (all on A minus all on B): {aa_mean:+.2f} ± {aa_half:.2f} "
        f"ms per advice turn; {laa_mean:+.2f} ± {laa_half:.2f} ms per late turn of the long conversation.", "",
        f"Long conversation: {args.long_turns} what-ifs after a full estimate, CPU per turn over the last {last}.", "",
        "| configuration | CPU per advice turn | gain per advice turn (95 %) | advice p50 / p95 | long conv., "
        f"CPU per turn (last {last}) | gain per late turn (95 %) | verdict |",
        "|---|---|---|---|---|---|---|"]
    for config in configs:
        cpu = statistics.fmean(round_means(config))
        p50, p95 = statistics.median(config.advice_ms), percentile(config.advice_ms, 0.95)
        late = statistics.fmean(config.long_cpu[-last:])
        if config in (a, b):
            lines.append(f"| {config.name} | {cpu:.1f} ms | | {p50:.0f} / {p95:.0f} ms | {late:.1f} ms | | |")
            continue
        mean, half = gain(config, baseline)
        lmean, lhalf = long_gain(config, long_base, last)
        pays = "pays" in (verdict(mean, half, noise), verdict(lmean, lhalf, long_noise))
        lines.append(f"| {config.name} | {cpu:.1f} ms | {mean:+.2f} ± {half:.2f} ms ({mean / base_cpu:+.1%}) | "
                     f"{p50:.0f} / {p95:.0f} ms | {late:.1f} ms | {lmean:+.2f} ± {lhalf:.2f} ms | "
                     f"{'pays' if pays else 'within noise'} |")
    lines += ["", "Verdict: `pays` when, on advice turns or on late turns of the long conversation, the gain's 95 % "
              "interval lies above zero and the gain exceeds the all-on servers' difference plus its interval; "
              "`within noise` otherwise. Behaviour patches (action_timeout, store_unavailable, payload_depth) are not "
              "measured: they stay for what they do."]
    return lines


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=40, help="short conversations per configuration")
    parser.add_argument("--long-turns", type=int, default=60, help="what-ifs of the long conversation")
    parser.add_argument("--only", default="", help="comma-separated speed patches to leave out (default: each)")
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--out", type=Path, default=RESULTS, help="results file (default bench/results/patches.md)")
    args = parser.parse_args()
    only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = sorted(set(only) - set(SPEED))
    if unknown:
        parser.error(f"not a speed patch: {', '.join(unknown)}; the speed patches: {', '.join(SPEED)}")

    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    speed = machine_speed_s()
    ensure_model()
    configs = configurations(only)
    order = random.Random(args.seed)
    actions = start_action_server(env={"ADVISOR_RASA_PATCHES": "on"})
    done = threading.Event()
    threads: List[threading.Thread] = []
    try:
        threads = start_all(configs, actions.port, done)
        print(f"{len(configs)} Rasa servers up after {time.perf_counter() - started:.0f} s", flush=True)
        for config in configs:  # warm-up: the first turns load lazily what later turns reuse
            sender = f"warm-{uuid.uuid4().hex[:8]}"
            for conversation in CONVERSATIONS:
                for _, text in conversation:
                    post(config.url, sender, text, timeout=120)
        short_conversations(configs, args.rounds, actions.proc.pid, order)
        long_conversations(configs, args.long_turns, actions.proc.pid, order)
    finally:
        done.set()
        for thread in threads:
            thread.join()
        actions.stop()
    load = (load_before, os.getloadavg()[0])
    lines = report(configs, args, load, speed, time.perf_counter() - started)
    print("\n".join(lines))
    write_results(args.out.resolve(), lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
