"""Issue 20, finding 7, on real website and staff processes: security headers on every page of the website (the
KVKK pages had none), chart-waiting slots bounded per client, and the staff sign-in limiter not raced by parallel
guesses.
"""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import urllib.error
import urllib.request

import aiohttp
import pytest

from tests.servers import ROOT, free_port, stop_process, wait_http

STAFF_TOKEN = "staff-race-token-0123456789"
LOGIN_LIMIT = 5


@pytest.fixture(scope="module")
def website(tmp_path_factory):
    charts = tmp_path_factory.mktemp("charts")
    port = free_port()
    env = {**os.environ, "ADVISOR_CHART_DIR": str(charts), "ADVISOR_TRUSTED_PROXY": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "bot.website", "--host", "127.0.0.1", "--port", str(port)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_http(f"http://127.0.0.1:{port}/health", 30, proc)
        yield {"url": f"http://127.0.0.1:{port}", "charts": charts}
    finally:
        stop_process(proc)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def _get(url: str):
    try:
        with urllib.request.build_opener(_NoRedirect).open(url, timeout=30) as resp:
            return resp.status, resp.headers
    except urllib.error.HTTPError as error:
        return error.code, error.headers


@pytest.mark.parametrize("path", ["/kvkk/fa", "/kvkk/tr", "/kvkk", "/", "/demo.html", "/widget.js", "/health"])
def test_every_website_answer_carries_the_security_headers(website, path):
    status, headers = _get(website["url"] + path)
    assert status in (200, 302), (path, status)
    policy = headers.get("Content-Security-Policy", "")
    assert "frame-ancestors 'self'" in policy and "default-src 'self'" in policy, (path, policy)
    assert headers.get("X-Frame-Options") == "SAMEORIGIN", path
    assert headers.get("X-Content-Type-Options") == "nosniff", path


async def test_one_client_cannot_hold_every_chart_waiting_slot(website):
    from bot.website import MAX_CHART_WAITERS_PER_CLIENT

    url = f"{website['url']}/charts/on-its-way.png"
    async with aiohttp.ClientSession() as session:
        async def fetch(address: str) -> int:
            async with session.get(url, headers={"X-Forwarded-For": address}) as resp:
                await resp.read()
                return resp.status

        waiting = [asyncio.create_task(fetch("192.0.2.10")) for _ in range(MAX_CHART_WAITERS_PER_CLIENT)]
        await asyncio.sleep(0.5)  # the first requests hold the client's slots
        assert await fetch("192.0.2.10") == 404  # refused at once: this client holds its share
        other = asyncio.create_task(fetch("192.0.2.20"))  # another customer still gets a slot
        await asyncio.sleep(0.5)
        (website["charts"] / "on-its-way.png").write_bytes(b"\x89PNG\r\n\x1a\n")  # the chart arrives
        assert await asyncio.gather(*waiting, other) == [200] * (MAX_CHART_WAITERS_PER_CLIENT + 1)


@pytest.fixture
def staff(tmp_path):
    port = free_port()
    env = {**os.environ, "STAFF_TOKEN": STAFF_TOKEN, "TICKETS_DB_URL": f"sqlite:///{tmp_path}/tickets.db",
           "TICKETS_SPOOL_DIR": str(tmp_path / "spool"), "RASA_URL": "http://127.0.0.1:9",
           "STAFF_LOGIN_FAILURES_PER_MINUTE": str(LOGIN_LIMIT)}
    proc = subprocess.Popen([sys.executable, "-m", "bot.staff", "--port", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", 30, proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_process(proc)


def _login(base: str, token: str) -> int:
    request = urllib.request.Request(f"{base}/login", data=f"token={token}&name=Race".encode(), method="POST")
    try:
        with urllib.request.build_opener(_NoRedirect).open(request, timeout=30) as resp:
            return resp.status
    except urllib.error.HTTPError as error:
        return error.code


def test_parallel_wrong_tokens_cannot_race_past_the_sign_in_limit(staff):
    """30 sign-ins whose forms arrive slowly (headers first, the form a moment later): before, every one of them
    passed the limiter's check while the form was read, and all 30 guesses were compared with the token."""
    import socket
    import time

    host, port = staff.removeprefix("http://").split(":")
    connections = []
    for number in range(30):
        form = f"token=guess-{number:02d}&name=Race".encode()
        sock = socket.create_connection((host, int(port)), timeout=30)
        sock.sendall(b"POST /login HTTP/1.1\r\nHost: staff\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                     + f"Content-Length: {len(form)}\r\nConnection: close\r\n\r\n".encode() + form[:6])
        connections.append((sock, form[6:]))
    time.sleep(1.0)  # every sign-in is now waiting for the rest of its form
    for sock, rest in connections:
        try:
            sock.sendall(rest)
        except OSError:  # already answered 429 and closed: that attempt was refused
            pass
    statuses = []
    for sock, _ in connections:
        with sock:
            head = b""
            while b"\r\n" not in head:
                chunk = sock.recv(1024)
                if not chunk:
                    break
                head += chunk
            statuses.append(int(head.split()[1]))
    checked = [status for status in statuses if status == 302]  # a guess that was compared with the token
    assert len(checked) <= LOGIN_LIMIT, statuses
    assert statuses.count(429) >= 30 - LOGIN_LIMIT, statuses
