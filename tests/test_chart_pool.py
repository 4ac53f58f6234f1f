"""The action server's chart worker ends with the server: a worker left behind by a killed server (OOM, SIGKILL)
would hold the listening port it inherited at fork, and the supervisor could not restart the server."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SERVER_STANDIN = """
import os, sys
from actions.estimate import _pool
print(_pool().submit(os.getpid).result(), flush=True)
os.kill(os.getpid(), 9)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text().split("State:")[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")


def test_the_chart_worker_ends_when_the_action_server_is_killed():
    proc = subprocess.run([sys.executable, "-c", SERVER_STANDIN], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == -9, proc.stderr
    worker = int(proc.stdout.strip().splitlines()[-1])
    deadline = time.monotonic() + 10
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(worker), f"chart worker {worker} outlived the killed server"
