"""Real servers for end-to-end tests: the trained model, the action server and the Rasa server.

Every end-to-end test talks to these processes over HTTP, exactly as a channel does in production.
"""
from __future__ import annotations

import fcntl
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional

import yaml

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
MODEL_DIR = ROOT / "models"
MODEL_NAME = "gpu-advisor"
MODEL_PATH = MODEL_DIR / f"{MODEL_NAME}.tar.gz"
# What the trained model depends on: when any of these is newer than the model, it is retrained.
MODEL_INPUTS = ["config.yml", "domain", "data", "bot/assistant/components", "bot/assistant/intent_classifier.py"]
LOG_DIR = ROOT / "test-artifacts" / "logs"
# The shared secret between Rasa and the action server (bot/assistant/action_server.py), one per test run; both are
# given it through the environment, as scripts/run.sh does.
ACTION_TOKEN = secrets.token_urlsafe(24)
ACTION_TOKEN_HEADER = "X-Action-Token"
# Tests script conversations at machine speed from one address: the servers get generous rate limits unless a test
# passes ADVISOR_RATE_LIMITS_FILE itself (tests/test_rate_limits.py uses the product's knowledge/rate_limits.yml).
RELAXED_RATE_LIMITS = ROOT / "tests" / "data" / "rate_limits_relaxed.yml"


def action_endpoint(url: str) -> dict:
    """endpoints.yml's action_endpoint for an action server of these tests (the header Rasa must send)."""
    return {"url": url, "headers": {ACTION_TOKEN_HEADER: ACTION_TOKEN}}


def _newest_input_mtime() -> float:
    newest = 0.0
    for name in MODEL_INPUTS:
        path = ROOT / name
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
        newest = max([newest] + [p.stat().st_mtime for p in files])
    return newest


def model_is_stale() -> bool:
    return not MODEL_PATH.exists() or MODEL_PATH.stat().st_mtime < _newest_input_mtime()


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_model(force: bool = False) -> Path:
    """Train the model when it is missing or older than its inputs (one trainer at a time)."""
    with _file_lock(MODEL_DIR / ".train.lock"):
        if force or model_is_stale():
            cmd = [str(BIN / "rasa"), "train", "--fixed-model-name", MODEL_NAME, "--out", str(MODEL_DIR),
                   "--domain", "domain", "--config", "config.yml", "--data", "data"]
            if force:
                cmd.append("--force")
            subprocess.run(cmd, cwd=ROOT, check=True)
    return MODEL_PATH


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_http(url: str, timeout: float, proc: Optional[subprocess.Popen] = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before {url} answered")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"{url} did not answer within {timeout}s")


def stop_process(proc: subprocess.Popen, timeout: float = 15) -> None:
    """Terminate a server and wait for it; kill it when it does not stop within `timeout` seconds."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@dataclass
class Server:
    name: str
    port: int
    proc: subprocess.Popen
    log_path: Path
    workdir: Path
    extra: Dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        stop_process(self.proc)


def _spawn(name: str, cmd: List[str], port: int, env: Optional[Dict[str, str]], workdir: Path) -> Server:
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    log_path = LOG_DIR / f"{name}-{port}.log"
    # os.environ first: ADVISOR_RASA_PATCHES=off given to pytest reaches every server a test starts, so the suites
    # run against Rasa as shipped (bot/assistant/patches/__init__.py; `make check-unpatched`).
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", "RASA_TELEMETRY_ENABLED": "false",
                "ADVISOR_RATE_LIMITS_FILE": str(RELAXED_RATE_LIMITS), **(env or {})}
    log = open(log_path, "w")
    # Through bot.launcher: the server gets SIGTERM when this test process dies, however it dies (issue 20,
    # finding 8); tests/conftest.py checks at the end of the session that none is still running.
    launched = [sys.executable, "-m", "bot.launcher", "exec", "--", *cmd]
    proc = subprocess.Popen(launched, cwd=ROOT, env=full_env, stdout=log, stderr=subprocess.STDOUT)
    return Server(name=name, port=port, proc=proc, log_path=log_path, workdir=workdir)


def _started(server: Server, wait) -> Server:
    """`server` once `wait()` says it serves; stopped, not left running, when it does not come up."""
    try:
        wait()
    except BaseException:
        server.stop()
        raise
    return server


def start_action_server(port: Optional[int] = None, env: Optional[Dict[str, str]] = None,
                        timeout: float = 60) -> Server:
    port = port or free_port()
    workdir = Path(tempfile.mkdtemp(prefix="actions-"))
    env = {"ACTION_SERVER_TOKEN": ACTION_TOKEN, **(env or {})}
    server = _spawn("actions", [str(BIN / "python"), "-m", "bot.assistant.action_server", "--port", str(port)],
                    port, env, workdir)
    return _started(server, lambda: wait_http(f"{server.url}/health", timeout, server.proc))


def start_rasa_server(action_port: int, *, port: Optional[int] = None, credentials: Optional[dict] = None,
                      endpoints: Optional[dict] = None, env: Optional[Dict[str, str]] = None,
                      auth_token: str = "test-token", model: Optional[Path] = None,
                      timeout: float = 120) -> Server:
    """Start `rasa run` with the REST API enabled (token-protected) on a fresh SQLite tracker store.

    `credentials` and `endpoints` replace the defaults (REST + socket.io; SQLite tracker in a temp dir).
    """
    port = port or free_port()
    workdir = Path(tempfile.mkdtemp(prefix="rasa-"))
    creds = credentials if credentials is not None else yaml.safe_load((ROOT / "credentials.yml").read_text())
    ends = endpoints if endpoints is not None else {
        "action_endpoint": action_endpoint(f"http://127.0.0.1:{action_port}/webhook"),
        "tracker_store": {"type": "bot.assistant.tracker_store.RedactingSQLTrackerStore", "dialect": "sqlite",
                          "db": str(workdir / "tracker.db")},
    }
    ends.setdefault("action_endpoint", action_endpoint(f"http://127.0.0.1:{action_port}/webhook"))
    # endpoints*.yml name the secret as ${ACTION_SERVER_TOKEN}: give Rasa the value the action server checks.
    env = {"ACTION_SERVER_TOKEN": ACTION_TOKEN, **(env or {})}
    (workdir / "credentials.yml").write_text(yaml.safe_dump(creds, allow_unicode=True))
    (workdir / "endpoints.yml").write_text(yaml.safe_dump(ends, allow_unicode=True))
    # bot.assistant.rasa_server: `rasa run` with the token from RASA_TOKEN (never on the command line), CORS for the
    # allowed origins only, a 1 MiB body limit and conversation ids decoded as the staff page encodes them.
    env["RASA_TOKEN"] = auth_token
    cmd = [str(BIN / "python"), "-m", "bot.assistant.rasa_server", "run", "--model", str(model or MODEL_PATH),
           "--port", str(port), "--credentials", str(workdir / "credentials.yml"),
           "--endpoints", str(workdir / "endpoints.yml"), "--enable-api"]
    server = _spawn("rasa", cmd, port, env, workdir)
    server.extra["auth_token"] = auth_token
    return _started(server, lambda: _wait_model_loaded(server, auth_token, timeout))


def _wait_model_loaded(server: Server, auth_token: str, timeout: float) -> None:
    wait_http(f"{server.url}/", timeout, server.proc)
    # /status needs the model loaded; "/" answers as soon as Sanic listens.
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{server.url}/status?token={auth_token}", timeout=5) as resp:
                if b"model_file" in resp.read():
                    break
        except OSError:
            pass
        if time.monotonic() > deadline or server.proc.poll() is not None:
            raise RuntimeError(f"Rasa did not load its model; log:\n{server.log()[-3000:]}")
        time.sleep(0.3)


def running_children(pid: Optional[int] = None) -> List[str]:
    """Command lines of the processes `pid` (default: this one) started that are still running (zombies aside)."""
    pid = os.getpid() if pid is None else pid
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            line = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z" and "multiprocessing" not in line:
            found.append(f"pid {proc.name}: {line[:200]}")
    return found
