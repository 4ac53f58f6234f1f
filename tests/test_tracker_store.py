"""RedactingSQLTrackerStore: bounded tracker per turn (checkpoint + recent turns), every event masked and written
once, the full history kept. Real SQLite and PostgreSQL databases (the default run and the cluster), Rasa's own
tracker and event classes, the project's domain.

Each simulated turn does what Rasa's MessageProcessor does with the store: get_or_create_tracker, append the
turn's events, save.
"""
from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import List

import pytest
import sqlalchemy as sa
from rasa.shared.core.domain import Domain
from rasa.shared.core.events import (ActionExecuted, ActiveLoop, BotUttered, ConversationPaused, Event,
                                     SessionStarted, SlotSet, UserUttered)

import bot.assistant.tracker_store as tracker_store
from bot.assistant.tracker_store import RedactingSQLTrackerStore

ROOT = Path(__file__).resolve().parents[1]
KEEP = 3


@pytest.fixture(scope="module")
def domain() -> Domain:
    return Domain.load(str(ROOT / "domain"))


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store(request, tmp_path, domain) -> RedactingSQLTrackerStore:
    if request.param == "sqlite":
        return RedactingSQLTrackerStore(domain=domain, dialect="sqlite", db=str(tmp_path / "tracker.db"),
                                        keep_turns=KEEP)
    return postgres_store(domain)


def postgres_store(domain: Domain) -> RedactingSQLTrackerStore:
    """PostgreSQL on 127.0.0.1 as in the cluster (trust auth); the database is created when missing, senders are new."""
    return RedactingSQLTrackerStore(domain=domain, dialect="postgresql", host="127.0.0.1", port=5432,
                                    db="advisor_store_test", username="postgres", login_db="postgres",
                                    keep_turns=KEEP)


def turn(store: RedactingSQLTrackerStore, sender: str, text: str, *events: Event) -> None:
    async def run() -> None:
        tracker = await store.get_or_create_tracker(sender, append_action_listen=False)
        tracker.update(UserUttered(text, intent={"name": "inform", "confidence": 0.9}))
        for event in events:
            tracker.update(event)
        tracker.update(BotUttered(f"reply to {text}"))
        tracker.update(ActionExecuted("action_listen"))
        await store.save(tracker)

    asyncio.run(run())


def user_texts(tracker) -> List[str]:
    return [event.text for event in tracker.events if isinstance(event, UserUttered)]


def stored_rows(store: RedactingSQLTrackerStore, sender: str) -> List[str]:
    events = store.SQLEvent.__table__
    with store.engine.connect() as conn:
        return [row[0] for row in conn.execute(sa.select(events.c.type_name).where(events.c.sender_id == sender)
                                               .order_by(events.c.id))]


def test_long_conversation_loads_a_bounded_tracker_with_the_whole_state(store):
    sender = f"long-{uuid.uuid4().hex[:8]}"
    turn(store, sender, "Merhaba", SlotSet("language", "tr"), SlotSet("budget_unlimited", None))
    turn(store, sender, "13B QLoRA", ActionExecuted("estimate_form"), ActiveLoop("estimate_form"),
         SlotSet("model_size_b", 13.0), SlotSet("method", "qlora"), SlotSet("requested_slot", "seq_len"))
    sizes = []
    for number in range(60):
        turn(store, sender, f"question {number}", SlotSet("failed_turns", float(number)))
        sizes.append(len(asyncio.run(store.retrieve(sender)).events))

    tracker = asyncio.run(store.retrieve(sender))
    texts = user_texts(tracker)
    assert len(texts) == KEEP
    assert texts == [f"question {n}" for n in range(60 - len(texts), 60)]  # the latest turns, in order
    assert max(sizes[20:]) == max(sizes[-20:]) < 12 * KEEP  # no growth with the conversation
    # The state set 60 turns ago survives the checkpoint, unset and set-to-None slots stay apart.
    full = asyncio.run(store.retrieve_full_tracker(sender))
    assert tracker.current_slot_values() == full.current_slot_values()
    assert tracker.get_slot("language") == "tr" and tracker.get_slot("method") == "qlora"
    assert tracker.slots["budget_unlimited"].has_been_set and not tracker.slots["hourly_cap"].has_been_set
    assert tracker.active_loop_name == "estimate_form" == full.active_loop_name
    assert tracker.latest_message.text == "question 59"
    # Everything is still stored, each event once.
    assert len(user_texts(full)) == 62
    assert stored_rows(store, sender).count("user") == 62


def test_each_event_is_masked_once_when_it_is_first_saved(store, monkeypatch):
    masked: List[str] = []
    original = tracker_store.redact_event

    def counting(data):
        masked.append(data.get("event"))
        return original(data)

    monkeypatch.setattr(tracker_store, "redact_event", counting)
    sender = f"mask-{uuid.uuid4().hex[:8]}"
    for number in range(40):
        turn(store, sender, f"benim numaram 0532 123 45 {number:02d}")
    assert masked.count("user") == 40  # not 40 + 39 + ... : old turns are never masked again
    full = asyncio.run(store.retrieve_full_tracker(sender))
    assert all("[PHONE]" in text and "0532" not in text for text in user_texts(full))


def test_a_new_session_after_the_checkpoint_starts_from_its_own_events(store):
    sender = f"session-{uuid.uuid4().hex[:8]}"
    turn(store, sender, "first", SlotSet("language", "fa"), SlotSet("model_size_b", 70.0))
    for number in range(3 * KEEP):
        turn(store, sender, f"q{number}")

    async def new_session() -> None:
        tracker = await store.get_or_create_tracker(sender, append_action_listen=False)
        for event in (ActionExecuted("action_session_start"), SessionStarted(), SlotSet("language", "fa"),
                      ActionExecuted("action_listen")):
            tracker.update(event)
        await store.save(tracker)

    asyncio.run(new_session())
    turn(store, sender, "again")
    tracker = asyncio.run(store.retrieve(sender))
    assert user_texts(tracker) == ["again"]
    assert tracker.get_slot("language") == "fa" and tracker.get_slot("model_size_b") is None  # not carried over


def test_a_paused_conversation_stays_paused_behind_the_checkpoint(store):
    sender = f"paused-{uuid.uuid4().hex[:8]}"
    turn(store, sender, "insan istiyorum", ConversationPaused())
    for number in range(3 * KEEP):
        turn(store, sender, f"still there {number}")
    tracker = asyncio.run(store.retrieve(sender))
    assert "insan istiyorum" not in user_texts(tracker)
    assert tracker.is_paused()


def test_a_tracker_the_store_did_not_load_is_saved_without_duplicates(store, domain):
    """Rasa's API can save a tracker it built itself; new events are found by counting, as Rasa does."""
    sender = f"api-{uuid.uuid4().hex[:8]}"
    for number in range(3 * KEEP):
        turn(store, sender, f"q{number}")
    loaded = asyncio.run(store.retrieve(sender))
    rebuilt = type(loaded).from_events(sender, list(loaded.events), domain.slots)
    rebuilt.update(BotUttered("staff reply", metadata={"staff": True}))
    asyncio.run(store.save(rebuilt))
    rows = stored_rows(store, sender)
    assert rows.count("user") == 3 * KEEP and rows[-1] == "bot"
    assert asyncio.run(store.retrieve(sender)).latest_bot_utterance.text == "staff reply"


def test_the_handoff_action_gets_the_turns_behind_the_checkpoint(store):
    """The ticket's excerpt needs more than the kept turns: the one action that reads them gets the stored events
    before the window, masked, in place of the checkpoint's state events (bot/assistant/patches/action_payload.py)."""
    from bot.assistant.patches.action_payload import with_session_history
    from rasa.shared.core.trackers import EventVerbosity

    sender = f"history-{uuid.uuid4().hex[:8]}"
    turn(store, sender, "Merhaba", SlotSet("language", "tr"))
    for number in range(20):
        turn(store, sender, f"question {number}, numaram 0532 123 45 {number:02d}")

    async def handoff_turn():
        tracker = await store.get_or_create_tracker(sender, append_action_listen=False)
        tracker.update(UserUttered("insan istiyorum", intent={"name": "request_human", "confidence": 0.9}))
        return tracker

    tracker = asyncio.run(handoff_turn()).copy()  # Rasa runs an action on a copy of the tracker
    state = tracker.current_state(EventVerbosity.ALL)
    sent = with_session_history(tracker, state)
    recent = [e["text"] for e in state["events"] if e["event"] == "user"]
    texts = [e["text"] for e in sent["events"] if e["event"] == "user"]
    assert len(recent) == KEEP + 1 and len(texts) > 12
    assert texts[-len(recent):] == recent and texts[-1] == "insan istiyorum"  # in order, nothing twice
    assert texts[-14] == "question 7, numaram [PHONE]"  # from the store: masked
    assert sent["events"][0]["event"] != "session_started"  # a slice of stored turns, not the checkpoint's state
    assert sent["slots"] == state["slots"]
    # A conversation that fits in its window is sent as it is.
    short = f"short-{uuid.uuid4().hex[:8]}"
    turn(store, short, "Merhaba")
    tracker = asyncio.run(store.retrieve(short))
    assert with_session_history(tracker, tracker.current_state(EventVerbosity.ALL))["events"] == \
        tracker.current_state(EventVerbosity.ALL)["events"]


def test_an_existing_events_table_gets_the_index_a_turn_reads_by(tmp_path, domain):
    """A database made by an earlier version (Rasa's table, indexed by sender only) gets the (sender_id, id) index
    that finds a conversation's newest events without reading all of them."""
    path = tmp_path / "old.db"
    with sa.create_engine(f"sqlite:///{path}").begin() as conn:
        conn.execute(sa.text("CREATE TABLE events (id INTEGER PRIMARY KEY, sender_id VARCHAR(255) NOT NULL, "
                             "type_name VARCHAR(255) NOT NULL, timestamp FLOAT, intent_name VARCHAR(255), "
                             "action_name VARCHAR(255), data TEXT)"))
        conn.execute(sa.text("CREATE INDEX ix_events_sender_id ON events (sender_id)"))
    store = RedactingSQLTrackerStore(domain=domain, dialect="sqlite", db=str(path), keep_turns=KEEP)
    indexes = {tuple(index["column_names"]) for index in sa.inspect(store.engine).get_indexes("events")}
    assert ("sender_id", "id") in indexes
    with store.engine.connect() as conn:
        plan = " ".join(str(row) for row in conn.execute(sa.text(
            "EXPLAIN QUERY PLAN SELECT id, data FROM events WHERE sender_id = 'x' AND id > 5 ORDER BY id")))
    assert "ix_events_sender_id_id" in plan


@pytest.mark.postgres
def test_postgresql_prepares_the_load_once_per_connection(domain):
    """On PostgreSQL the load is a prepared statement (parsed and planned once per connection, not every turn); a
    connection the pool replaces (the server restarted, say) prepares it again."""
    store = postgres_store(domain)
    sender = f"prepared-{uuid.uuid4().hex[:8]}"
    for number in range(KEEP + 3):
        turn(store, sender, f"q{number}", SlotSet("language", "tr"))
    with store.reader.connect() as conn:
        prepared = [row[0] for row in conn.execute(sa.text("SELECT statement FROM pg_prepared_statements"))]
    assert len(prepared) == 1 and prepared[0].startswith("PREPARE advisor_load AS")
    store.reader.dispose()
    turn(store, sender, "after the reconnect")
    tracker = asyncio.run(store.retrieve(sender))
    assert user_texts(tracker)[-1] == "after the reconnect" and tracker.get_slot("language") == "tr"


@pytest.mark.postgres
def test_connections_the_database_closed_are_replaced_without_losing_a_turn(domain):
    """PostgreSQL ends the store's idle pooled connections (a restart, an administrator): the next load and save run
    on new connections, and every turn is kept (Rasa would keep a failed save in memory only)."""
    import psycopg2

    store = postgres_store(domain)
    sender = f"reconnect-{uuid.uuid4().hex[:8]}"
    turn(store, sender, "first", SlotSet("model_id", "llama-3.1-8b"))
    for number in range(KEEP + 1):
        turn(store, sender, f"q{number}")

    def end_store_connections() -> int:
        with psycopg2.connect("postgresql://postgres@127.0.0.1:5432/postgres") as admin, admin.cursor() as cur:
            cur.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE datname = 'advisor_store_test' AND pid <> pg_backend_pid()")
            return len(cur.fetchall())

    assert end_store_connections() >= 2  # the reader's and the writer's
    turn(store, sender, "after the restart")
    assert end_store_connections() >= 1
    turn(store, sender, "and again")
    tracker = asyncio.run(store.retrieve(sender))
    assert user_texts(tracker)[-2:] == ["after the restart", "and again"]
    assert tracker.get_slot("model_id") == "llama-3.1-8b"
    assert stored_rows(store, sender).count("user") == KEEP + 4
