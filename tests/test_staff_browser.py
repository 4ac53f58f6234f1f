"""The staff page in headless Chromium: sign-in, filters, ticket detail, note, reply (pause + message) and closing
(resume), against a recording stand-in for Rasa's HTTP API. Screenshots go to test-artifacts/."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from bot.tickets import Message, TicketDraft, TicketStore
from bot.tickets.texts import handoff_texts
from tests.servers import free_port, wait_http

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
TOKEN = "staff-secret-token-42"
RASA_TOKEN = "rasa-test-token"


class FakeRasa(BaseHTTPRequestHandler):
    """Answers like `rasa run --enable-api --auth-token`; records every call."""

    calls: list = []
    events: list = []  # the conversation GET /tracker returns
    channel = "socketio"

    def _reply(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _handle(self, method: str) -> None:
        url = urlparse(self.path)
        query = parse_qs(url.query)
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        if query.get("token") != [RASA_TOKEN]:
            return self._reply(401, {"status": "failure", "reason": "NotAuthenticated"})
        type(self).calls.append((method, url.path, {k: v[0] for k, v in query.items() if k != "token"}, body))
        tracker = {"sender_id": url.path.split("/")[2], "paused": False, "events": type(self).events,
                   "latest_input_channel": type(self).channel}
        self._reply(200, tracker)

    def do_GET(self):
        self._handle("GET")

    def do_POST(self):
        self._handle("POST")

    def log_message(self, *args):
        pass


@pytest.fixture
def staff_page(tmp_path):
    FakeRasa.calls = []
    FakeRasa.events = []
    rasa = ThreadingHTTPServer(("127.0.0.1", 0), FakeRasa)
    threading.Thread(target=rasa.serve_forever, daemon=True).start()

    url = f"sqlite:///{tmp_path}/tickets.db"
    store = TicketStore(url, spool_dir=tmp_path / "spool")
    fa = store.create(TicketDraft(
        sender_id="widget-session-1", channel="socketio", language="fa", category="multi-gpu", trigger="request_quote",
        slots={"model_id": "llama-3.1-70b", "method": "full", "seq_len": 4096, "budget_usd": 900.0},
        estimate_summary={"per_gpu_gib": 612.4, "best_card": None, "fitting_cards": [], "needs_quote": True,
                          "multi_gpu": {"card": "h100", "count": 8, "sharding": "fsdp"},
                          "model_display": "Llama 3.1 70B"},
        excerpt=[Message(role="user", text="سلام، کد ملی من ۰۴۹۹۳۷۰۸۹۹ است و ایمیلم ali@example.com"),
                 Message(role="bot", text="حتماً، درخواست شما را ثبت می‌کنم.")],
        consent=True, contact="+989121234567", contact_kind="phone"))
    tr = store.create(TicketDraft(sender_id="tg-777", channel="telegram", language="tr", category="technical",
                                  slots={"model_id": "qwen2.5-7b", "method": "lora"},
                                  excerpt=[Message(role="user", text="LoRA için hangi GPU?")]))

    port = free_port()
    env = {**os.environ, "STAFF_TOKEN": TOKEN, "TICKETS_DB_URL": url, "TICKETS_SPOOL_DIR": str(tmp_path / "spool"),
           "RASA_URL": f"http://127.0.0.1:{rasa.server_port}", "RASA_TOKEN": RASA_TOKEN}
    log = open(tmp_path / "staff.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "bot.staff", "--port", str(port)], cwd=ROOT, env=env,
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", 30, proc)
        yield {"url": f"http://127.0.0.1:{port}", "store": store, "fa": fa, "tr": tr, "log": tmp_path / "staff.log"}
    finally:
        proc.terminate()
        proc.wait(10)
        rasa.shutdown()


@pytest.fixture
def page():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                    args=["--no-sandbox", "--disable-gpu"])
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        yield context.new_page()
        browser.close()


def test_staff_workflow_in_the_browser(staff_page, page):
    base, store, fa, tr = staff_page["url"], staff_page["store"], staff_page["fa"], staff_page["tr"]
    ARTIFACTS.mkdir(exist_ok=True)

    # Not signed in: the list redirects to sign-in; a wrong token is refused.
    page.goto(base + "/")
    assert page.url.endswith("/login")
    page.fill("#token", "wrong-token")
    page.click("#sign-in")
    assert "Wrong token." in page.inner_text("main")

    page.fill("#token", TOKEN)
    page.fill("#name", "Zeynep")
    page.click("#sign-in")
    rows = page.locator("tr.ticket-row")
    assert rows.count() == 2
    # Most urgent first: the multi-GPU full fine-tuning quote.
    assert rows.nth(0).get_attribute("data-id") == fa.id
    assert "1 urgent" in rows.nth(0).inner_text()

    page.select_option("#filter-lang", "tr")
    page.click("#apply-filter")
    assert [r.get_attribute("data-id") for r in page.locator("tr.ticket-row").all()] == [tr.id]
    page.select_option("#filter-lang", "")
    page.select_option("#filter-status", "closed")
    page.click("#apply-filter")
    assert page.locator("#no-tickets").count() == 1
    page.goto(base + "/")
    page.screenshot(path=str(ARTIFACTS / "staff-list.png"), full_page=True)

    # Ticket detail: values, estimate, masked excerpt, consented contact.
    page.click(f"a[href='/tickets/{fa.id}']")
    assert page.inner_text("#ticket-id") == fa.id
    assert "Llama 3.1 70B" in page.inner_text("#slots")  # the model as people name it, not the preset id
    # Values are named in the page's language from knowledge/handoff.yml, not by their slot keys.
    ui = page.get_attribute("html", "lang") or "en"
    fields = handoff_texts()["staff"].get(ui, handoff_texts()["staff"]["en"])["fields"]
    assert fields["seq_len"] in page.inner_text("#slots") and "seq_len" not in page.inner_text("#slots")
    assert fields["per_gpu_gib"] in page.inner_text("#estimate")
    # The estimate as staff speak: "8 × H100, FSDP" as a sentence, no raw JSON (issue 14 #7).
    assert "612" in page.inner_text("#estimate") and "8 × H100, FSDP" in page.inner_text("#estimate")
    assert "{" not in page.inner_text("#estimate") and "8 × H100" in page.inner_text("#cards")
    excerpt = page.inner_text("#excerpt")
    assert "[IR_NATIONAL_ID]" in excerpt and "[EMAIL]" in excerpt and "ali@example.com" not in excerpt
    assert "+989121234567" in page.inner_text("#contact")

    # What the customer wrote after the ticket was opened, read from Rasa (masked on the page as well).
    FakeRasa.events = [
        {"event": "user", "text": "old message before the ticket", "timestamp": 1.0},
        {"event": "user", "text": "IBAN'ım TR330006100519786457841326, ne zaman ararsınız?", "timestamp": 4e9},
        {"event": "bot", "text": "Colleague: tomorrow", "timestamp": 4e9 + 1, "metadata": {"staff": True}}]
    page.reload()
    live = page.inner_text("#live")
    assert "IBAN'ım [IBAN], ne zaman ararsınız?" in live and "TR33" not in live
    assert "Staff: Colleague: tomorrow" in live and "old message" not in live

    # Taking the ticket pauses the bot for this customer.
    FakeRasa.calls.clear()
    page.click("#take")
    assert page.inner_text("#status") == "in progress" and page.locator("#take").count() == 0
    posts = [c for c in FakeRasa.calls if c[0] == "POST"]
    assert [(c[1], [e["event"] for e in c[3]]) for c in posts] == [
        ("/conversations/widget-session-1/tracker/events", ["pause"])]
    FakeRasa.calls.clear()

    # An internal note (masked like everything stored).
    page.fill("#note-text", "Müşteri 0532 123 45 67 numarasından da aranabilir")
    page.click("#add-note")
    assert "Note added." in page.inner_text("main")
    assert "Müşteri [PHONE] numarasından da aranabilir" in page.inner_text("#notes")

    # Reply: the bot is paused and the message is pushed to the customer's channel.
    page.fill("#reply-text", "سلام، پیش‌فاکتور ۸ کارت H100 را برایتان آماده کردیم.")
    page.click("#send-reply")
    assert "Reply sent to the customer" in page.inner_text("main")
    posts = [c for c in FakeRasa.calls if c[0] == "POST"]  # the page also reads the conversation (GET)
    assert len(posts) == 1
    method, path, params, events = posts[0]
    assert path == "/conversations/widget-session-1/tracker/events"
    assert params == {"output_channel": "latest", "execute_side_effects": "true"}
    assert [e["event"] for e in events] == ["pause", "bot"]
    assert events[1]["text"].endswith("پیش‌فاکتور ۸ کارت H100 را برایتان آماده کردیم.")
    assert events[1]["metadata"] == {"staff": True, "author": "Zeynep"}
    assert page.inner_text("#status") == "in progress"

    # Persian labels, right to left.
    page.goto(f"{base}/tickets/{fa.id}?ui=fa")
    assert page.get_attribute("html", "dir") == "rtl"
    assert page.inner_text("#status") == "در حال رسیدگی"
    page.screenshot(path=str(ARTIFACTS / "staff-ticket-fa.png"), full_page=True)
    page.goto(f"{base}/tickets/{fa.id}?ui=en")

    # Closing resumes the bot in that conversation.
    FakeRasa.calls.clear()
    page.select_option("#status-select", "closed")
    page.fill("#status-note", "quote sent by e-mail")
    page.click("#save-status")
    assert "The bot answers this customer again." in page.inner_text("main")
    posts = [(c[1].rsplit("/", 1)[-1], c[3]) for c in FakeRasa.calls if c[0] == "POST"]
    assert [(name, body[0]["event"] if name == "events" else body) for name, body in posts] == [
        ("events", "resume"), ("execute", {"name": "utter_handoff_resumed"})]
    assert page.inner_text("#status") == "closed"
    page.screenshot(path=str(ARTIFACTS / "staff-ticket-closed.png"), full_page=True)

    stored = store.get(fa.id)
    assert stored.status == "closed"
    assert [n.kind for n in stored.notes] == ["status", "note", "reply", "status", "note"]
    assert stored.notes[2].author == "Zeynep"


def test_staff_page_refuses_without_token_and_csrf(staff_page):
    base, fa = staff_page["url"], staff_page["fa"]
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(base + "/api/tickets")
    assert err.value.code == 401
    req = urllib.request.Request(base + "/api/tickets", headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(req) as resp:
        assert {t["id"] for t in json.load(resp)} == {fa.id, staff_page["tr"].id}
    # A signed-in browser session without the form's CSRF field cannot post.
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    opener.open(urllib.request.Request(base + "/login", data=f"token={TOKEN}".encode()))
    with pytest.raises(urllib.error.HTTPError) as err:
        opener.open(urllib.request.Request(f"{base}/tickets/{fa.id}/note", data=b"text=hello"))
    assert err.value.code == 403
    assert staff_page["store"].get(fa.id).notes == []


def test_staff_page_refuses_to_start_without_a_token(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "STAFF_TOKEN"}
    env["TICKETS_DB_URL"] = f"sqlite:///{tmp_path}/t.db"
    out = subprocess.run([sys.executable, "-m", "bot.staff", "--port", str(free_port())], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "STAFF_TOKEN" in out.stderr


def test_staff_page_while_the_ticket_database_is_down(tmp_path):
    dead = tmp_path / "db"
    dead.write_text("")
    url = f"sqlite:///{dead}/tickets.db"
    spooled = TicketStore(url, spool_dir=tmp_path / "spool").create(
        TicketDraft(sender_id="s-1", language="tr", excerpt=[Message(role="user", text="kartım 5500 0000 0000 0004")]))
    assert spooled.spooled
    port = free_port()
    env = {**os.environ, "STAFF_TOKEN": TOKEN, "TICKETS_DB_URL": url, "TICKETS_SPOOL_DIR": str(tmp_path / "spool"),
           "RASA_URL": "http://127.0.0.1:9"}
    proc = subprocess.Popen([sys.executable, "-m", "bot.staff", "--port", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", 30, proc)
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        listing = opener.open(urllib.request.Request(f"http://127.0.0.1:{port}/login",
                                                     data=f"token={TOKEN}".encode())).read().decode()
        assert "The ticket database is unreachable" in listing
        detail = opener.open(f"http://127.0.0.1:{port}/tickets/{spooled.id}").read().decode()
        assert "waiting in the spool" in detail and "kartım [CARD]" in detail
    finally:
        proc.terminate()
        proc.wait(10)
