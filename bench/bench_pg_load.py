"""PostgreSQL's CPU for the tracker store's per-turn load: as plain SQL (parsed and planned each time) and prepared.

    .venv/bin/python bench/bench_pg_load.py [--loads 2000] [--events 60]

Creates a scratch database `advisor_bench_pg` (dropped first) with the store's tables, one conversation with a
checkpoint and `--events` events after it, then runs the store's own load statement (`_LOAD` in
bot/assistant/tracker_store.py, as the store compiles it for PostgreSQL) `--loads` times each way on one
connection and reads that server process's CPU time from /proc. This is where the docstring of
`RedactingSQLTrackerStore._load_rows` has its figures. Writes bench/results/pg_load.md. Not a test.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_load import process_cpu_s  # noqa: E402
from bench.results_io import machine_speed_s, write_results  # noqa: E402
from tests.cluster import PostgresSwitch  # noqa: E402

DATABASE = "advisor_bench_pg"
RESULTS = ROOT / "bench" / "results" / "pg_load.md"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=2000)
    parser.add_argument("--events", type=int, default=60)
    args = parser.parse_args()

    from rasa.shared.core.domain import Domain

    from bot.assistant.tracker_store import _LOAD, RedactingSQLTrackerStore

    PostgresSwitch(DATABASE).drop()
    store = RedactingSQLTrackerStore(domain=Domain.load(str(ROOT / "domain")), dialect="postgresql",
                                     host="127.0.0.1", port=5432, db=DATABASE, username="postgres",
                                     login_db="postgres")
    sender = "bench-sender"
    event = json.dumps({"event": "bot", "timestamp": 1.0, "text": "x" * 300})
    with store.engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO tracker_checkpoints (sender_id, upto_id, events) VALUES (%s, 0, %s)",
                             (sender, json.dumps([json.loads(event)] * 30)))
        for _ in range(args.events):
            conn.exec_driver_sql("INSERT INTO events (sender_id, type_name, timestamp, data) VALUES (%s, 'bot', 1, %s)",
                                 (sender, event))

    with store.reader.connect() as conn:
        raw = conn.connection
        cursor = raw.cursor()
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
        plain = str(_LOAD.compile(dialect=conn.dialect))
        cursor.execute("PREPARE bench_load AS " + plain.replace("%(sender)s", "$1"))
        results = {}
        for name, sql, params in (("plain SQL", plain, {"sender": sender}),
                                  ("prepared", "EXECUTE bench_load(%(sender)s)", {"sender": sender})):
            cpu, started = process_cpu_s(backend), time.perf_counter()
            for _ in range(args.loads):
                cursor.execute(sql, params)
                rows = cursor.fetchall()
            results[name] = ((process_cpu_s(backend) - cpu) * 1000 / args.loads,
                             (time.perf_counter() - started) * 1000 / args.loads, len(rows))
        cursor.close()
    store.engine.dispose()
    store.reader.dispose()
    PostgresSwitch(DATABASE).drop()

    lines = ["# PostgreSQL's CPU per tracker load (bench/bench_pg_load.py)", "",
             f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {os.cpu_count()} CPU cores; a fixed "
             f"pure-Python loop took {machine_speed_s():.2f} s (bench/results_io.machine_speed_s). One conversation: "
             f"a checkpoint and {args.events} events after it; {args.loads} loads each way on one connection.", "",
             "| load | server CPU ms per load | wall ms per load | rows |", "|---|---|---|---|"]
    lines += [f"| {name} | {cpu:.3f} | {wall:.3f} | {rows} |" for name, (cpu, wall, rows) in results.items()]
    lines += ["", f"Command: `.venv/bin/python bench/bench_pg_load.py --loads {args.loads} --events {args.events}`"]
    for line in lines[6:8]:
        print(line)
    write_results(RESULTS, lines)


if __name__ == "__main__":
    main()
