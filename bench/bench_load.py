"""Load on the cluster of `make cluster`: how many turns per second, and what 50 customers at once feel.

    .venv/bin/python bench/bench_load.py [--closed-seconds 45] [--clients 16] [--repeats 2] [--customers 50]
                                         [--open-seconds 120]

Starts the real cluster (scripts/cluster.sh on free ports, PostgreSQL database `advisor_bench`, dropped first so that
every run starts empty, Redis directly) and
sends the mixed fa/tr conversations of bench/bench_assistant.py (greetings, FAQ, form turns, full estimates with a
chart, what-ifs, fallbacks) through HAProxy's REST entry:

1. closed loop, one Rasa instance (the other instance and its action server set to maintenance in HAProxy) and then
   two instances: `--clients` customers who each send their next message as soon as the answer arrives; turns per
   second over `--closed-seconds`, `--repeats` times each in turn. Target: two instances >= 1.6x one.
2. open loop, both instances: `--customers` customers, each writing again 3-8 s (uniform) after the answer, for
   `--open-seconds`; latency p50/p95/max and errors (non-200, connection error, no answer). Target: no error,
   p95 < 500 ms.
3. resident memory (VmRSS) of every process of the cluster after the run.

The machine is shared: the load average before and after each phase is written with the results, read them together.
Writes bench/results/load.md. Not a test: nothing here fails a build.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import statistics
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_assistant import CONVERSATIONS  # noqa: E402
from bench.lean_http import HTTPError, KeepAliveClient  # noqa: E402
from bench.results_io import machine_speed_s, percentile, write_results  # noqa: E402
from tests.cluster import Cluster, PostgresSwitch, start_cluster  # noqa: E402
from tests.servers import ensure_model  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "load.md"
DATABASE = "advisor_bench"  # dropped at the start of each run
TARGET_SCALING = 1.6
TARGET_P95_MS = 500
PROGRAMS = ("rasa-a", "rasa-b", "actions-a", "actions-b", "haproxy", "website", "staff")
# Taken out of the balancer for the one-instance run (HAProxy maintenance: instantly, and the process stays warm).
SECOND_INSTANCE = ("rasa/rasa-b", "socketio/rasa-b", "actions/actions-b")


@dataclass
class Phase:
    name: str
    latencies_ms: List[float] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)
    seconds: float = 0.0
    load_before: Tuple[float, float, float] = (0.0, 0.0, 0.0)
    load_after: Tuple[float, float, float] = (0.0, 0.0, 0.0)

    @property
    def turns(self) -> int:
        return len(self.latencies_ms)

    @property
    def turns_per_s(self) -> float:
        return self.turns / self.seconds if self.seconds else 0.0

    def ms(self, q: float) -> float:
        return percentile(self.latencies_ms, q) if self.latencies_ms else float("nan")


async def turn(http: KeepAliveClient, sender: str, text: str, phase: Phase) -> None:
    started = time.perf_counter()
    try:
        status, body = await http.post_json({"sender": sender, "message": text})
        if status != 200:
            phase.errors.append(f"HTTP {status}")
            return
        if not body:
            phase.errors.append(f"no answer to {text[:30]!r}")
            return
    except (HTTPError, asyncio.TimeoutError) as error:
        phase.errors.append(str(error) or type(error).__name__)
        return
    phase.latencies_ms.append((time.perf_counter() - started) * 1000)


def conversation_turns(rng: random.Random):
    """Endless stream of (sender, text): one conversation after another, each with a fresh sender id."""
    while True:
        sender = f"load-{uuid.uuid4().hex[:12]}"
        for _, text in rng.choice(CONVERSATIONS):
            yield sender, text


async def closed_loop(url: str, clients: int, seconds: float, name: str) -> Phase:
    phase = Phase(name, load_before=os.getloadavg())
    deadline = time.monotonic() + seconds

    async def customer(seed: int) -> None:
        stream = conversation_turns(random.Random(seed))
        async with KeepAliveClient(url) as http:
            while time.monotonic() < deadline:
                sender, text = next(stream)
                await turn(http, sender, text, phase)

    started = time.monotonic()
    await asyncio.gather(*(customer(i) for i in range(clients)))
    phase.seconds = time.monotonic() - started
    phase.load_after = os.getloadavg()
    return phase


async def open_loop(url: str, customers: int, seconds: float, think: Tuple[float, float]) -> Phase:
    phase = Phase(f"open loop, {customers} customers", load_before=os.getloadavg())
    deadline = time.monotonic() + seconds

    async def customer(seed: int) -> None:
        rng = random.Random(1000 + seed)
        stream = conversation_turns(rng)
        await asyncio.sleep(rng.uniform(0, think[1]))  # customers arrive spread out, not all in the same second
        async with KeepAliveClient(url) as http:
            while time.monotonic() < deadline:
                sender, text = next(stream)
                await turn(http, sender, text, phase)
                await asyncio.sleep(rng.uniform(*think))

    started = time.monotonic()
    await asyncio.gather(*(customer(i) for i in range(customers)))
    phase.seconds = time.monotonic() - started
    phase.load_after = os.getloadavg()
    return phase


def merged(phases: List[Phase]) -> Phase:
    """Several runs of one configuration as one: all turns over all seconds, first load before, last load after."""
    whole = Phase(phases[0].name, load_before=phases[0].load_before, load_after=phases[-1].load_after)
    for phase in phases:
        whole.latencies_ms += phase.latencies_ms
        whole.errors += phase.errors
        whole.seconds += phase.seconds
    return whole


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def process_cpu_s(pid: int) -> float:
    """CPU time (user + system, all threads) a process has used so far."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (ValueError, OSError, IndexError):
        return 0.0


def postgres_backends(database: str) -> List[int]:
    import psycopg2

    with psycopg2.connect("postgresql://postgres@127.0.0.1:5432/postgres") as conn, conn.cursor() as cur:
        cur.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", (database,))
        return [row[0] for row in cur.fetchall()]


def cpu_seconds(cluster: Cluster) -> Dict[str, float]:
    """CPU time used so far by each process of the cluster, the PostgreSQL backends serving its database, the Redis
    server (shared with other users of the machine) and this load generator."""
    import redis

    found: Dict[str, float] = {}
    for program in PROGRAMS:
        try:
            found[program] = process_cpu_s(cluster.pid(program))
        except ValueError:
            found[program] = 0.0
    found["postgresql (backends of the bench database)"] = sum(
        process_cpu_s(pid) for pid in postgres_backends(cluster.database))
    found["redis-server (shared)"] = process_cpu_s(int(redis.Redis().info()["process_id"]))
    found["load generator (this script)"] = time.process_time()
    return found


def cpu_ms_per_turn(before: Dict[str, float], after: Dict[str, float], turns: int) -> Dict[str, float]:
    return {name: (after[name] - before[name]) * 1000 / max(turns, 1) for name in after}


def memory(cluster: Cluster) -> Dict[str, float]:
    found: Dict[str, float] = {}
    for program in PROGRAMS:
        try:
            found[program] = rss_mb(cluster.pid(program))
        except (ValueError, OSError):
            found[program] = float("nan")
    return found


def action_traffic(cluster: Cluster) -> Tuple[int, int]:
    """Requests HAProxy has passed to the action servers so far, and the bytes it received from Rasa for them."""
    lines = cluster.haproxy("show stat").strip().splitlines()
    header = lines[0].lstrip("# ").split(",")
    for line in lines[1:]:
        row = dict(zip(header, line.split(",")))
        if row["pxname"] == "actions" and row["svname"] == "BACKEND":
            return int(row["stot"] or 0), int(row["bin"] or 0)
    return 0, 0


def set_second_instance(cluster: Cluster, state: str) -> None:
    for server in SECOND_INSTANCE:
        cluster.haproxy(f"set server {server} state {state}")


async def warm_up(cluster: Cluster) -> None:
    """Every conversation once on each instance: first-call costs (imports, caches, connections) out of the way."""
    for base in (cluster.rasa_a, cluster.rasa_b):
        scratch = Phase("warm-up")
        async with KeepAliveClient(f"{base}/webhooks/rest/webhook", timeout=120) as http:
            for conversation in CONVERSATIONS:
                sender = f"warm-{uuid.uuid4().hex[:8]}"
                for _, text in conversation:
                    await turn(http, sender, text, scratch)


def fmt_load(load: Tuple[float, float, float]) -> str:
    return " / ".join(f"{x:.2f}" for x in load)


def report(args: argparse.Namespace, one: Phase, two: Phase, open_run: Phase, mem: Dict[str, float],
           cpu: Dict[str, float], actions: Tuple[float, float], runs_in_order: List[Phase]) -> List[str]:
    scaling = two.turns_per_s / one.turns_per_s if one.turns_per_s else float("nan")
    ok_scaling = scaling >= TARGET_SCALING
    ok_open = not open_run.errors and open_run.ms(0.95) < TARGET_P95_MS
    lines = [
        "# Load on the cluster (bench/bench_load.py)",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {os.cpu_count()} CPU cores "
        f"({platform.machine()}), a machine shared with other work: the load average (1/5/15 min) is given before "
        f"and after each phase; a fixed pure-Python loop took {args.speed_s:.2f} s (bench/results_io.machine_speed_s)."
        " Cluster: `scripts/cluster.sh` (HAProxy, 2 Rasa instances, 2 action servers, "
        "PostgreSQL tracker store, Redis locks), mixed fa/tr conversations of bench/bench_assistant.py over REST "
        "through the balancer.",
        "",
        "## Closed loop: turns per second",
        "",
        f"{args.clients} customers, each sending the next message as soon as the answer arrives, "
        f"{args.closed_seconds:.0f} s per run, {args.repeats} runs of each in turn (1, 2, 1, 2 instances) added up.",
        "",
        "| Rasa instances | turns | turns/s | p50 ms | p95 ms | errors | load before | load after |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for count, phase in ((1, one), (2, two)):
        lines.append(f"| {count} | {phase.turns} | {phase.turns_per_s:.1f} | {phase.ms(0.5):.0f} | "
                     f"{phase.ms(0.95):.0f} | {len(phase.errors)} | {fmt_load(phase.load_before)} | "
                     f"{fmt_load(phase.load_after)} |")
    lines += [
        "",
        f"Two instances serve **{scaling:.2f}x** the turns per second of one (target >= {TARGET_SCALING}x: "
        f"{'met' if ok_scaling else 'NOT met'}).",
        "",
        "## Open loop: customers writing at their own pace",
        "",
        f"{args.customers} customers, each writing again {args.think_min:.0f}-{args.think_max:.0f} s after the "
        f"answer, for {args.open_seconds:.0f} s, both instances.",
        "",
        "| turns | p50 ms | p95 ms | max ms | errors | load before | load after |",
        "|---|---|---|---|---|---|---|",
        f"| {open_run.turns} | {open_run.ms(0.5):.0f} | {open_run.ms(0.95):.0f} | "
        f"{max(open_run.latencies_ms, default=float('nan')):.0f} | {len(open_run.errors)} | "
        f"{fmt_load(open_run.load_before)} | {fmt_load(open_run.load_after)} |",
        "",
        f"Target: zero errors and p95 < {TARGET_P95_MS} ms: {'met' if ok_open else 'NOT met'}.",
    ]
    if open_run.errors or one.errors or two.errors:
        lines += ["", "Errors: " + ", ".join(sorted(set(one.errors + two.errors + open_run.errors)))[:500]]
    lines += ["", "## Memory after the run (VmRSS), CPU per turn in the first one-instance run", "",
              "| process | MB | CPU ms per turn |", "|---|---|---|"]
    lines += [f"| {name} | {mem.get(name, float('nan')):.0f} | {value:.1f} |" for name, value in cpu.items()]
    total = sum(cpu.values())
    lines += ["", f"All of it: **{total:.1f} ms of CPU per turn**, so {os.cpu_count()} cores can serve at most about "
                  f"**{os.cpu_count() * 1000 / total:.0f} turns/s** whatever the number of Rasa instances (and less "
                  "while other work runs on the machine). Rasa's own share is "
                  f"{cpu.get('rasa-a', 0.0) / total:.0%}."]
    lines += ["", f"Action-server calls per turn in the same run: {actions[0]:.2f}, {actions[1]:.1f} KB sent by Rasa "
                  "per call (HAProxy's counters of its `actions` backend)."]
    lines += ["", "Runs one by one (turns/s): " + "; ".join(
        f"{phase.name} {phase.turns_per_s:.1f}" for phase in runs_in_order)]
    pairs = [two_run.turns_per_s / one_run.turns_per_s
             for one_run, two_run in zip(runs_in_order[::2], runs_in_order[1::2]) if one_run.turns_per_s]
    if pairs:
        # A burst of other work on the shared machine can slow one whole pair; the median of the pairs shows it.
        lines += ["", "Ratio of each pair (2 instances / the 1-instance run before it): "
                  + ", ".join(f"{ratio:.2f}x" for ratio in pairs)
                  + f"; median {statistics.median(pairs):.2f}x."]
    lines += ["", "Two instances can at best double the turns of one only when one instance cannot use the cores "
                  "the rest leaves idle: on 2 cores that takes Rasa's share of the CPU per turn close to all of it."]
    lines += ["", f"Command: `.venv/bin/python bench/bench_load.py --closed-seconds {args.closed_seconds:.0f} "
                  f"--clients {args.clients} --repeats {args.repeats} --customers {args.customers} "
                  f"--open-seconds {args.open_seconds:.0f}`"]
    return lines


async def main_async(args: argparse.Namespace) -> None:
    ensure_model()
    PostgresSwitch(DATABASE).drop()  # each run starts empty, not on the events of every run before it
    with start_cluster(DATABASE, redis_relay=False) as cluster:
        url = f"{cluster.balancer}/webhooks/rest/webhook"
        await warm_up(cluster)
        # 1, 2, 1, 2 ... instances: what the other work on the machine takes falls on both alike.
        runs: Dict[int, List[Phase]] = {1: [], 2: []}
        cpu: Dict[str, float] = {}
        actions = (0.0, 0.0)
        for _ in range(args.repeats):
            set_second_instance(cluster, "maint")
            await asyncio.sleep(1)
            cpu_before, traffic_before = cpu_seconds(cluster), action_traffic(cluster)
            one = await closed_loop(url, args.clients, args.closed_seconds, "closed loop, 1 instance")
            if not cpu:
                cpu = cpu_ms_per_turn(cpu_before, cpu_seconds(cluster), one.turns)
                calls, sent = (after - before for after, before in zip(action_traffic(cluster), traffic_before))
                actions = (calls / max(one.turns, 1), sent / 1000 / max(calls, 1))
            runs[1].append(one)
            print(f"1 instance: {one.turns_per_s:.1f} turns/s, p95 {one.ms(0.95):.0f} ms, errors {len(one.errors)}")
            set_second_instance(cluster, "ready")
            await asyncio.sleep(3)
            two = await closed_loop(url, args.clients, args.closed_seconds, "closed loop, 2 instances")
            runs[2].append(two)
            print(f"2 instances: {two.turns_per_s:.1f} turns/s, p95 {two.ms(0.95):.0f} ms, errors {len(two.errors)}")
        one, two = merged(runs[1]), merged(runs[2])
        open_run = await open_loop(url, args.customers, args.open_seconds, (args.think_min, args.think_max))
        print(f"open loop: {open_run.turns} turns, p50 {open_run.ms(0.5):.0f} ms, p95 {open_run.ms(0.95):.0f} ms, "
              f"max {max(open_run.latencies_ms, default=float('nan')):.0f} ms, errors {len(open_run.errors)}")
        mem = memory(cluster)
    in_order = [phase for pair in zip(runs[1], runs[2]) for phase in pair]
    write_results(RESULTS, report(args, one, two, open_run, mem, cpu, actions, in_order))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--closed-seconds", type=float, default=45)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--customers", type=int, default=50)
    parser.add_argument("--open-seconds", type=float, default=120)
    parser.add_argument("--think-min", type=float, default=3)
    parser.add_argument("--think-max", type=float, default=8)
    args = parser.parse_args()
    args.speed_s = machine_speed_s()
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
