"""Ticket store (SQLite and PostgreSQL), numbering, triage rules, masking on the way in, the staff CLI and the
staff Telegram notice."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from bot.tickets import Message, TicketDraft, TicketNotFound, TicketStore
from bot.tickets.models import new_ticket_id, normalize_ticket_id
from bot.tickets.notify import notification_message, send_staff_notification
from bot.tickets.priority import LARGE_BUDGET_USD, categorize, prioritize

ROOT = Path(__file__).resolve().parents[1]
PG_URL = "postgresql://postgres@127.0.0.1:5432/test"
ID_PATTERN = re.compile(r"^T-\d{6}-[0-9A-HJKMNP-TV-Z]{5}$")


def draft(**kw) -> TicketDraft:
    base = dict(sender_id=f"s-{uuid.uuid4().hex[:8]}", channel="socketio", language="fa", category="technical",
                slots={"model_id": "llama-3.1-8b", "method": "qlora", "seq_len": 2048, "budget_usd": 50.0},
                estimate_summary={"per_gpu_gib": 9.4, "best_card": "rtx4090", "fitting_cards": ["rtx4090", "l40s"],
                                  "needs_quote": False, "multi_gpu": None},
                cards=["rtx4090", "l40s"],
                excerpt=[Message(role="user", text="سلام، موبایل من ۰۹۱۲۱۲۳۴۵۶۷ است", at=1.0),
                         Message(role="bot", text="حتماً", at=2.0)])
    base.update(kw)
    return TicketDraft(**base)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store(request, tmp_path):
    url = f"sqlite:///{tmp_path}/tickets.db" if request.param == "sqlite" else PG_URL
    s = TicketStore(url, spool_dir=tmp_path / "spool")
    created = []
    original = s.create

    def tracking_create(d):
        t = original(d)
        created.append(t.id)
        return t

    s.create = tracking_create
    yield s
    if request.param == "postgresql":
        s.delete(created)
    s.close()


def test_ticket_number_format_and_uniqueness():
    ids = {new_ticket_id() for _ in range(5000)}
    assert len(ids) == 5000
    assert all(ID_PATTERN.match(i) for i in ids)
    assert normalize_ticket_id(" t-261129-7kq4m ") == "T-261129-7KQ4M"
    assert normalize_ticket_id("T-261129-OKQ4M") == "T-261129-0KQ4M"  # O is not in the alphabet: read as zero


def test_create_masks_everything_but_the_consented_contact(store):
    t = store.create(draft(consent=True, contact="+905321234567", contact_kind="phone",
                           slots={"model": "call me 0532 123 45 67", "method": "lora"}))
    assert ID_PATTERN.match(t.id) and not t.spooled
    back = store.get(t.id)
    assert back.contact == "+905321234567" and back.contact_kind == "phone" and back.consent
    assert back.excerpt[0].text == "سلام، موبایل من [PHONE] است"
    assert back.slots["model"] == "call me [PHONE]"
    assert back.estimate_summary["best_card"] == "rtx4090" and back.cards == ["rtx4090", "l40s"]
    assert (back.channel, back.language, back.status) == ("socketio", "fa", "open")


def test_contact_without_consent_is_dropped(store):
    t = store.create(draft(consent=False, contact="ali@example.com", contact_kind="email"))
    back = store.get(t.id)
    assert back.contact is None and back.contact_kind is None
    assert "ali@example.com" not in back.json()


def test_excerpt_keeps_the_last_messages_only(store):
    msgs = [Message(role="user" if i % 2 else "bot", text=f"message {i}") for i in range(30)]
    back = store.get(store.create(draft(excerpt=msgs)).id)
    assert [m.text for m in back.excerpt] == [f"message {i}" for i in range(18, 30)]


def test_list_filters_status_notes_and_restart(store):
    fa = store.create(draft(language="fa", category="quote"))
    tr = store.create(draft(language="tr", category="other", slots={}, estimate_summary=None))
    assert {t.id for t in store.list(language="tr") if t.id in (fa.id, tr.id)} == {tr.id}

    store.set_status(fa.id, "in_progress", author="Ayşe")
    store.add_note(fa.id, "Customer wants IBAN TR330006100519786457841326 on the invoice", author="Ayşe")
    closed = store.set_status(fa.id, "closed", author="Ayşe", note="quote sent")
    assert closed.status == "closed"
    assert [(n.kind, n.text) for n in closed.notes] == [
        ("status", "open -> in_progress"), ("note", "Customer wants IBAN [IBAN] on the invoice"),
        ("status", "in_progress -> closed"), ("note", "quote sent")]
    assert closed.updated_at >= closed.created_at
    assert fa.id in {t.id for t in store.list(status="closed")}
    assert fa.id not in {t.id for t in store.list(status="open")}

    # Nothing is lost on restart: a new store on the same database sees the same tickets and history.
    again = TicketStore(store.url, spool_dir=store.spool.directory)
    assert again.get(fa.id).notes == closed.notes
    assert again.get(tr.id).language == "tr"
    with pytest.raises(ValueError):
        again.set_status(fa.id, "done")
    with pytest.raises(TicketNotFound):
        again.get("T-000101-00000")


def test_list_orders_by_priority_then_newest(store):
    sender = f"order-{uuid.uuid4().hex[:6]}"
    low = store.create(draft(sender_id=sender, category="other", slots={}, estimate_summary=None))
    urgent = store.create(draft(sender_id=sender, category="multi-gpu",
                                slots={"method": "full", "gpus": 8, "model_size_b": 70}))
    normal = store.create(draft(sender_id=sender))
    assert [t.id for t in store.list(sender_id=sender)] == [urgent.id, normal.id, low.id]
    assert store.open_ticket_for(sender).id == urgent.id
    store.set_status(urgent.id, "in_progress")
    assert store.open_ticket_for(sender).id == urgent.id  # in progress counts first
    for t in (low, urgent, normal):
        store.set_status(t.id, "closed")
    assert store.open_ticket_for(sender) is None


@pytest.mark.parametrize("trigger,slots,estimate,category", [
    ("request_quote", {}, None, "quote"),
    ("request_human", {"gpus": 4}, None, "multi-gpu"),
    ("request_quote", {}, {"multi_gpu": {"card": "h100", "count": 4, "sharding": "fsdp"}}, "multi-gpu"),
    ("request_human", {}, {"needs_quote": True}, "quote"),
    ("fallback", {}, None, "technical"),
    ("request_human", {"model_id": "qwen2.5-7b"}, None, "technical"),
    ("request_human", {}, None, "other"),
])
def test_categories(trigger, slots, estimate, category):
    assert categorize(trigger, slots, estimate) == category


def test_priority_rules():
    multi = {"multi_gpu": {"card": "h100", "count": 8, "sharding": "fsdp"}}
    assert prioritize("multi-gpu", {"method": "full"}, multi) == (1, ["multi_gpu_full_finetune",
                                                                      "category_multi_gpu"])
    assert prioritize("technical", {"budget_usd": LARGE_BUDGET_USD}, None)[0] == 1
    assert prioritize("technical", {"budget_usd": LARGE_BUDGET_USD - 1}, None) == (3, ["technical_question"])
    assert prioritize("multi-gpu", {"method": "qlora"}, multi) == (2, ["category_multi_gpu"])
    assert prioritize("quote", {}, None) == (2, ["category_quote"])
    assert prioritize("other", {"model_size_b": 70}, None) == (2, ["large_model"])
    assert prioritize("other", {}, None) == (4, ["general_request"])
    assert prioritize("multi-gpu", {"budget_unlimited": True, "gpus": 2}, None)[0] == 1


# ------------------------------------------------------------------ CLI

def _cli(*args, env_url):
    env = {"TICKETS_DB_URL": env_url, "PATH": "/usr/bin:/bin", "RASA_URL": "http://127.0.0.1:9"}
    return subprocess.run([sys.executable, "-m", "bot.tickets", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)


def test_cli_list_show_close(tmp_path):
    url = f"sqlite:///{tmp_path}/cli.db"
    store = TicketStore(url, spool_dir=tmp_path / "spool")
    fa = store.create(draft(language="fa", consent=True, contact="ali@example.com", contact_kind="email"))
    tr = store.create(draft(language="tr", category="quote"))

    out = _cli("list", "--json", env_url=url)
    assert out.returncode == 0, out.stderr
    assert {t["id"] for t in json.loads(out.stdout)} == {fa.id, tr.id}

    out = _cli("list", "--lang", "tr", "--status", "open", env_url=url)
    assert out.returncode == 0 and tr.id in out.stdout and fa.id not in out.stdout
    assert "quote" in out.stdout and "Priority" in out.stdout

    out = _cli("show", fa.id.lower(), env_url=url)
    assert out.returncode == 0, out.stderr
    assert "ali@example.com (email)" in out.stdout and "[PHONE]" in out.stdout and "llama-3.1-8b" in out.stdout
    assert "0912" not in out.stdout

    out = _cli("--ui-lang", "tr", "show", "T-000101-00000", env_url=url)
    assert out.returncode == 3 and "Böyle bir talep yok" in out.stderr

    # Closing works with the chat server down; the staff member is told the bot could not be resumed.
    out = _cli("close", tr.id, "--note", "teklif gönderildi", env_url=url)
    assert out.returncode == 1
    assert "closed" in out.stdout and "bot is still paused" in out.stderr
    closed = store.get(tr.id)
    assert closed.status == "closed" and closed.notes[-1].text == "teklif gönderildi"

    out = _cli("close", tr.id, env_url=url)  # --note is required
    assert out.returncode == 2


def test_cli_reports_a_dead_database(tmp_path):
    (tmp_path / "not-a-dir").write_text("")
    out = _cli("list", env_url=f"sqlite:///{tmp_path}/not-a-dir/x.db")
    assert out.returncode == 4 and "unreachable" in out.stderr


def test_cli_registers_into_a_parent_parser():
    import argparse

    from bot.tickets.cli import register

    parser = argparse.ArgumentParser(prog="gpu-advisor")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["tickets", "list", "--status", "open", "--lang", "fa", "--json"])
    assert (args.command, args.tickets_command, args.status, args.lang, args.json) == (
        "tickets", "list", "open", "fa", True)
    assert callable(args.func)


# ------------------------------------------------------------------ staff Telegram notice

class _FakeBotApi(BaseHTTPRequestHandler):
    calls: list = []
    status = 200

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).calls.append((self.path, json.loads(body)))
        self.send_response(type(self).status)
        self.end_headers()
        self.wfile.write(b'{"ok": true}')

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_bot_api():
    _FakeBotApi.calls = []
    _FakeBotApi.status = 200
    server = HTTPServer(("127.0.0.1", 0), _FakeBotApi)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()


def test_staff_notification_sent_when_configured(tmp_path, fake_bot_api):
    env = {"TELEGRAM_STAFF_CHAT_ID": "-100123", "TELEGRAM_TOKEN": "123:abc",
           "TELEGRAM_API_URL": f"http://127.0.0.1:{fake_bot_api.server_port}", "STAFF_LANG": "tr"}
    store = TicketStore(f"sqlite:///{tmp_path}/n.db", spool_dir=tmp_path / "spool",
                        on_created=lambda t: send_staff_notification(t, env).join(5))
    t = store.create(draft(category="multi-gpu", slots={"method": "full", "gpus": 8}))
    assert len(_FakeBotApi.calls) == 1
    path, body = _FakeBotApi.calls[0]
    assert path == "/bot123:abc/sendMessage" and body["chat_id"] == "-100123"
    assert t.id in body["text"] and "1 acil" in body["text"] and "anonim" in body["text"]
    assert "0912" not in body["text"]


def test_staff_notification_off_or_failing_never_costs_the_ticket(tmp_path, fake_bot_api):
    assert send_staff_notification(draft_ticket(tmp_path), env={}) is None
    _FakeBotApi.status = 500
    env = {"TELEGRAM_STAFF_CHAT_ID": "1", "TELEGRAM_TOKEN": "123:abc",
           "TELEGRAM_API_URL": f"http://127.0.0.1:{fake_bot_api.server_port}"}
    dead = {"TELEGRAM_STAFF_CHAT_ID": "1", "TELEGRAM_TOKEN": "123:abc", "TELEGRAM_API_URL": "http://127.0.0.1:9"}

    def boom(_ticket):
        raise RuntimeError("notifier bug")

    for hook in (lambda t: send_staff_notification(t, env).join(5),
                 lambda t: send_staff_notification(t, dead).join(5), boom):
        store = TicketStore(f"sqlite:///{tmp_path}/f.db", spool_dir=tmp_path / "spool", on_created=hook)
        t = store.create(draft())
        assert store.get(t.id).id == t.id
    assert len(_FakeBotApi.calls) == 1  # the 500 was received and ignored


def draft_ticket(tmp_path):
    store = TicketStore(f"sqlite:///{tmp_path}/d.db", spool_dir=tmp_path / "spool")
    return store.create(draft())


def test_notification_text_in_each_staff_language(tmp_path):
    t = draft_ticket(tmp_path)
    assert "New ticket" in notification_message(t, "en")
    assert "تیکت جدید" in notification_message(t, "fa")
    assert "Yeni talep" in notification_message(t, "tr")
