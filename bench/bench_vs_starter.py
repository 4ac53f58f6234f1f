"""The advisor's Rasa server beside Rasa's own starter bot (`rasa init`), on the same machine at the same time.

    .venv/bin/python bench/bench_vs_starter.py [--rounds 60] [--clients 4] [--seconds 20] [--long-turns 300]
                                              [--starter-dir DIR] [--profile OUT.txt] [--patches on|off]

1. Builds the starter bot with `rasa init --no-prompt` in a temporary folder (it trains its model there) unless
   --starter-dir names one built before, and starts it (its action server, `rasa run`, default in-memory tracker
   store) beside the advisor (its action server, `rasa run` with the project's SQLite tracker store, as `make run`).
2. Alternating latency: conversations of the same shape (a greeting, three answers or what-ifs, a goodbye) go to the
   two bots in turn, one message at a time (advisor turn, starter turn, advisor turn, ...), so both see the same load
   on this shared machine. Prints p50/p95 of each bot, of the advisor's advice turns, and the ratios.
   Target: advisor p95 per advice turn <= starter p95 in the same run.
3. Closed-loop throughput of one advisor instance: --clients clients, each sending its next message as soon as the
   previous reply arrives (on a kept-alive connection), for --seconds. Target >= 30 turns/s.
4. One conversation of --long-turns what-ifs after a full estimate: latency at turn 1 and turn 300. The load of
   this shared machine changes within minutes, so "turn 1" is also measured as the first what-if of fresh
   conversations run between the last ten turns. Target: turns 291-300 within 20 % of turn 1 (bounded work per turn).
5. Resident memory (VmRSS) of the advisor's Rasa server after at least 1,000 turns. Target <= 650 MB. Also split
   into the process's own memory (RssAnon) and mapped files (RssFile): how many pages of TensorFlow's 800 MB of
   shared libraries count as resident depends on the page cache at start (117 to 231 MB of libtensorflow_cc.so
   measured for the same process on this machine), the process's own memory does not.

--profile OUT.txt records the advisor's Rasa server with py-spy (pip install py-spy, in the dev extras) during the
closed-loop run and writes the raw stacks there. Writes bench/results/vs_starter.md.

--patches off starts the advisor's servers with ADVISOR_RASA_PATCHES=off (Rasa as shipped, bot/assistant/patches/)
and writes bench/results/vs_starter_patches_off.md instead: the gain of the patches together is the difference
between the two files of runs made one after the other on a quiet machine.
"""
from __future__ import annotations

import argparse
import itertools
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.results_io import machine_speed_s, percentile, post, write_results  # noqa: E402
from tests.servers import (BIN, LOG_DIR, MODEL_PATH, ensure_model, free_port, start_action_server, stop_process,  # noqa: E402
                           start_rasa_server, wait_http)

RESULTS = ROOT / "bench" / "results" / "vs_starter.md"
RESULTS_PATCHES_OFF = ROOT / "bench" / "results" / "vs_starter_patches_off.md"
TARGETS = {"throughput": 30.0, "growth": 0.20, "rss_mb": 650.0}
MIN_TURNS_BEFORE_RSS = 1000

# Same shape on both sides: greeting, three turns the bot answers from its knowledge (the advisor: a full estimate
# and what-ifs, each computed by the action server with a chart; the starter: its mood answers), goodbye.
ADVISOR_CONVERSATIONS: List[List[Tuple[str, str]]] = [
    [("greeting", "Merhaba"),
     ("advice", "13B modeli QLoRA ile 4096 token ile eğitmek istiyorum, bütçe yok"),
     ("advice", "LoRA olursa?"), ("advice", "2048 token olursa?"), ("goodbye", "hoşça kalın")],
    [("greeting", "سلام وقت بخیر"),
     ("advice", "میخوام Llama 3.1 8B رو با QLoRA و ۲۰۴۸ توکن فاین تیون کنم، بودجه ۵۰ دلار"),
     ("advice", "با LoRA چطور؟"), ("advice", "۴۰۹۶ توکن چی؟"), ("goodbye", "ممنون، خداحافظ")],
]
STARTER_CONVERSATIONS: List[List[Tuple[str, str]]] = [
    [("greeting", "hello"), ("answer", "I am sad"), ("answer", "no"), ("answer", "are you a bot?"),
     ("goodbye", "bye")],
    [("greeting", "good morning"), ("answer", "I am feeling very good"), ("answer", "are you a human?"),
     ("answer", "very sad"), ("goodbye", "see you later")],
]
LONG_SETUP = "13B modeli QLoRA ile 4096 token ile eğitmek istiyorum, bütçe yok"
LONG_WHAT_IFS = ["LoRA olursa?", "QLoRA olursa?"]


def memory_mb(pid: int) -> Dict[str, float]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
            fields[key] = int(value.split()[0]) / 1024
    return fields


@dataclass
class Process:
    proc: subprocess.Popen
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        stop_process(self.proc)


def build_starter(parent: Path) -> Path:
    folder = parent / "starter"
    folder.mkdir()
    started = time.perf_counter()
    subprocess.run([str(BIN / "rasa"), "init", "--no-prompt", "--init-dir", str(folder)], cwd=parent, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, "RASA_TELEMETRY_ENABLED": "false"})
    print(f"rasa init --no-prompt (trains the starter bot): {time.perf_counter() - started:.0f} s", flush=True)
    return folder


def _spawn(cmd: List[str], cwd: Path, name: str, port: int) -> Process:
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    log = open(LOG_DIR / f"{name}-{port}.log", "w")
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "RASA_TELEMETRY_ENABLED": "false"}
    return Process(subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT), port)


def start_starter(folder: Path) -> Tuple[Process, Process]:
    """The starter bot as `rasa init` made it: its action server and `rasa run` with its endpoints."""
    action_port = free_port()
    actions = _spawn([str(BIN / "rasa"), "run", "actions", "--port", str(action_port)], folder, "starter-actions",
                     action_port)
    wait_http(f"{actions.url}/health", 60, actions.proc)
    endpoints = folder / "bench-endpoints.yml"
    endpoints.write_text(f'action_endpoint:\n  url: "{actions.url}/webhook"\n')
    model = sorted((folder / "models").glob("*.tar.gz"))[-1]
    port = free_port()
    rasa = _spawn([str(BIN / "rasa"), "run", "--model", str(model), "--port", str(port), "--endpoints",
                   str(endpoints)], folder, "starter-rasa", port)
    wait_http(f"{rasa.url}/", 180, rasa.proc)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:  # "/" answers before the model is loaded; a reply needs the model
        try:
            if post(f"{rasa.url}/webhooks/rest/webhook", "warmup", "hello")[1]:
                break
        except OSError:
            pass
        time.sleep(0.5)
    return actions, rasa


def cpu_ms(pids: List[int]) -> float:
    """CPU time (user + system) used so far by these processes, in ms."""
    total = 0.0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")
    return total


def alternate(advisor_url: str, starter_url: str, rounds: int, advisor_pids: List[int], starter_pids: List[int]
              ) -> Tuple[Dict[str, List[float]], Dict[str, List[float]], Dict[str, float]]:
    """Rounds of one conversation per bot, turn by turn: advisor, starter, advisor, starter, ...; also the CPU time
    each bot's servers (Rasa and action server) spent per turn, which the load of other work does not change much."""
    advisor: Dict[str, List[float]] = {}
    starter: Dict[str, List[float]] = {}
    cpu = {"advisor": 0.0, "advisor advice": 0.0, "starter": 0.0}
    for number in range(rounds):
        ours = ADVISOR_CONVERSATIONS[number % len(ADVISOR_CONVERSATIONS)]
        theirs = STARTER_CONVERSATIONS[number % len(STARTER_CONVERSATIONS)]
        ours_sender, theirs_sender = f"vs-{uuid.uuid4().hex[:8]}", f"vs-{uuid.uuid4().hex[:8]}"
        for (our_kind, our_text), (their_kind, their_text) in zip(ours, theirs):
            before = cpu_ms(advisor_pids)
            ms, replies = post(advisor_url, ours_sender, our_text)
            used = cpu_ms(advisor_pids) - before
            cpu["advisor"] += used
            cpu["advisor advice"] += used if our_kind == "advice" else 0.0
            if not replies:
                raise RuntimeError(f"the advisor did not answer {our_text!r}")
            advisor.setdefault(our_kind, []).append(ms)
            before = cpu_ms(starter_pids)
            ms, replies = post(starter_url, theirs_sender, their_text)
            cpu["starter"] += cpu_ms(starter_pids) - before
            starter.setdefault(their_kind, []).append(ms)
    turns = sum(len(values) for values in advisor.values())
    per_turn = {"advisor": cpu["advisor"] / turns, "advisor advice": cpu["advisor advice"] / len(advisor["advice"]),
                "starter": cpu["starter"] / turns}
    return advisor, starter, per_turn


def closed_loop(url: str, clients: int, seconds: float) -> Tuple[int, List[float]]:
    """Turns completed by `clients` clients that each send the next message when the reply has arrived, each on one
    kept-alive connection (as HAProxy and the socket.io widget reach Rasa), with bench/lean_http's light client so
    that the load generator takes little of the machine it measures."""
    import asyncio

    from bench.lean_http import KeepAliveClient

    latencies: List[float] = []

    async def client(offset: int, stop_at: float) -> None:
        conversations = itertools.cycle(ADVISOR_CONVERSATIONS[offset % 2:] + ADVISOR_CONVERSATIONS[:offset % 2])
        async with KeepAliveClient(url) as http:
            while time.perf_counter() < stop_at:
                sender = f"load-{uuid.uuid4().hex[:8]}"
                for _, text in next(conversations):
                    if time.perf_counter() >= stop_at:
                        return
                    started = time.perf_counter()
                    status, replies = await http.post_json({"sender": sender, "message": text})
                    if status != 200 or not replies:
                        raise RuntimeError(f"closed-loop client got HTTP {status} / {replies!r} for {text!r}")
                    latencies.append((time.perf_counter() - started) * 1000)

    async def run() -> float:
        started = time.perf_counter()
        await asyncio.gather(*(client(n, started + seconds) for n in range(clients)))
        return time.perf_counter() - started

    elapsed = asyncio.run(run())
    return len(latencies), [len(latencies) / elapsed] + latencies


def long_conversation(url: str, turns: int, compared: int = 10) -> Tuple[List[float], List[float], List[float]]:
    """Latency of each what-if of one long conversation, and of "turn 1" (the first what-if of a fresh
    conversation) measured right after each of the first and of the last `compared` turns, so that turn 1 and turn
    300 are compared under the same load on this shared machine."""
    sender = f"long-{uuid.uuid4().hex[:8]}"
    post(url, sender, LONG_SETUP)
    long: List[float] = []
    early: List[float] = []
    late: List[float] = []
    for n in range(turns):
        long.append(post(url, sender, LONG_WHAT_IFS[n % 2])[0])
        if n < compared or n >= turns - compared:
            fresh = f"turn1-{uuid.uuid4().hex[:8]}"
            post(url, fresh, LONG_SETUP)
            (early if n < compared else late).append(post(url, fresh, LONG_WHAT_IFS[n % 2])[0])
    return long, early, late


def summary(values: List[float]) -> str:
    return f"p50 {statistics.median(values):.0f} ms, p95 {percentile(values, 0.95):.0f} ms"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=60, help="alternating conversations per bot")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--long-turns", type=int, default=300)
    parser.add_argument("--starter-dir", type=Path, help="a starter bot built before by `rasa init`")
    parser.add_argument("--profile", type=Path, help="py-spy raw output for the closed-loop run")
    parser.add_argument("--patches", choices=("on", "off"), default="on",
                        help="off: the advisor runs on Rasa as shipped (ADVISOR_RASA_PATCHES=off)")
    args = parser.parse_args()
    patches_env = {"ADVISOR_RASA_PATCHES": args.patches}

    load_before = os.getloadavg()
    speed = machine_speed_s()
    with tempfile.TemporaryDirectory(prefix="vs-starter-") as tmp:
        starter_dir = args.starter_dir or build_starter(Path(tmp))
        ensure_model()
        our_actions = start_action_server(env=patches_env)
        ours = start_rasa_server(our_actions.port, model=MODEL_PATH, env=patches_env)
        their_actions, theirs = start_starter(starter_dir)
        try:
            advisor_url = f"{ours.url}/webhooks/rest/webhook"
            starter_url = f"{theirs.url}/webhooks/rest/webhook"
            post(advisor_url, "warmup", "سلام")
            advisor, starter, cpu_per_turn = alternate(advisor_url, starter_url, args.rounds,
                                                       [ours.proc.pid, our_actions.proc.pid],
                                                       [theirs.proc.pid, their_actions.proc.pid])
            served = sum(len(v) for v in advisor.values()) + 1
            print(f"alternating: advisor {summary(sum(advisor.values(), []))}, advice turns "
                  f"{summary(advisor['advice'])}; starter {summary(sum(starter.values(), []))}; CPU per turn "
                  + ", ".join(f"{name} {value:.1f} ms" for name, value in cpu_per_turn.items()), flush=True)

            spy = None
            if args.profile:
                spy = subprocess.Popen([str(BIN / "py-spy"), "record", "-p", str(ours.proc.pid), "-o",
                                        str(args.profile), "-f", "raw", "-r", "100", "--nonblocking"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(1)
            completed, loop = closed_loop(advisor_url, args.clients, args.seconds)
            if spy is not None:
                spy.send_signal(signal.SIGINT)
                spy.wait()
            throughput, loop_latencies = loop[0], loop[1:]
            served += completed
            print(f"closed loop, {args.clients} clients, {args.seconds:.0f} s: {throughput:.1f} turns/s "
                  f"({summary(loop_latencies)})", flush=True)

            long, turn1_early, turn1_late = long_conversation(advisor_url, args.long_turns)
            served += len(long) + 1 + 2 * (len(turn1_early) + len(turn1_late))
            while served < MIN_TURNS_BEFORE_RSS:
                served += closed_loop(advisor_url, args.clients, 5)[0]
            memory = memory_mb(ours.proc.pid)
            actions_memory = memory_mb(our_actions.proc.pid)
            starter_memory = memory_mb(theirs.proc.pid)
        finally:
            for server in (ours, our_actions, theirs, their_actions):
                server.stop()
    load_after = os.getloadavg()

    advisor_all, starter_all = sum(advisor.values(), []), sum(starter.values(), [])
    advice_p95, starter_p95 = percentile(advisor["advice"], 0.95), percentile(starter_all, 0.95)
    first, last = long[0], long[-1]
    head, tail = statistics.median(long[:10]), statistics.median(long[-10:])
    ref_early, ref_late = statistics.median(turn1_early), statistics.median(turn1_late)
    growth = tail / ref_late - 1
    print(f"long conversation: turn 1 {first:.0f} ms, turn {len(long)} {last:.0f} ms; median of turns 1-10 "
          f"{head:.0f} ms, of the last 10 {tail:.0f} ms; turn 1 of fresh conversations at the same time: "
          f"{ref_early:.0f} ms and {ref_late:.0f} ms: last 10 vs turn 1 {growth:+.0%}")
    print(f"after {served} turns: advisor Rasa RSS {memory['VmRSS']:.0f} MB (peak {memory['VmHWM']:.0f} MB; "
          f"own {memory['RssAnon']:.0f} MB, files {memory['RssFile']:.0f} MB), "
          f"starter {starter_memory['VmRSS']:.0f} MB")

    def verdict(ok: bool) -> str:
        return "✅" if ok else "❌"

    def row(name: str, values: List[float]) -> str:
        return (f"| {name} | {len(values)} | {statistics.median(values):.0f} ms | {percentile(values, 0.95):.0f} ms |"
                f" {max(values):.0f} ms |")

    lines = [
        "# The advisor beside Rasa's starter bot", "",
        "Produced by `bench/bench_vs_starter.py` on this machine (2 cores, shared with other work: load average "
        f"{load_before[0]:.1f} before, {load_after[0]:.1f} after; a fixed pure-Python loop took {speed:.2f} s, see "
        "bench/results_io.machine_speed_s). Starter bot: `rasa init --no-prompt`, same Rasa "
        "version, its own action server, default in-memory tracker store. Advisor: the trained model, its action "
        "server, the project's SQLite tracker store (masking, checkpoint), as `make run` starts them. All over "
        "POST /webhooks/rest/webhook."
        + (" Patches to Rasa OFF (`--patches off`: ADVISOR_RASA_PATCHES=off, Rasa as shipped)."
           if args.patches == "off" else ""), "",
        "| measure | value | target | |", "|---|---|---|---|",
        f"| advisor p95 per advice turn vs starter p95 (same run, alternating) | {advice_p95:.0f} ms vs "
        f"{starter_p95:.0f} ms ({advice_p95 / starter_p95:.2f}x) | ≤ 1.00x | {verdict(advice_p95 <= starter_p95)} |",
        f"| advisor p50 / p95, all turns | {statistics.median(advisor_all):.0f} / "
        f"{percentile(advisor_all, 0.95):.0f} ms | | |",
        f"| starter p50 / p95, all turns | {statistics.median(starter_all):.0f} / {starter_p95:.0f} ms | | |",
        f"| CPU time per turn, Rasa + action server (alternating run): advisor all turns / advice turns / starter | "
        f"{cpu_per_turn['advisor']:.1f} / {cpu_per_turn['advisor advice']:.1f} / {cpu_per_turn['starter']:.1f} ms"
        f" | | |",
        "| p50 ratio advisor / starter, all turns | "
        f"{statistics.median(advisor_all) / statistics.median(starter_all):.2f}x"
        f" | | |",
        f"| closed-loop turns per second, one advisor instance ({args.clients} clients, {args.seconds:.0f} s) | "
        f"{throughput:.1f} | ≥ {TARGETS['throughput']:.0f} | {verdict(throughput >= TARGETS['throughput'])} |",
        f"| one conversation of {len(long)} what-ifs after a full estimate: turns {len(long) - 9}-{len(long)} vs "
        f"turn 1 of fresh conversations run between them (medians) | {tail:.0f} ms vs {ref_late:.0f} ms "
        f"({growth:+.0%}) | within 20 % | {verdict(growth <= TARGETS['growth'])} |",
        f"| same conversation, single turns: turn 1 → turn {len(long)}; medians of turns 1-10 → last 10 | "
        f"{first:.0f} → {last:.0f} ms; {head:.0f} → {tail:.0f} ms ({tail / head - 1:+.0%}) | | |",
        f"| advisor Rasa server RSS after {served} turns (peak) | {memory['VmRSS']:.0f} MB ({memory['VmHWM']:.0f} MB)"
        f" | ≤ {TARGETS['rss_mb']:.0f} MB | {verdict(memory['VmRSS'] <= TARGETS['rss_mb'])} |",
        f"| of which the process's own memory (RssAnon) / mapped files, mostly TensorFlow's libraries (RssFile) | "
        f"{memory['RssAnon']:.0f} MB / {memory['RssFile']:.0f} MB | | |",
        f"| advisor action server RSS / starter Rasa server RSS | {actions_memory['VmRSS']:.0f} MB / "
        f"{starter_memory['VmRSS']:.0f} MB | | |",
        "", "Alternating run by kind of turn:", "", "| bot, kind | turns | p50 | p95 | max |", "|---|---|---|---|---|"]
    lines += [row(f"advisor, {kind}", values) for kind, values in sorted(advisor.items())]
    lines += [row(f"starter, {kind}", values) for kind, values in sorted(starter.items())]
    lines += [row("advisor, closed loop (all kinds)", loop_latencies)]
    lines += ["", "Kinds: `advice` a full estimate or a what-if (NLU, form, estimate action on the action server, "
              "chart); `greeting`/`goodbye` rules (the advisor also runs its slot-mapping validation, inside Rasa); "
              "starter `answer` its mood and bot-challenge replies (DIET, TED, ResponseSelector)."]
    write_results(RESULTS if args.patches == "on" else RESULTS_PATCHES_OFF, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
