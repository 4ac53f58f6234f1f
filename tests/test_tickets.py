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
ID_PATTERN = re.compile(r"^T-\d{6}-[0-9A-HJKMNP-TV-Z]{6}$")


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
    ids = {new_ticket_id() for _ in range(300)}
    assert len(ids) == 300  # 300 numbers clash with probability 4e-5
    assert all(ID_PATTERN.match(i) for i in ids)
    assert normalize_ticket_id(" t-261129-7kq4mz ") == "T-261129-7KQ4MZ"
    assert normalize_ticket_id("T-261129-OKQ4MZ") == "T-261129-0KQ4MZ"  # O is not in the alphabet: read as zero


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
    assert [t.id for t in store.list(language="tr", sender_id=tr.sender_id)] == [tr.id]
    assert store.list(language="tr", sender_id=fa.sender_id) == []

    store.set_status(fa.id, "in_progress", author="Ayşe")
    store.add_note(fa.id, "Customer wants IBAN TR330006100519786457841326 on the invoice", author="Ayşe")
    closed = store.set_status(fa.id, "closed", author="Ayşe", note="quote sent")
    assert closed.status == "closed"
    assert [(n.kind, n.text) for n in closed.notes] == [
        ("status", "open -> in_progress"), ("note", "Customer wants IBAN [IBAN] on the invoice"),
        ("status", "in_progress -> closed"), ("note", "quote sent")]
    assert closed.updated_at >= closed.created_at
    assert fa.id in {t.id for t in store.list(status="closed", sender_id=fa.sender_id)}
    assert fa.id not in {t.id for t in store.list(status="open", sender_id=fa.sender_id)}

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
    return subprocess.run([sys.executable, "-m", "bot.staff.cli", *args], cwd=ROOT, env=env, capture_output=True,
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

    from bot.staff.cli import register

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


# ------------------------------------------------------------------ handoff actions (rasa_sdk, no servers)

def _handoff_tracker(text, intent, requested=None, slots=None, answered=True, events=()):
    from rasa_sdk import Tracker

    latest = {"text": text, "intent": {"name": intent, "confidence": 0.9}, "entities": []}
    history = [{"event": "user", "text": "/request_human", "timestamp": 1.0,
                "parse_data": {"intent": {"name": "request_human"}}},
               {"event": "action", "name": "utter_handoff_intro"}, *events]
    if answered:
        history += [{"event": "action", "name": "action_listen"},
                    {"event": "user", "text": text, "timestamp": 2.0, "parse_data": latest}]
    # Rasa hands the validation action a copy ending with the form's own ActionExecuted.
    history.append({"event": "action", "name": "handoff_form"})
    # As in a real handoff: the notice flag starts false (domain initial value) and is true once the form has
    # asked one of its questions.
    all_slots = {"language": "tr", "requested_slot": requested, "handoff_consent": None, "handoff_contact": None,
                 "kvkk_notice_shown": requested is not None, **(slots or {})}
    return Tracker("conv-1", all_slots, latest, history, False, None, {"name": "handoff_form"}, "handoff_form")


def _run_form(tracker, monkeypatch, open_ticket=None):
    import asyncio

    from rasa_sdk.executor import CollectingDispatcher

    import actions.handoff as handoff

    monkeypatch.setattr(handoff, "_open_ticket", lambda sender: open_ticket)
    dispatcher = CollectingDispatcher()
    events = asyncio.run(handoff.ValidateHandoffForm().run(dispatcher, tracker, {}))
    return {e["name"]: e["value"] for e in events}, [m.get("response") for m in dispatcher.messages]


@pytest.mark.parametrize("text,intent,requested,slots,expected,said", [
    ("evet", "affirm", "handoff_consent", {},
     {"handoff_consent": True, "requested_slot": "handoff_contact"}, []),
    # A plain refusal ends the form with nothing kept; action_open_ticket then offers a request without a contact
    # (issue 21, round 4); a refusal that asks for an answer here opens it at once.
    ("hayır", "deny", "handoff_consent", {},
     {"handoff_consent": False, "handoff_name": None, "handoff_refused": True, "requested_slot": None}, []),
    ("hayır, buradan yazın", "deny", "handoff_consent", {},
     {"handoff_consent": False, "handoff_name": None, "requested_slot": None}, []),
    # A yes with more words the classifier missed, and a name instead of a yes (issue 21, round 4).
    ("olur, bilgilerimi vereyim", "inform", "handoff_consent", {},
     {"handoff_consent": True, "requested_slot": "handoff_contact"}, []),
    ("adım Deniz Kaya", "inform", "handoff_consent", {},
     {"handoff_consent": True, "handoff_name": "Deniz Kaya", "requested_slot": "handoff_contact"}, []),
    ("0532 123 45 67", "inform", "handoff_consent", {},
     {"handoff_consent": True, "handoff_contact": "+905321234567", "requested_slot": None}, []),
    ("belki", "nlu_fallback", "handoff_consent", {},
     {"handoff_consent": None, "requested_slot": "handoff_consent"}, ["utter_consent_unclear"]),
    ("ayse@", "inform", "handoff_contact", {"handoff_consent": True},
     {"handoff_contact": None, "requested_slot": "handoff_contact"}, ["utter_invalid_contact"]),
    ("@ayse_yilmaz", "deny", "handoff_contact", {"handoff_consent": True},
     {"handoff_contact": "@ayse_yilmaz", "requested_slot": None}, []),
    ("hayır", "deny", "handoff_contact", {"handoff_consent": True},
     {"handoff_consent": False, "handoff_name": None, "handoff_refused": True, "handoff_contact": None,
      "requested_slot": None}, []),
])
def test_handoff_form_reads_each_answer(monkeypatch, text, intent, requested, slots, expected, said):
    values, responses = _run_form(_handoff_tracker(text, intent, requested, slots), monkeypatch)
    assert values == expected and responses == said


def test_handoff_form_activation_asks_consent_or_skips_when_a_ticket_is_open(monkeypatch, tmp_path):
    tracker = _handoff_tracker("/request_human", "request_human", answered=False)
    assert _run_form(tracker, monkeypatch) == ({"requested_slot": "handoff_consent"}, [])
    open_ticket = TicketStore(f"sqlite:///{tmp_path}/a.db", spool_dir=tmp_path / "sp").create(draft())
    assert _run_form(tracker, monkeypatch, open_ticket) == ({"requested_slot": None}, [])


def test_ticket_draft_from_the_conversation():
    from rasa_sdk import Tracker

    from actions.handoff import build_draft

    events = [
        {"event": "user", "text": "70B full fine-tune, e-postam a@b.io", "timestamp": 1.0, "input_channel": "telegram",
         "parse_data": {"intent": {"name": "estimate"}}},
        {"event": "bot", "text": "Tek kart yetmiyor; teklif ister misiniz?", "timestamp": 2.0},
        {"event": "user", "text": "/request_quote", "timestamp": 3.0, "input_channel": "telegram",
         "parse_data": {"intent": {"name": "request_quote"}}},
        {"event": "user", "text": "evet", "timestamp": 4.0, "input_channel": "telegram",
         "parse_data": {"intent": {"name": "affirm"}}},
    ]
    estimate = {"per_gpu_gib": 610.0, "best_card": None, "fitting_cards": [], "needs_quote": True,
                "multi_gpu": {"card": "h100", "count": 8, "sharding": "fsdp"}}
    slots = {"language": "tr", "model_id": "llama-3.1-70b", "method": "full", "seq_len": 4096.0, "budget_usd": None,
             "gpus": None, "estimate_summary": estimate, "handoff_consent": True, "handoff_contact": "+905321234567"}
    tracker = Tracker("tg-42", slots, events[-1], events, False, None, {}, "action_listen")
    d = build_draft(tracker)
    assert (d.channel, d.language, d.trigger, d.category) == ("telegram", "tr", "request_quote", "multi-gpu")
    assert d.slots == {"model_id": "llama-3.1-70b", "method": "full", "seq_len": 4096.0}
    assert d.consent and (d.contact, d.contact_kind) == ("+905321234567", "phone")
    assert [m.role for m in d.excerpt] == ["user", "bot", "user", "user"]
    assert prioritize(d.category, d.slots, d.estimate_summary)[0] == 1
    no_consent = Tracker("tg-42", {**slots, "handoff_consent": False}, events[-1], events, False, None, {},
                         "action_listen")
    assert build_draft(no_consent).contact is None


def test_a_handoff_after_misunderstood_turns_is_a_technical_ticket():
    from rasa_sdk import Tracker

    from actions.handoff import build_draft

    events = [
        {"event": "user", "text": "xyz qwe", "timestamp": 1.0, "parse_data": {"intent": {"name": "nlu_fallback"}}},
        {"event": "action", "name": "action_default_fallback"},
        {"event": "user", "text": "asdf", "timestamp": 2.0, "parse_data": {"intent": {"name": "nlu_fallback"}}},
        {"event": "action", "name": "action_default_fallback"},
        {"event": "user", "text": "/request_human", "timestamp": 3.0,
         "parse_data": {"intent": {"name": "request_human"}}},
    ]
    slots = {"language": "fa", "failed_turns": 2.0, "handoff_consent": False}
    d = build_draft(Tracker("w-1", slots, events[-1], events, False, None, {}, "action_listen"))
    assert (d.trigger, d.category, d.language) == ("fallback", "technical", "fa")
    assert prioritize(d.category, d.slots, d.estimate_summary) == (3, ["technical_question"])


def test_conversation_address_is_never_masked():
    """A numeric Telegram chat id or random session id can pass an ID-number checksum; staff replies need it."""
    from bot.privacy import mask_pii
    from bot.tickets.store import build_ticket

    looks_like_an_id = "6907573131"  # a valid Iranian national code checksum: mask_pii would hide it
    assert looks_like_an_id not in mask_pii(looks_like_an_id)
    for sender in (looks_like_an_id, f"test-{looks_like_an_id}"):
        ticket = build_ticket(draft(sender_id=sender, channel="telegram"))
        assert (ticket.sender_id, ticket.channel) == (sender, "telegram")
        assert "۰۹۱۲۱۲۳۴۵۶۷" not in ticket.excerpt[0].text  # the messages are still masked
