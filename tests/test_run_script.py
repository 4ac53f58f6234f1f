"""`make run` leaves no ghosts (issue 20, finding 8): scripts/run.sh started here on free ports, its supervisord
killed with SIGKILL (what an out-of-memory kill does), every server it started must die; the next run must stop
what an older run left on its ports, refuse at once a port another program holds, and serve.

Every process is started in a session of its own and stopped by pid at the end, whatever the outcome.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Dict, List

import pytest
import yaml

from tests.servers import RELAXED_RATE_LIMITS, ROOT, free_port, stop_process

SERVICES = ("RASA_PORT", "ACTIONS_PORT", "WEB_PORT", "STAFF_PORT")


def _children(pid: int) -> List[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                stat = (proc / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(proc.name))
    return found


def _alive(pid: int) -> bool:
    try:
        return (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]) != "Z"
    except OSError:
        return False


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=3):
            return True
    except (OSError, urllib.error.URLError):
        return False


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def product(rasa_model, tmp_path):
    """The environment of one `make run` on ports of its own; every process started is stopped afterwards."""
    ports = {name: free_port() for name in SERVICES}
    endpoints = {"action_endpoint": {"url": f"http://127.0.0.1:{ports['ACTIONS_PORT']}/webhook",
                                     "headers": {"X-Action-Token": "${ACTION_SERVER_TOKEN}"}},
                 "tracker_store": {"type": "bot.assistant.tracker_store.RedactingSQLTrackerStore", "dialect": "sqlite",
                                   "db": str(tmp_path / "tracker.db")}}
    (tmp_path / "endpoints.yml").write_text(yaml.safe_dump(endpoints))
    env = {**os.environ, **{name: str(port) for name, port in ports.items()},
           "ADVISOR_RUN_DIR": str(tmp_path / "run"), "ADVISOR_LOG_DIR": str(tmp_path / "log"),
           "RASA_ENDPOINTS": str(tmp_path / "endpoints.yml"), "ADVISOR_CHART_DIR": str(tmp_path / "charts"),
           "TICKETS_DB_URL": f"sqlite:///{tmp_path}/tickets.db", "TICKETS_SPOOL_DIR": str(tmp_path / "spool"),
           "ADVISOR_RATE_LIMITS_FILE": str(RELAXED_RATE_LIMITS), "RASA_TOKEN": "run-test-token",
           "STAFF_TOKEN": "run-test-staff", "ACTION_SERVER_TOKEN": "run-test-action",
           "SOCKET_SESSION_SECRET": "run-test-socket-secret-0123456789", "PYTHONPATH": str(ROOT)}
    env.pop("TELEGRAM_TOKEN", None)
    started: List[subprocess.Popen] = []

    def start(log_name: str) -> subprocess.Popen:
        log = open(tmp_path / log_name, "w")
        proc = subprocess.Popen([str(ROOT / "scripts" / "run.sh")], cwd=ROOT, env=env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        started.append(proc)
        return proc

    state = {"ports": ports, "env": env, "start": start, "tmp": tmp_path, "extra": started}
    try:
        yield state
    finally:
        for proc in reversed(started):
            stop_process(proc, timeout=30)


def _wait_serving(product, proc: subprocess.Popen, timeout: float = 240) -> Dict[str, int]:
    ports = product["ports"]
    urls = [f"http://127.0.0.1:{ports['RASA_PORT']}/status?token=run-test-token",
            f"http://127.0.0.1:{ports['ACTIONS_PORT']}/health", f"http://127.0.0.1:{ports['WEB_PORT']}/health",
            f"http://127.0.0.1:{ports['STAFF_PORT']}/health"]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, (product["tmp"] / "run-1.log").read_text()[-3000:]
        if all(_answers(url) for url in urls):
            supervisor = int((product["tmp"] / "run" / "supervisord.pid").read_text())
            children = _children(supervisor)
            assert len(children) == 4, children
            return {"supervisord": supervisor, **{f"child{n}": pid for n, pid in enumerate(children)}}
        time.sleep(1)
    raise AssertionError(f"the product did not come up; logs in {product['tmp']}")


def _rest_answer(product, text: str) -> list:
    body = json.dumps({"sender": f"run-{time.time_ns()}", "message": text}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{product['ports']['RASA_PORT']}/webhooks/rest/webhook",
                                     data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as resp:
        return json.loads(resp.read())


def test_servers_die_with_a_killed_supervisor_and_the_next_run_stops_old_ghosts_and_serves(product):
    first = product["start"]("run-1.log")
    pids = _wait_serving(product, first)
    servers = [pid for name, pid in pids.items() if name != "supervisord"]

    os.kill(pids["supervisord"], signal.SIGKILL)  # an out-of-memory kill
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_alive(pid) for pid in servers):
        time.sleep(0.2)
    assert not [pid for pid in servers if _alive(pid)], "servers outlived their supervisor"
    first.wait(30)  # run.sh ends once its supervisor is gone
    assert not any(_listening(port) for port in product["ports"].values())

    # A server left by a run from before this fix (started without the launcher) holds the website's port.
    ghost_log = open(product["tmp"] / "ghost.log", "w")
    ghost = subprocess.Popen([sys.executable, "-m", "bot.website", "--host", "127.0.0.1", "--port",
                              str(product["ports"]["WEB_PORT"])], cwd=ROOT, env=product["env"], stdout=ghost_log,
                             stderr=subprocess.STDOUT, start_new_session=True)
    product["extra"].append(ghost)
    deadline = time.monotonic() + 30
    while not _listening(product["ports"]["WEB_PORT"]) and time.monotonic() < deadline:
        time.sleep(0.2)

    second = product["start"]("run-2.log")
    _wait_serving(product, second)
    assert ghost.wait(30) is not None, "the ghost of the earlier run still runs"
    assert "stopping what an earlier `make run`" in (product["tmp"] / "run-2.log").read_text()
    replies = _rest_answer(product, "سلام")
    assert replies and replies[0].get("text"), replies

    second.send_signal(signal.SIGTERM)  # Ctrl-C / TERM: everything stops
    second.wait(60)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_listening(port) for port in product["ports"].values()):
        time.sleep(0.2)
    assert not any(_listening(port) for port in product["ports"].values())


def test_a_port_held_by_another_program_is_named_and_nothing_starts(product, tmp_path):
    port = product["ports"]["RASA_PORT"]
    holder = subprocess.Popen(["python3", "-c", "import socket, time\n"
                               f"s = socket.socket(); s.bind(('127.0.0.1', {port})); s.listen(); time.sleep(120)"],
                              cwd="/tmp", start_new_session=True)
    product["extra"].append(holder)
    deadline = time.monotonic() + 10
    while not _listening(port) and time.monotonic() < deadline:
        time.sleep(0.1)
    started = time.monotonic()
    run = product["start"]("run-1.log")
    assert run.wait(60) != 0
    output = (product["tmp"] / "run-1.log").read_text()
    assert f"port {port} is held by pid {holder.pid}" in output, output
    assert holder.poll() is None, "another program's process was stopped"
    assert not (tmp_path / "run" / "supervisord.pid").exists() or not _children(
        int((tmp_path / "run" / "supervisord.pid").read_text()))
    assert time.monotonic() - started < 30  # at once, not after the servers' retry loop


def test_the_session_end_check_sees_a_process_the_tests_left_running():
    """tests/conftest.py fails the session on what tests.servers.running_children lists."""
    from tests.servers import running_children

    proc = subprocess.Popen(["sleep", "60"])
    try:
        assert any(f"pid {proc.pid}:" in line and "sleep 60" in line for line in running_children())
    finally:
        proc.kill()
        proc.wait()
    assert not any(f"pid {proc.pid}:" in line for line in running_children())


def test_a_session_that_leaves_a_process_running_fails(tmp_path):
    """The hook of tests/conftest.py, run by a pytest session of its own whose only test leaves `sleep` running."""
    (tmp_path / "conftest.py").write_text("from tests.conftest import pytest_sessionfinish  # noqa: F401\n")
    (tmp_path / "test_leaky.py").write_text("import subprocess\n\n\ndef test_leaves_a_process():\n"
                                            "    subprocess.Popen(['sleep', '61'])\n")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode != 0, result.stdout[-2000:]
    assert "still running at the end of the session" in result.stdout and "sleep 61" in result.stdout


def test_a_test_server_dies_with_the_test_process(tmp_path):
    """tests/servers.py starts servers through bot.launcher: a test run killed outright leaves none behind."""
    script = ("import sys, time; sys.path.insert(0, %r)\n"
              "from tests.servers import start_action_server\n"
              "server = start_action_server()\n"
              "print(server.proc.pid, flush=True)\n"
              "time.sleep(120)\n") % str(ROOT)
    runner = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                              start_new_session=True)
    try:
        server_pid = int(runner.stdout.readline())
        assert _alive(server_pid)
        runner.kill()  # the whole test run killed (out of memory, a closed terminal)
        runner.wait(10)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and _alive(server_pid):
            time.sleep(0.2)
        assert not _alive(server_pid), "the action server outlived the test process"
    finally:
        stop_process(runner)


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_the_action_servers_chart_worker_ends_with_it(rasa_model, tmp_path, how):
    """`make test` left an action server running: the forked chart worker (actions/estimate.py) inherited the
    server's SIGTERM handler (Sanic's, which only wakes an event loop the worker does not run) and its listening
    socket, so it outlived the server it was forked from, under the same command line."""
    from tests.conftest import Conversation
    from tests.servers import start_action_server, start_rasa_server

    env = {"ADVISOR_CHART_DIR": str(tmp_path / "charts"), "TICKETS_DB_URL": f"sqlite:///{tmp_path}/t.db"}
    actions = start_action_server(env=env)
    try:
        rasa = start_rasa_server(actions.port, env=env)
        try:
            user = Conversation(rasa)
            user.say("Llama 3.1 8B'yi QLoRA ile 2048 token, bütçe sınırı yok, eğitmek istiyorum")
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not list((tmp_path / "charts").glob("*.png")):
                time.sleep(0.2)
            workers = _children(actions.proc.pid)
            assert workers, "no chart was drawn in a worker process: the test would prove nothing"
            actions.proc.send_signal(how)
            actions.proc.wait(30)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and any(_alive(pid) for pid in workers):
                time.sleep(0.2)
            assert not [pid for pid in workers if _alive(pid)], "the chart worker outlived its action server"
        finally:
            rasa.stop()
    finally:
        actions.stop()


def test_servers_of_a_running_supervisord_are_not_taken_for_ghosts(tmp_path):
    """A `make cluster` (or `make run`) of this checkout still running holds the ports: named, not stopped."""
    from bot.launcher import free_ports

    port = free_port()
    conf = tmp_path / "supervisord.conf"
    conf.write_text(f"""[supervisord]
nodaemon=true
logfile={tmp_path}/supervisord.log
pidfile={tmp_path}/supervisord.pid
[program:holder]
command={sys.executable} -m bot.website --host 127.0.0.1 --port {port}
directory={ROOT}
""")
    supervisor = subprocess.Popen([str(Path(sys.executable).parent / "supervisord"), "-c", str(conf)], cwd=ROOT,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not _listening(port) and time.monotonic() < deadline:
            time.sleep(0.2)
        held_by = _children(supervisor.pid)
        messages = tmp_path / "messages.txt"
        with open(messages, "w") as out:
            assert free_ports([port], ROOT, out) is False
        assert "running supervisord" in messages.read_text(), messages.read_text()
        assert all(_alive(pid) for pid in held_by) and _listening(port)
    finally:
        stop_process(supervisor, timeout=30)
