"""A Rasa SQL tracker store that masks personal data before any event is persisted (KVKK), and whose work per turn
does not grow with the length of a conversation.

endpoints.yml:

    tracker_store:
      type: bot.assistant.tracker_store.RedactingSQLTrackerStore
      dialect: sqlite            # or postgresql with url/port/db/username/password
      db: var/tracker.db
      keep_turns: 2              # optional: finished user turns kept after the checkpoint (at least 2)

Masking: user and bot texts, parse data (text, entity values), slot values and message metadata are masked with
bot.privacy before they reach the `events` table. Only the events that are new in a turn are masked and written
(each event once, when it is first saved). The conversation in memory is unchanged for the turn in progress, so the
bot and its actions still see what the user typed (e.g. the contact a user consents to give); from the next turn on,
the tracker is read back masked. Loading this module also masks personal data in every log record of the Rasa
process (user messages appear in Rasa's debug log).

Bounded work per turn: Rasa's SQLTrackerStore loads every event of the session on every message, and everything
downstream (rule matching, the tracker JSON sent to the action server with each custom action, saving) then works on
the whole history, so reply time grew with the conversation (issue 10: 0.15 s at the start, 0.65 s after 259 turns).
Here the store keeps, per conversation, a checkpoint (table `tracker_checkpoints`): the state of the conversation
before its recent turns, written as the events that recreate it (the slots that were set, the active form, a pause).
`retrieve` reads the checkpoint and only the events after it, so the tracker Rasa works with holds the last
`keep_turns` finished user turns and the one in progress: `save` moves the checkpoint forward by a turn each time
(replaying one turn onto the previous state: about 0.5 ms). Every event stays in the `events` table: the staff page,
`GET /conversations/<id>/tracker` and a resumed socket.io session read the full history (`retrieve_full_tracker`).
The recent turns are enough for what looks back every turn: rules and memoization (3 states), the previous turn's
offer or answer. The one action that reads further back, the handoff ticket (its trigger and its 12-message excerpt,
bot/tickets/store.py), gets the stored events before the window with its call (`session_history`,
bot/assistant/patches/action_payload.py): one query on a handoff turn instead of longer trackers on every turn.
A new session (SessionStarted after the checkpoint) starts from its own events, as in Rasa.

It does not stream events to an event broker: configure none, or they would carry unmasked texts.
"""
from __future__ import annotations

import json
import logging
import os
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Text, Tuple

os.environ.setdefault("SQLALCHEMY_SILENCE_UBER_WARNING", "1")

import sqlalchemy as sa  # noqa: E402
from rasa.core.brokers.broker import EventBroker  # noqa: E402
from rasa.core.tracker_store import SQLTrackerStore, create_engine_kwargs  # noqa: E402
from rasa.shared.core.constants import ACTION_LISTEN_NAME, ACTION_SESSION_START_NAME  # noqa: E402
from rasa.shared.core.domain import Domain  # noqa: E402
from rasa.shared.core.events import (ActionExecuted, ActiveLoop, ConversationPaused, Event,  # noqa: E402
                                     LoopInterrupted, SessionStarted, SlotSet, UserUttered)
from rasa.shared.core.trackers import DialogueStateTracker  # noqa: E402
from rasa.shared.nlu.constants import INTENT_NAME_KEY  # noqa: E402
from sqlalchemy.orm import declarative_base  # noqa: E402

from bot.privacy import install_log_redaction, mask_data  # noqa: E402

logger = logging.getLogger(__name__)

install_log_redaction()

# Structural fields that never hold what a user typed; masking them could only corrupt the event.
_STRUCTURAL_KEYS = ("event", "timestamp", "name", "policy", "confidence", "intent", "intent_ranking",
                    "message_id", "input_channel", "action_text", "rasa_only", "hide_rule_turn", "action_name",
                    "start", "end", "extractor", "entity", "processors", "response_selector", "key")

# Look-back of every turn: the previous turn's offer or answer (actions/language.py, actions/common.py) and the
# rules and memoization (3 states, config.yml). Each kept turn adds to every turn (the tracker built, the JSON sent to
# the action server with each call, rule matching over the states): measured on this machine class, 300 what-ifs
# into one conversation against turn 1 of a fresh one: five kept turns +23/+24 %, three +13/+16 %, two +1/+8 %
# (issue 10). The handoff ticket, which looks further back, reads the earlier events from the store.
DEFAULT_KEEP_TURNS = 2
# Stored events given to an action that reads the earlier conversation: the 12-message excerpt and the trigger of a
# handoff need at most about a dozen turns of about six events.
EARLIER_EVENTS_LIMIT = 80
# Attribute on a tracker loaded here: which of its events are stored, and under which ids (see _Loaded).
_LOADED_ATTR = "_redacting_store_loaded"

# The store of this process (Rasa creates one), for the actions that read the earlier conversation.
_latest_store: Optional["weakref.ReferenceType[RedactingSQLTrackerStore]"] = None

_CheckpointBase: Any = declarative_base()  # SQLAlchemy 1.4's declarative base has no static type


class TrackerCheckpoint(_CheckpointBase):
    """Per conversation: the events that recreate its state up to `upto_id` (an `events.id`), masked."""

    __tablename__ = "tracker_checkpoints"
    sender_id = sa.Column(sa.String(255), primary_key=True)
    upto_id = sa.Column(sa.Integer, nullable=False)
    events = sa.Column(sa.Text, nullable=False)


# A turn loads a conversation's events after its checkpoint's id. Rasa's events table is indexed by sender only, so
# PostgreSQL read every event the conversation ever had to keep the newest few: work that grew with the conversation
# (issue 10's turn 300). On (sender_id, id) the newest rows are found directly. Created at start-up when missing: on a
# large existing table that takes a while, and PostgreSQL holds new events back until it is built.
_EVENTS_AFTER_CHECKPOINT = sa.Index("ix_events_sender_id_id", SQLTrackerStore.SQLEvent.__table__.c.sender_id,
                                    SQLTrackerStore.SQLEvent.__table__.c.id)


def _load_statement() -> Any:
    """A turn's one read: the checkpoint as a row without an event id, then the events after its `upto_id`."""
    checkpoints, events = TrackerCheckpoint.__table__, SQLTrackerStore.SQLEvent.__table__
    sender = sa.bindparam("sender", type_=sa.String)
    upto = sa.select(checkpoints.c.upto_id).where(checkpoints.c.sender_id == sender).scalar_subquery()
    checkpoint = sa.select(sa.cast(sa.null(), sa.Integer).label("id"), checkpoints.c.events.label("data")) \
        .where(checkpoints.c.sender_id == sender)
    after = sa.select(events.c.id, events.c.data) \
        .where(events.c.sender_id == sender, events.c.id > sa.func.coalesce(upto, sa.literal_column("0")))
    return sa.union_all(checkpoint, after).order_by(sa.literal_column("id"))


_LOAD = _load_statement()
_LOAD_PREPARED = "advisor_load"  # its name as a prepared statement on a PostgreSQL connection

# In _Loaded.ids: an event written by `save` whose id was not read back.
_STORED = -1


@dataclass
class _Loaded:
    """What `retrieve` knows about the tracker it built: event i of the tracker is stored with id `ids[i]` (None for
    the checkpoint's own events, _STORED when saved here without reading its id back), and user turns before
    `window_start` are already behind the checkpoint."""

    ids: List[Optional[int]] = field(default_factory=list)
    window_start: int = 0


def redact_event(data: Dict[str, Any]) -> Dict[str, Any]:
    """A copy of one serialised event with personal data masked in every free-text field."""
    return mask_data(data, skip_keys=_STRUCTURAL_KEYS)


def state_events(tracker: DialogueStateTracker) -> List[Event]:
    """Events that recreate `tracker`'s state, as a new session with carried-over slots does: session start, every
    slot that was set (also to None: rule matching tells set from unset), the active form, a pause."""
    at = tracker.events[-1].timestamp if tracker.events else None
    events: List[Event] = [ActionExecuted(ACTION_SESSION_START_NAME, timestamp=at), SessionStarted(timestamp=at)]
    events += [SlotSet(slot.name, slot.value, timestamp=at) for slot in tracker.slots.values() if slot.has_been_set]
    if tracker.active_loop_name:
        events.append(ActiveLoop(tracker.active_loop_name, timestamp=at))
        if tracker.active_loop.is_interrupted:
            events.append(LoopInterrupted(True, timestamp=at))
    if tracker.is_paused():
        events.append(ConversationPaused(timestamp=at))
    return events


def _once_more_if_disconnected(work: Callable[[], Any]) -> Any:
    """`work()`, and once more if it failed on a connection the database had closed (the server restarted, an
    administrator ended it): SQLAlchemy then replaces every pooled connection, and the second attempt gets a new
    one. Rasa would otherwise keep the turn only in memory when a save fails, or start a blank conversation when a
    load fails (issue 12: a connection left idle in the pool across a database restart)."""
    try:
        return work()
    except sa.exc.DBAPIError as error:
        if not error.connection_invalidated:
            raise
        logger.warning("Conversation store connection lost (%s); trying once more on a new one",
                       type(error.orig).__name__)
        return work()


def _latest_session(stored: List[Tuple[int, Dict[str, Any]]]) -> Optional[List[Tuple[int, Dict[str, Any]]]]:
    """The stored (id, event) of the latest session among `stored`, as SQLTrackerStore._event_query cuts them: the
    events stamped at or after the latest SessionStarted. None when no session starts among them."""
    starts = [event for _, event in stored if event.get("event") == SessionStarted.type_name]
    if not starts:
        return None
    session_start = starts[-1].get("timestamp") or 0
    return [(row_id, event) for row_id, event in stored if (event.get("timestamp") or 0) >= session_start]


def turn_start(events: Sequence[Event], user_index: int) -> int:
    """Index where the turn of the user message at `user_index` begins (its preceding action_listen included)."""
    before = events[user_index - 1] if user_index > 0 else None
    if isinstance(before, ActionExecuted) and before.action_name == ACTION_LISTEN_NAME:
        return user_index - 1
    return user_index


def _sqlite_write_ahead_log(connection: Any, _record: Any) -> None:
    """SQLite (development, tests): a write-ahead log synced at checkpoints, not an fsync of the journal per turn
    (commit and closing the connection were 18 % of the Rasa server's CPU time in a profile under load). A crash of
    the process loses nothing; a power cut can lose the last turns. PostgreSQL, the production store, is not
    affected."""
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


class RedactingSQLTrackerStore(SQLTrackerStore):
    """SQLTrackerStore (SQLite or PostgreSQL) that writes only masked events and loads a bounded tracker."""

    engine: Any  # set by SQLTrackerStore.__init__ (replaced below for SQLite); rasa leaves it without a type

    def __init__(self, domain: Optional[Domain] = None, dialect: Text = "sqlite", host: Optional[Text] = None,
                 port: Optional[int] = None, db: Text = "rasa.db", username: Optional[Text] = None,
                 password: Optional[Text] = None,
                 event_broker: Optional[EventBroker] = None, login_db: Optional[Text] = None,
                 query: Optional[Dict] = None, keep_turns: int = DEFAULT_KEEP_TURNS, **kwargs: Any) -> None:
        if event_broker is not None:
            logger.warning("RedactingSQLTrackerStore does not stream events to the event broker (unmasked texts)")
        if dialect == "sqlite" and db and os.path.dirname(db):
            os.makedirs(os.path.dirname(db), exist_ok=True)
        super().__init__(domain, dialect, host, port, db, username, password, None, login_db, query, **kwargs)
        global _latest_store
        _latest_store = weakref.ref(self)
        self.keep_turns = max(2, int(keep_turns))  # one turn back at least: the previous offer, answer
        if dialect == "sqlite":
            self.engine.dispose()
            # SQLAlchemy 1.4 gives a file database NullPool: a new connection per turn, and closing the last one
            # checkpoints the write-ahead log. A small pool keeps them open (one thread uses one at a time).
            self.engine = sa.create_engine(self.engine.url, poolclass=sa.pool.QueuePool, pool_size=2,
                                           connect_args={"check_same_thread": False})
            sa.event.listen(self.engine, "connect", _sqlite_write_ahead_log)
            self.sessionmaker = sa.orm.sessionmaker(bind=self.engine)
        # Reads without BEGIN and ROLLBACK around them; a turn's reads and writes are one conversation's, serialised
        # by the lock store. Their own engine, whose connections are in autocommit from the start: the same engine
        # with an AUTOCOMMIT execution option switched each connection back on its return to the pool, one more
        # statement (SET default_transaction_isolation) per turn. SQLite's pooled connections stay as they are:
        # switching its isolation level runs a PRAGMA each time a connection goes back to the pool.
        self.reader = (sa.create_engine(self.engine.url, isolation_level="AUTOCOMMIT",
                                        **create_engine_kwargs(self.engine.url))
                       if dialect != "sqlite" else self.engine)
        try:
            _CheckpointBase.metadata.create_all(self.engine)
            _EVENTS_AFTER_CHECKPOINT.create(self.engine, checkfirst=True)
        except (sa.exc.OperationalError, sa.exc.ProgrammingError, sa.exc.IntegrityError) as error:
            # Two Rasa instances starting on a fresh database race to create the table; one of them wins.
            logger.warning("tracker_checkpoints not created here (%s); another instance may have created it", error)

    # --- loading -------------------------------------------------------------------------------------------------
    # SQLAlchemy Core statements, not the ORM: the ORM's unit of work, identity map and query building were a fifth
    # of the Rasa server's busy time on advice turns in a py-spy profile (issue 10).

    def _load_rows(self, connection: Any, sender_id: Text) -> List[Tuple[Optional[int], str]]:
        """(event id, data) of the conversation's checkpoint (id None) and of its events after it. On PostgreSQL the
        statement is prepared once per connection (`PREPARE advisor_load`): parsing and planning it each turn took
        three quarters of PostgreSQL's CPU for it (0.165 ms per load as plain SQL, 0.040 ms prepared:
        bench/bench_pg_load.py, bench/results/pg_load.md)."""
        if connection.dialect.name != "postgresql":
            return [tuple(row) for row in connection.execute(_LOAD, {"sender": sender_id})]
        # The pooled DBAPI connection's `info` lives as long as that connection: a new one prepares again. Run through
        # SQLAlchemy (exec_driver_sql), so a lost connection is noticed and replaced as for any other statement.
        info = connection.connection.info
        if not info.get(_LOAD_PREPARED):
            sql = str(_LOAD.compile(dialect=connection.dialect)).replace("%(sender)s", "$1")
            if "%(" in sql:
                raise ValueError("the prepared load takes its values as the named parameter `sender` only")
            connection.exec_driver_sql(f"PREPARE {_LOAD_PREPARED} AS {sql}")
            info[_LOAD_PREPARED] = True
        return [tuple(row) for row in connection.exec_driver_sql(f"EXECUTE {_LOAD_PREPARED}(%s)", (sender_id,))]

    def _load(self, connection: Any, sender_id: Text
              ) -> Tuple[List[Dict[str, Any]], List[Tuple[int, Dict[str, Any]]]]:
        """The checkpoint's events and the stored (id, event) after it, from the latest session start on."""
        # One statement, one round trip: the checkpoint as a row without an event id, then the events after it.
        rows = self._load_rows(connection, sender_id)
        checkpoint = next((data for row_id, data in rows if row_id is None), None)
        stored = [(row_id, json.loads(data)) for row_id, data in rows if row_id is not None]
        prefix = json.loads(checkpoint) if checkpoint else []
        session = _latest_session(stored)
        if session is not None:  # a session started after the checkpoint starts from its own events
            return [], session
        return prefix, stored

    async def retrieve(self, sender_id: Text) -> Optional[DialogueStateTracker]:
        """The tracker of the latest session: the checkpoint's state and the recent turns."""
        def load() -> Tuple[List[Dict[str, Any]], List[Tuple[int, Dict[str, Any]]]]:
            with self.reader.connect() as connection:
                return self._load(connection, sender_id)

        prefix, stored = _once_more_if_disconnected(load)
        if not self.domain or not (prefix or stored):
            return None
        tracker = DialogueStateTracker.from_dict(sender_id, prefix + [event for _, event in stored],
                                                 self.domain.slots)
        setattr(tracker, _LOADED_ATTR, _Loaded(ids=[None] * len(prefix) + [row_id for row_id, _ in stored]))
        return tracker

    def latest_stored(self, sender_id: Text, limit: int) -> List[Dict[str, Any]]:
        """The last `limit` stored events (masked) of the conversation, from the latest session start among them."""
        events = self.SQLEvent.__table__
        with self.reader.connect() as connection:
            rows = connection.execute(sa.select(events.c.id, events.c.data).where(events.c.sender_id == sender_id)
                                      .order_by(events.c.id.desc()).limit(limit)).all()
        found = [(row_id, json.loads(data)) for row_id, data in reversed(rows)]
        return [event for _, event in (_latest_session(found) or found)]

    # --- saving --------------------------------------------------------------------------------------------------

    async def save(self, tracker: DialogueStateTracker) -> None:
        """Write the events that are new since the tracker was loaded (masked), then move the checkpoint forward
        when more than keep_turns finished user turns are held."""
        setattr(tracker, _LOADED_ATTR, _once_more_if_disconnected(lambda: self._save(tracker)))
        logger.debug("Tracker with sender_id '%s' stored to database (masked)", tracker.sender_id)

    def _save(self, tracker: DialogueStateTracker) -> _Loaded:
        """One attempt at `save` in one transaction; what the tracker's bookkeeping becomes when it commits (a copy:
        a rolled-back attempt leaves the tracker's own as it was, so a second attempt writes the same events)."""
        known: Optional[_Loaded] = getattr(tracker, _LOADED_ATTR, None)
        events = list(tracker.events)
        with self.engine.begin() as connection:
            if known is None:  # a tracker this store did not build (new conversation, Rasa API): count as Rasa does
                prefix, stored = self._load(connection, tracker.sender_id)
                loaded = _Loaded(ids=[None] * len(prefix) + [row_id for row_id, _ in stored])
            else:
                loaded = _Loaded(ids=list(known.ids), window_start=known.window_start)
            rows = []
            for event in events[len(loaded.ids):]:
                data = redact_event(event.as_dict())
                rows.append({"sender_id": tracker.sender_id, "type_name": event.type_name,
                             "timestamp": data.get("timestamp"),
                             "intent_name": data.get("parse_data", {}).get("intent", {}).get(INTENT_NAME_KEY),
                             "action_name": data.get("name"), "data": json.dumps(data)})
            if rows:
                connection.execute(self.SQLEvent.__table__.insert(), rows)
            # Stored; their ids are read with the next load (the checkpoint only ever moves over earlier turns).
            loaded.ids.extend([_STORED] * len(rows))
            self._move_checkpoint(connection, tracker.sender_id, events, loaded)
        return loaded

    def _move_checkpoint(self, connection: Any, sender_id: Text, events: List[Event], loaded: _Loaded) -> None:
        user_turns = [i for i, event in enumerate(events)
                      if isinstance(event, UserUttered) and i >= loaded.window_start]
        if len(user_turns) <= self.keep_turns:
            return
        cut = turn_start(events, user_turns[-self.keep_turns])
        before_cut = loaded.ids[:cut]
        stored_before_cut = [row_id for row_id in before_cut if row_id is not None]
        if not stored_before_cut or _STORED in before_cut:
            return
        state = DialogueStateTracker.from_events(sender_id, events[:cut], self.domain.slots)
        values = {"upto_id": max(stored_before_cut),
                  "events": json.dumps([redact_event(e.as_dict()) for e in state_events(state)])}
        checkpoints = TrackerCheckpoint.__table__
        updated = connection.execute(checkpoints.update().where(checkpoints.c.sender_id == sender_id).values(**values))
        if not updated.rowcount:
            connection.execute(checkpoints.insert().values(sender_id=sender_id, **values))
        loaded.window_start = cut



def session_history(tracker: DialogueStateTracker, events: List[Dict[str, Any]],
                    limit: int = EARLIER_EVENTS_LIMIT) -> List[Dict[str, Any]]:
    """`events` (the tracker's, serialised) with the turns behind the checkpoint: the latest `limit` stored events of
    the session (masked), then the tracker's events that are not stored yet (the turn in progress). The checkpoint's
    state events are left out: the slots travel as slots. `events` as they are when this process has no store."""
    store = _latest_store() if _latest_store is not None else None
    stored = store.latest_stored(tracker.sender_id, limit) if store is not None else []
    if not stored:
        return events
    newest = max(event.get("timestamp") or 0 for event in stored)
    return stored + [event for event in events if (event.get("timestamp") or 0) > newest]
