"""The cluster's HAProxy limits requests per client address (deploy/haproxy/cluster.cfg, issue 20 finding 6): the real
haproxy binary (`make cluster-deps`) with the real configuration, on free ports, without the servers behind it.
Requests under the limit reach the (absent) backends and get 503; over it, 429 before any backend is tried.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from tests.servers import ROOT, free_port, stop_process

# HAProxy is installed by `make test` (cluster-deps), after `make check`: the cluster's tests run in the full suite.
pytestmark = pytest.mark.cluster
LIMIT = 5


def _status(url: str, headers: dict | None = None) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as error:
        return error.code


@pytest.fixture
def balancer(tmp_path):
    haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
    if not os.path.exists(haproxy):
        pytest.fail("haproxy is missing: make cluster-deps (apt-get install haproxy)")
    port = free_port()
    env = {**os.environ, "ADVISOR_RUN_DIR": str(tmp_path), "BALANCER_PORT": str(port),
           "ACTIONS_BALANCER_PORT": str(free_port()), "BALANCER_REQUESTS_PER_10S": str(LIMIT),
           **{name: str(free_port()) for name in ("RASA_A_PORT", "RASA_B_PORT", "ACTIONS_A_PORT", "ACTIONS_B_PORT",
                                                  "WEB_PORT")}}
    proc = subprocess.Popen([haproxy, "-db", "-f", str(ROOT / "deploy" / "haproxy" / "cluster.cfg")], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                _status(f"http://127.0.0.1:{port}/health")
                break
            except OSError:
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_process(proc)


def test_one_address_over_the_request_rate_gets_429_from_the_balancer(balancer):
    statuses = [_status(f"{balancer}/webhooks/rest/webhook") for _ in range(LIMIT + 3)]
    # The probe of the fixture counted too: the limit is reached within LIMIT requests, then every one is refused.
    assert 429 not in statuses[:LIMIT - 1], statuses
    assert statuses[-3:] == [429, 429, 429], statuses
    assert all(status in (503, 429) for status in statuses), statuses
