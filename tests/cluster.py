"""The real cluster (scripts/cluster.sh, the script behind `make cluster`) on free ports, for tests and bench/.

    with start_cluster(database="advisor_cluster_test") as cluster:
        cluster.post("/webhooks/rest/webhook", {...})        # through HAProxy
        cluster.ctl("stop", "actions-a")                     # supervisorctl of this cluster

Redis is reached through a TCP relay (RedisRelay) that a test can cut and restore, to see the cluster without Redis
while the machine's Redis keeps serving everyone else. PostgreSQL is cut for one database only
(`ALTER DATABASE ... ALLOW_CONNECTIONS false`, PostgresSwitch), so other users of the server are not disturbed.
"""
from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

from tests.servers import LOG_DIR, MODEL_PATH, ROOT, free_port

PG_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
# The cluster's servers listen for minutes: ports below the kernel's ephemeral range (ip_local_port_range starts at
# 32768), which outgoing connections of other processes never take, so a server restarted by supervisord finds its
# port still free.
LISTEN_PORTS = range(20000, 32000)


def listen_port() -> int:
    import random

    for _ in range(200):
        port = random.choice(LISTEN_PORTS)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    return free_port()
PORT_NAMES = ("BALANCER_PORT", "RASA_A_PORT", "RASA_B_PORT", "ACTIONS_A_PORT", "ACTIONS_B_PORT",
              "ACTIONS_BALANCER_PORT", "WEB_PORT", "STAFF_PORT")


class RedisRelay:
    """127.0.0.1:<port> -> Redis 127.0.0.1:6379, byte for byte; `cut()` drops every connection and refuses new ones."""

    def __init__(self, target: Tuple[str, int] = ("127.0.0.1", 6379)) -> None:
        self.target = target
        self.port = listen_port()
        self._listener: Optional[socket.socket] = None
        self._pairs: List[Tuple[socket.socket, socket.socket]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.restore()

    def restore(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(128)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # cut
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._pairs.append((client, upstream))
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()

    def _pump(self, a: socket.socket, b: socket.socket) -> None:
        selector = selectors.DefaultSelector()
        selector.register(a, selectors.EVENT_READ, b)
        selector.register(b, selectors.EVENT_READ, a)
        try:
            while True:
                for key, _ in selector.select(timeout=1.0):
                    data = key.fileobj.recv(65536)
                    if not data:
                        return
                    key.data.sendall(data)
        except (OSError, ValueError):
            return
        finally:
            for s in (a, b):
                try:
                    s.close()
                except OSError:
                    pass

    def cut(self) -> None:
        if self._listener is not None:
            try:
                self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() of the relay thread (close does not)
            except OSError:
                pass
            self._listener.close()
            self._listener = None
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for a, b in pairs:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                    s.close()
                except OSError:
                    pass

    def close(self) -> None:
        self.cut()


class PostgresSwitch:
    """Makes one database refuse connections (and drops the open ones), then lets them in again; or drops it."""

    def __init__(self, database: str) -> None:
        self.database = database

    def _admin(self, *statements: str) -> None:
        import psycopg2

        conn = psycopg2.connect(PG_ADMIN_URL, connect_timeout=5)
        conn.autocommit = True
        try:
            with conn.cursor() as cur:
                for statement in statements:
                    cur.execute(statement, (self.database,) if "%s" in statement else None)
        finally:
            conn.close()

    def cut(self) -> None:
        self._admin(f'ALTER DATABASE "{self.database}" ALLOW_CONNECTIONS false',
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s")

    def restore(self) -> None:
        self._admin(f'ALTER DATABASE "{self.database}" ALLOW_CONNECTIONS true')

    def drop(self) -> None:
        self._admin(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')


@dataclass
class Cluster:
    proc: subprocess.Popen
    env: Dict[str, str]
    directory: Path
    relay: RedisRelay
    database: str
    output_path: Path
    ports: Dict[str, int] = field(default_factory=dict)

    # -- addresses --------------------------------------------------------------------------------------------------
    def url(self, which: str = "BALANCER_PORT") -> str:
        return f"http://127.0.0.1:{self.ports[which]}"

    @property
    def balancer(self) -> str:
        return self.url("BALANCER_PORT")

    @property
    def rasa_a(self) -> str:
        return self.url("RASA_A_PORT")

    @property
    def rasa_b(self) -> str:
        return self.url("RASA_B_PORT")

    @property
    def token(self) -> str:
        return self.env["RASA_TOKEN"]

    # -- HTTP ---------------------------------------------------------------------------------------------------------
    @staticmethod
    def request(url: str, body: Any = None, *, raw: Optional[bytes] = None, headers: Optional[dict] = None,
                timeout: float = 60) -> Tuple[int, Any]:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json", **(headers or {})},
                                     method="POST" if data is not None else "GET")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                status, payload = resp.status, resp.read()
        except urllib.error.HTTPError as err:
            status, payload = err.code, err.read()
        try:
            return status, json.loads(payload) if payload else None
        except ValueError:
            return status, payload.decode(errors="replace")

    def say(self, sender: str, text: str, base: Optional[str] = None, timeout: float = 60) -> List[dict]:
        status, replies = self.request(f"{base or self.balancer}/webhooks/rest/webhook",
                                       {"sender": sender, "message": text}, timeout=timeout)
        assert status == 200, (status, replies)
        return replies

    def tracker(self, sender: str, base: Optional[str] = None) -> Dict[str, Any]:
        status, tracker = self.request(f"{base or self.balancer}/conversations/{sender}/tracker?token={self.token}")
        assert status == 200, (status, tracker)
        return tracker

    def health(self, base: Optional[str] = None) -> Tuple[int, Any]:
        return self.request(f"{base or self.balancer}/health", timeout=10)

    # -- supervision ----------------------------------------------------------------------------------------------
    def ctl(self, *args: str) -> str:
        sock = self.directory / "run" / "supervisor.sock"
        result = subprocess.run([str(ROOT / ".venv/bin/supervisorctl"), "-s", f"unix://{sock}", *args],
                                capture_output=True, text=True, timeout=120)
        return result.stdout + result.stderr

    def haproxy(self, command: str) -> str:
        """One command on HAProxy's admin socket, e.g. "set server rasa/rasa-b state maint"."""
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(str(self.directory / "run" / "haproxy.sock"))
            sock.sendall(command.encode() + b"\n")
            chunks = []
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    return b"".join(chunks).decode()
                chunks.append(chunk)

    def pid(self, program: str) -> int:
        return int(self.ctl("pid", program).strip())

    def wait_healthy(self, *bases: str, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        pending = list(bases or (self.rasa_a, self.rasa_b, self.balancer))
        while pending:
            try:
                status, report = self.health(pending[0])
                if status == 200 and report.get("model"):
                    pending.pop(0)
                    continue
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"{pending[0]}/health not ready; cluster output:\n{self.output()[-3000:]}")
            if self.proc.poll() is not None:
                raise RuntimeError(f"cluster exited with {self.proc.returncode}:\n{self.output()[-3000:]}")
            time.sleep(1)

    def output(self) -> str:
        return self.output_path.read_text(errors="replace") if self.output_path.exists() else ""

    def log(self, program: str) -> str:
        path = self.directory / "log" / f"{program}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # what Ctrl-C does: supervisord stops every server
            try:
                self.proc.wait(timeout=90)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@contextmanager
def start_cluster(database: str = "advisor_cluster_test", env: Optional[Dict[str, str]] = None,
                  timeout: float = 240, redis_relay: bool = True) -> Iterator[Cluster]:
    """Start scripts/cluster.sh on free ports with its own key prefix and PostgreSQL database; Redis through a relay
    the caller can cut (`redis_relay=False`: Redis directly, as a benchmark wants it)."""
    directory = Path(tempfile.mkdtemp(prefix="cluster-"))
    relay = RedisRelay()
    if not redis_relay:
        relay.close()
    ports: Dict[str, int] = {}
    while len(ports) < len(PORT_NAMES):
        port = listen_port()
        if port not in ports.values():
            ports[PORT_NAMES[len(ports)]] = port
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", "ADVISOR_CLUSTER_DIR": str(directory),
                "ADVISOR_MODEL": str(MODEL_PATH), "TRACKER_DB_NAME": database, "REDIS_HOST": "127.0.0.1",
                # machine-speed conversations from one address (tests/servers.py RELAXED_RATE_LIMITS)
                "ADVISOR_RATE_LIMITS_FILE": str(ROOT / "tests" / "data" / "rate_limits_relaxed.yml"),
                "BALANCER_REQUESTS_PER_10S": "100000",
                "REDIS_PORT": str(relay.port if redis_relay else 6379),
                "REDIS_KEY_PREFIX": f"test{uuid.uuid4().hex[:8]}",
                "RASA_TOKEN": f"tok{uuid.uuid4().hex[:12]}", "STAFF_TOKEN": f"staff{uuid.uuid4().hex[:12]}",
                "ACTION_SERVER_TOKEN": uuid.uuid4().hex, "SOCKET_SESSION_SECRET": uuid.uuid4().hex,
                "ADVISOR_CHART_DIR": str(directory / "charts"),
                **{name: str(port) for name, port in ports.items()}, **(env or {})}
    full_env.pop("TICKETS_DB_URL", None)
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    output_path = LOG_DIR / f"cluster-{ports['BALANCER_PORT']}.out"
    with open(output_path, "w") as output:
        proc = subprocess.Popen([str(ROOT / "scripts" / "cluster.sh")], cwd=ROOT, env=full_env, stdout=output,
                                stderr=subprocess.STDOUT)
    cluster = Cluster(proc, full_env, directory, relay, database, output_path, ports)
    try:
        cluster.wait_healthy(timeout=timeout)
        yield cluster
    finally:
        cluster.stop()
        relay.close()
