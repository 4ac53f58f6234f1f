"""The red-team findings of 2026-12-01 (issue 11), each replayed against the real servers: the action server, Rasa
(REST + socket.io, started as scripts/run.sh starts it) and the staff page, over real HTTP and socket.io.

Every test names its finding; each failed against the code before the fix (the review quotes the old answers).
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import sqlite3
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
import zlib
from pathlib import Path

import pytest
import socketio

from bot.staff.rasa_api import RasaClient
from bot.tickets.store import TicketStore
from tests.servers import (ACTION_TOKEN, ACTION_TOKEN_HEADER, ROOT, free_port, start_action_server,
                           start_rasa_server, wait_http)

pytestmark = pytest.mark.e2e

SITE = "http://chat.cloudrux.test:8080"  # the website's own origin (ADVISOR_PUBLIC_URL)
EVIL = "https://evil.example"
PERSIAN = re.compile(r"[\u0600-\u06FF]")


@pytest.fixture(scope="module")
def stack(rasa_model, tmp_path_factory):
    """An action server with its own ticket database and a Rasa server wired to it."""
    tmp = tmp_path_factory.mktemp("security")
    tickets_url = f"sqlite:///{tmp}/tickets.db"
    env = {"TICKETS_DB_URL": tickets_url, "TICKETS_SPOOL_DIR": str(tmp / "spool"), "ADVISOR_PUBLIC_URL": SITE,
           "ADVISOR_CHART_DIR": str(tmp / "charts"), "SOCKET_SESSION_SECRET": "test-socket-secret-1234567890"}
    actions = start_action_server(env=env)
    try:
        rasa = start_rasa_server(actions.port, env=env)
    except BaseException:  # a Rasa that does not come up must not leave the action server running
        actions.stop()
        raise
    try:
        yield {"actions": actions, "rasa": rasa, "tickets_url": tickets_url, "tmp": tmp,
               "token": rasa.extra["auth_token"]}
    finally:
        rasa.stop()
        actions.stop()


def http(method: str, url: str, body: bytes | None = None, headers: dict | None = None, timeout: float = 60):
    """(status, headers, body) of a request, also for 4xx/5xx answers."""
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def rest(stack, payload, raw: bytes | None = None):
    body = raw if raw is not None else json.dumps(payload, ensure_ascii=False).encode()
    return http("POST", f"{stack['rasa'].url}/webhooks/rest/webhook", body, {"Content-Type": "application/json"})


def tracker(stack, sender: str) -> dict:
    return RasaClient(stack["rasa"].url, stack["token"]).tracker(sender)


def forged_ticket_call(sender: str) -> dict:
    """The review's request: an urgent ticket with a forged 'Staff:' line and the attacker's contact."""
    return {"next_action": "action_open_ticket", "sender_id": sender, "version": "3.6.21",
            "tracker": {"sender_id": sender, "slots": {"language": "tr", "method": "full", "gpus": 8.0,
                                                       "budget_usd": 99999.0, "handoff_consent": True,
                                                       "handoff_contact": "attacker@evil.example"},
                        "latest_message": {"text": "x", "intent": {"name": "request_human"}, "entities": []},
                        "events": [{"event": "user", "text": "RT12 forged ticket"},
                                   {"event": "bot", "text": "FORGED staff message", "metadata": {"staff": True}}],
                        "paused": False, "active_loop": {}, "latest_action_name": "action_listen"},
            "domain": {}}


def tickets_of(stack, sender: str):
    return [t for t in TicketStore(stack["tickets_url"], spool_dir=stack["tmp"] / "spool").list()
            if t.sender_id == sender]


# ---------------------------------------------------------------------------------------------- finding 1, 7, 12


def test_finding1_action_server_refuses_requests_without_the_secret(stack):
    url = stack["actions"].url
    sender = f"rt12-direct-{uuid.uuid4().hex[:6]}"
    body = json.dumps(forged_ticket_call(sender)).encode()
    for headers in ({"Content-Type": "application/json"},
                    {"Content-Type": "text/plain"},  # the drive-by form: a CORS "simple request"
                    {"Content-Type": "application/json", ACTION_TOKEN_HEADER: "wrong"},
                    {"Content-Type": "application/json", ACTION_TOKEN_HEADER: ACTION_TOKEN + "x"}):
        status, _, answer = http("POST", f"{url}/webhook", body, headers)
        assert status == 401, (headers, answer)
        assert b"ticket" not in answer
    assert http("GET", f"{url}/actions")[0] == 401  # the list of actions is no longer public
    # With the secret but as text/plain: refused too (only JSON content types).
    status, _, _ = http("POST", f"{url}/webhook", body,
                        {"Content-Type": "text/plain", ACTION_TOKEN_HEADER: ACTION_TOKEN})
    assert status == 415
    assert tickets_of(stack, sender) == []
    # The health check stays public; Rasa itself (which sends the secret) still runs actions: see the REST tests.
    assert http("GET", f"{url}/health")[0] == 200
    # No CORS at all: a browser's preflight is refused like any request without the secret, no header allows it.
    status, headers, _ = http("OPTIONS", f"{url}/webhook", headers={
        "Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
    assert status == 401 and not any(name.lower().startswith("access-control") for name in headers)


def test_finding1_action_server_listens_on_loopback_only(stack):
    port = stack["actions"].port
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.rsplit(":", 1)
            if int(hex_port, 16) == port and state == "0A":  # LISTEN
                listening.append(address)
    assert listening == ["0100007F"], listening  # 127.0.0.1, not 0.0.0.0 (00000000)


def test_finding7_action_server_refuses_a_deflate_bomb_and_oversized_bodies(stack):
    url = f"{stack['actions'].url}/webhook"
    call = {"next_action": "action_restart", "sender_id": "rt12-bomb", "tracker": {"sender_id": "rt12-bomb",
            "events": [], "slots": {}, "latest_message": {}}, "domain": {}, "pad": "A" * 52_000_000}
    bomb = zlib.compress(json.dumps(call).encode(), 9)
    assert len(bomb) < 100_000
    headers = {"Content-Type": "application/json", "Content-Encoding": "deflate", ACTION_TOKEN_HEADER: ACTION_TOKEN}
    started = time.monotonic()
    status, _, _ = http("POST", url, bomb, headers)
    assert status == 413 and time.monotonic() - started < 5
    # A plain body over the limit (16 MiB) is refused before it is read whole: 413, or the connection is closed
    # while the client is still sending.
    try:
        status, _, _ = http("POST", url, b"{" + b" " * (17 * 1024 * 1024) + b"}",
                            {"Content-Type": "application/json", ACTION_TOKEN_HEADER: ACTION_TOKEN})
    except (urllib.error.URLError, ConnectionError):
        status = 413
    assert status == 413
    # A small deflate body, as Rasa sends with COMPRESS_ACTION_SERVER_REQUEST, still works.
    call["pad"] = ""
    status, _, answer = http("POST", url, zlib.compress(json.dumps(call).encode()), headers)
    assert status == 200 and b"restart" in answer


def test_finding12_action_server_errors_are_answered_without_echoing_the_request(stack):
    url = f"{stack['actions'].url}/webhook"
    secret_text = "telefonum +90 532 765 43 21"
    headers = {"Content-Type": "application/json", ACTION_TOKEN_HEADER: ACTION_TOKEN}
    status, _, answer = http("POST", url, json.dumps({"next_action": "action_open_ticket", "sender_id": "rt12-err",
                                                      "tracker": secret_text, "domain": {}}).encode(), headers)
    assert status == 500 and b"532" not in answer and b"request_body" not in answer
    assert http("GET", url, headers={ACTION_TOKEN_HEADER: ACTION_TOKEN})[0] == 405  # was 500
    for bad in (b"", b"[1, 2]", b"not json"):
        assert http("POST", url, bad, headers)[0] == 400


# ---------------------------------------------------------------------------------------------- finding 2, 5


REVIEW_PII = ["سلام، شماره موبایل من ۰۹۱۲ ۱۲۳ ۴۵ ۶۷ است و واتساپ 989121234567", "TC kimlik no: 100.000.001.46",
              "telefonum 0532.123.45.67 ya da 905321234567", "e-posta adresim rt12@örnek.com.tr", "tc10000000146"]
CLEAR_VALUES = ["0912 123 45 67", "۰۹۱۲ ۱۲۳ ۴۵ ۶۷", "989121234567", "100.000.001.46", "0532.123.45.67",
                "905321234567", "örnek.com.tr", "10000000146"]


def _clear_values_in(raw: str) -> list:
    escaped = [json.dumps(v)[1:-1] for v in CLEAR_VALUES]
    return [v for v in CLEAR_VALUES + escaped if v in raw]


def test_finding2_personal_data_in_review_forms_is_masked_in_tracker_db_and_api(stack):
    sender = f"rt12-pii-{uuid.uuid4().hex[:8]}"
    for text in REVIEW_PII:
        status, _, _ = rest(stack, {"sender": sender, "message": text})
        assert status == 200
    with sqlite3.connect(stack["rasa"].workdir / "tracker.db") as db:
        raw = "\n".join(row[0] for row in db.execute("SELECT data FROM events WHERE sender_id = ?", (sender,)))
    assert "[PHONE]" in raw and "[TC_KIMLIK]" in raw and "[EMAIL]" in raw
    assert _clear_values_in(raw) == []
    api = json.dumps(tracker(stack, sender), ensure_ascii=False)
    assert _clear_values_in(api) == []


def test_finding5_an_error_with_personal_data_in_the_turn_leaves_the_logs_masked(stack):
    sender = f"rt12-exc-{uuid.uuid4().hex[:6]}"
    text = ("llama 8b qlora, telefonum +90 532 765 43 21, e-posta rt12exc@example.com, TC 10000000146, "
            + "9" * 400 + " token")
    status, _, answer = rest(stack, {"sender": sender, "message": text})
    assert status == 200 and json.loads(answer), "the customer still gets an answer"
    rest(stack, {"sender": sender, "message": '/inform{"seq_len": 1e999}'})
    time.sleep(1.0)
    for server in (stack["rasa"], stack["actions"]):
        log = server.log()
        for secret in ("+90 532 765 43 21", "rt12exc@example.com", "10000000146"):
            assert secret not in log, (server.name, secret)


# ---------------------------------------------------------------------------------------------- finding 3, 8, 16


async def _session(url: str, origin: str | None = None, request: dict | None = None):
    client = socketio.AsyncClient(reconnection=False)
    state = {"confirm": asyncio.Event(), "replies": [], "refused": [], "history": None}

    @client.on("session_confirm")
    async def on_confirm(data):
        state["session"] = data
        state["confirm"].set()

    @client.on("bot_uttered")
    async def on_bot(data):
        state["replies"].append(data)

    @client.on("session_refused")
    async def on_refused(data):
        state["refused"].append(data)

    @client.on("session_history")
    async def on_history(data):
        state["history"] = data

    await client.connect(url, transports=["polling"], socketio_path="/socket.io",
                         headers={"Origin": origin} if origin else {})
    await client.emit("session_request", request or {})
    await asyncio.wait_for(state["confirm"].wait(), 30)
    return client, state


async def _wait_for_replies(state, count: int = 1, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while len(state["replies"]) < count and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    await asyncio.sleep(1.5)


async def test_finding3_socketio_session_cannot_be_joined_or_spoken_for_by_another_client(stack):
    url = stack["rasa"].url
    victim, seen = await _session(url, origin=SITE)
    try:
        victim_session = seen["session"]
        assert victim_session["session_id"].startswith("web-") and victim_session["session_token"]
        await victim.emit("user_uttered", {"message": "llama 8b qlora 2048 token, bütçe 50 dolar", **victim_session})
        await _wait_for_replies(seen)
        assert seen["replies"], "the victim is answered"

        # The attacker names the victim's session (no token, a wrong token, its own token).
        attacker, got = await _session(url, request={"session_id": victim_session["session_id"]})
        try:
            assert got["session"]["session_id"] != victim_session["session_id"]
            assert got["history"] is None
            before = len(seen["replies"])
            for token in (None, "forged", got["session"]["session_token"]):
                await attacker.emit("user_uttered", {"message": "bir temsilciyle görüşmek istiyorum",
                                                     "session_id": victim_session["session_id"],
                                                     "session_token": token})
            await asyncio.sleep(3)
            assert len(got["refused"]) == 3 and got["replies"] == []
            assert len(seen["replies"]) == before, "nothing was said in the victim's conversation"
        finally:
            await attacker.disconnect()
    finally:
        await victim.disconnect()
    # REST cannot name the website session either (it read the victim's model and length before).
    status, _, answer = rest(stack, {"sender": victim_session["session_id"], "message": "LoRA olursa?"})
    assert status == 400 and b"another channel" in answer
    # The victim resumes with its token and gets its (masked) history back.
    again, state = await _session(url, origin=SITE, request=victim_session)
    try:
        assert state["session"]["session_id"] == victim_session["session_id"]
        for _ in range(50):  # session_history follows session_confirm
            if state["history"] is not None:
                break
            await asyncio.sleep(0.2)
        assert any(e["from"] == "user" and "llama 8b" in e.get("text", "") for e in state["history"] or [])
    finally:
        await again.disconnect()


async def test_finding8_foreign_origins_are_refused_by_socketio_and_cors(stack):
    url = stack["rasa"].url
    with pytest.raises(socketio.exceptions.ConnectionError):
        await _session(url, origin=EVIL)
    client, _ = await _session(url, origin=SITE)
    await client.disconnect()
    for origin in (EVIL, "null"):
        status, headers, _ = http("OPTIONS", f"{url}/status", headers={
            "Origin": origin, "Access-Control-Request-Method": "GET"})
        assert headers.get("Access-Control-Allow-Origin") not in (origin, "*"), (origin, dict(headers))
    _, headers, _ = http("OPTIONS", f"{url}/status", headers={"Origin": SITE, "Access-Control-Request-Method": "GET"})
    assert headers.get("Access-Control-Allow-Origin") == SITE


# ---------------------------------------------------------------------------------------------- finding 4, 9, 11, 12


def test_finding4_9_client_metadata_cannot_mark_staff_or_change_the_channel(stack):
    sender = f"rt12-spoof-{uuid.uuid4().hex[:6]}"
    status, _, _ = rest(stack, {"sender": sender, "message": "👤 Destek ekibimizden yanıt: %90 indirim onaylandı",
                                "metadata": {"staff": True, "author": "Zeynep", "language_hint": "tr"},
                                "input_channel": "telegram"})
    assert status == 200
    state = tracker(stack, sender)
    user_events = [e for e in state["events"] if e["event"] == "user"]
    assert user_events and user_events[-1]["input_channel"] == "rest"
    metadata = user_events[-1]["metadata"]
    assert metadata.get("language_hint") == "tr" and "staff" not in metadata and "author" not in metadata
    assert state["latest_input_channel"] == "rest"


@pytest.mark.parametrize("raw", [b"", b"null", b"[1,2]", b'"hello"', b"5", b'{"sender": "x", "message": null}',
                                 b'{"sender": "x", "message": 5}', b'{"message": "hi"}',
                                 b'{"sender": "", "message": "hi"}',
                                 b'{"sender": "   ", "message": "hi"}', b'{"sender": "123456", "message": "hi"}',
                                 b'{"sender": "x", "message": ""}', b"\xff\xfe", b"[" * 5000])
def test_finding11_12_malformed_rest_bodies_get_400_with_a_reason(stack, raw):
    status, _, answer = rest(stack, None, raw=raw)
    assert status == 400, answer
    assert json.loads(answer)["error"]


# ---------------------------------------------------------------------------------------------- finding 6


@pytest.mark.parametrize("lang, unit", [("fa", "سلام، یک سؤال درباره‌ی بودجه دارم. "),
                                        ("tr", "Merhaba, bütçem hakkında bir sorum var. ")])
def test_finding6_a_message_over_4000_characters_is_answered_in_the_users_language_and_not_stored(stack, lang, unit):
    sender = f"rt12-huge-{lang}-{uuid.uuid4().hex[:6]}"
    text = unit * (4100 // len(unit) + 1)
    started = time.monotonic()
    status, _, answer = rest(stack, {"sender": sender, "message": text})
    assert status == 200 and time.monotonic() - started < 2
    reply = json.loads(answer)[0]["text"]
    assert "4000" in reply and bool(PERSIAN.search(reply)) == (lang == "fa")
    assert not any(e["event"] == "user" for e in tracker(stack, sender)["events"])
    # Exactly at the limit is read as usual.
    status, _, answer = rest(stack, {"sender": sender, "message": ("a " * 2000)[:4000]})
    assert status == 200 and "4000" not in answer.decode()


def test_finding6_a_megabyte_body_is_refused_before_rasa_reads_it(stack):
    status, _, _ = rest(stack, {"sender": "rt12-huge-1mb", "message": "a " * 600_000})
    assert status == 413


async def test_finding6_socketio_applies_the_same_limit(stack):
    client, state = await _session(stack["rasa"].url, origin=SITE)
    try:
        await client.emit("user_uttered", {"message": "Merhaba bütçem " * 400, **state["session"]})
        await _wait_for_replies(state)
        assert any("4000" in r.get("text", "") and "karakter" in r["text"] for r in state["replies"])
    finally:
        await client.disconnect()


# ---------------------------------------------------------------------------------------------- finding 10, 13


def test_finding10_staff_calls_reach_conversations_whose_id_has_special_characters(stack):
    for sender in ('rt12-xss-"><img src=x onerror=document.title=1>', "ali.veli@örnek.com.tr",
                   "a/b?c#d %41 + :", "müşteri 42"):
        status, _, _ = rest(stack, {"sender": sender, "message": "merhaba"})
        assert status == 200
        client = RasaClient(stack["rasa"].url, stack["token"])
        state = client.tracker(sender)
        assert state["sender_id"] == sender
        assert any(e["event"] == "user" and e.get("text") == "merhaba" for e in state["events"]), sender
        client.say_as_staff(sender, "Destek ekibinden merhaba", "Zeynep", pause=False)
        assert any(e.get("text") == "Destek ekibinden merhaba" for e in client.tracker(sender)["events"])


def test_finding13_token_not_on_the_command_line_and_files_private(stack):
    rasa = stack["rasa"]
    cmdline = Path(f"/proc/{rasa.proc.pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    assert "bot.assistant.rasa_server" in cmdline and stack["token"] not in cmdline
    assert "--cors" not in cmdline
    # Created by the Rasa process (the tracker store): owner-only, whatever the caller's umask was.
    assert stat.S_IMODE((rasa.workdir / "tracker.db").stat().st_mode) == 0o600
    script = (ROOT / "scripts" / "run.sh").read_text()
    assert "--auth-token" not in script and "umask 077" in script and '--cors "*"' not in script


# ---------------------------------------------------------------------------------------------- staff page: 12, 15, 16

STAFF_TOKEN = "staff-secret-token-42"


@pytest.fixture(scope="module")
def staff(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("staff")
    port = free_port()
    env = {**os.environ, "STAFF_TOKEN": STAFF_TOKEN, "TICKETS_DB_URL": f"sqlite:///{tmp}/tickets.db",
           "TICKETS_SPOOL_DIR": str(tmp / "spool"), "RASA_URL": "http://127.0.0.1:9", "STAFF_TRUST_PROXY": "1",
           "STAFF_LOGIN_FAILURES_PER_MINUTE": "5"}
    proc = subprocess.Popen([sys.executable, "-m", "bot.staff", "--port", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", 30, proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


def _login(base: str, token: str = STAFF_TOKEN, headers: dict | None = None):
    """(status, Set-Cookie header) of a sign-in, without following the redirect."""
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    request = urllib.request.Request(f"{base}/login", data=f"token={token}&name=Zeynep".encode(),
                                     headers=headers or {}, method="POST")
    try:
        resp = opener.open(request)
        return resp.status, resp.headers.get("Set-Cookie", "")
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Set-Cookie", "")


def _session_cookie(set_cookie: str) -> str:
    return re.search(r"staff_session=([^;]+)", set_cookie).group(1)


def test_finding15_staff_sessions_are_per_login_revocable_and_secure_over_https(staff):
    _, first = _login(staff)
    _, second = _login(staff, headers={"X-Forwarded-Proto": "https"})
    one, two = _session_cookie(first), _session_cookie(second)
    assert one != two and len(one) >= 32
    assert "Secure" in second and "Secure" not in first
    assert "HttpOnly" in first and "SameSite=Strict" in first and "Max-Age" in first
    cookie = {"Cookie": f"staff_session={one}"}
    assert http("GET", f"{staff}/api/tickets", headers=cookie)[0] == 200
    http("GET", f"{staff}/logout", headers=cookie)
    assert http("GET", f"{staff}/api/tickets", headers=cookie)[0] == 401, "sign-out revokes the session"
    assert http("GET", f"{staff}/api/tickets", headers={"Cookie": f"staff_session={two}"})[0] == 200


def test_finding12_15_wrong_or_non_ascii_tokens_never_give_500_and_guessing_is_limited(staff):
    assert http("GET", f"{staff}/api/tickets", headers={"Authorization": "Bearer éé"})[0] == 401
    status, _, _ = http("GET", f"{staff}/api/tickets", headers={"Authorization": "Bearer %C3%A9"})
    assert status == 401
    status, _ = _login(staff, token="%C3%A9")
    assert status == 302
    statuses = [_login(staff, token=f"guess-{i}")[0] for i in range(6)]
    assert 429 in statuses, statuses
    assert _login(staff)[0] == 429, "the right token waits out the minute too"


def test_finding16_staff_page_may_only_be_framed_by_itself(staff):
    _, headers, _ = http("GET", f"{staff}/login")
    assert "frame-ancestors 'self'" in headers["Content-Security-Policy"]


# ---------------------------------------------------------------------------------------------- website: 14, 16


def test_finding14_16_website_charts_and_framing(tmp_path):
    charts = tmp_path / "charts"
    charts.mkdir()
    old = charts / "old.png"
    old.write_bytes(b"png")
    os.utime(old, (time.time() - 30 * 86400,) * 2)
    port = free_port()
    env = {**os.environ, "ADVISOR_CHART_DIR": str(charts)}
    proc = subprocess.Popen([sys.executable, "-m", "bot.website", "--host", "127.0.0.1", "--port", str(port)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_http(f"http://127.0.0.1:{port}/", 30, proc)
        started = time.monotonic()
        assert http("GET", f"http://127.0.0.1:{port}/charts/rt12nonexistent.png")[0] == 404
        assert time.monotonic() - started < 6  # was 8 s, with no bound on how many waited at once
        assert not old.exists(), "charts older than a week are pruned"
        _, headers, _ = http("GET", f"http://127.0.0.1:{port}/")
        assert "frame-ancestors 'self'" in headers["Content-Security-Policy"]
    finally:
        proc.terminate()
        proc.wait(10)
