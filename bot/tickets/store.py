"""The ticket store: SQLAlchemy (SQLite file by default, PostgreSQL by `TICKETS_DB_URL`) with a durable spool.

- The schema is created on first successful access, so a fresh database needs no migration step.
- `create()` never loses a ticket: when the database cannot be reached the ticket goes to the spool
  (`TICKETS_SPOOL_DIR`, default `var/ticket-spool/`) with its final number, and is written on the next access or by
  the periodic flusher (`start_periodic_flush`).
- Personal data is masked here, on the way in, in everything but the consented contact: callers cannot forget it.
"""
from __future__ import annotations

import logging
import os
import threading
from datetime import datetime
from pathlib import Path
from typing import Callable, Iterable, List, Optional

from bot.privacy import mask_data, mask_pii
from bot.tickets import db
from bot.tickets.models import STATUSES, Message, Note, Ticket, TicketDraft, new_ticket_id, utcnow
from bot.tickets.priority import prioritize
from bot.tickets.spool import Spool

from pydantic import ValidationError  # noqa: E402
import sqlalchemy as sa  # noqa: E402  (db sets the SQLAlchemy warning switch first)
import sqlalchemy.exc as sa_exc  # noqa: E402
from sqlalchemy.orm import sessionmaker  # noqa: E402

logger = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DB_PATH = ROOT / "var" / "tickets.db"
DEFAULT_SPOOL_DIR = ROOT / "var" / "ticket-spool"
EXCERPT_MESSAGES = 12  # enough context for staff without copying whole conversations
EXCERPT_CHARS = 600

# Everything that means "the database is not there right now" (as opposed to a bug in our query).
UNAVAILABLE = (sa_exc.OperationalError, sa_exc.InterfaceError, sa_exc.DisconnectionError, sa_exc.TimeoutError,
               OSError)


class TicketNotFound(KeyError):
    pass


class StoreUnavailable(RuntimeError):
    """The database is down and the operation cannot be answered from the spool."""


def default_db_url() -> str:
    return os.environ.get("TICKETS_DB_URL") or f"sqlite:///{DEFAULT_DB_PATH}"


def default_spool_dir() -> Path:
    return Path(os.environ.get("TICKETS_SPOOL_DIR") or DEFAULT_SPOOL_DIR)


def _engine_for(url: str, connect_timeout: float) -> sa.engine.Engine:
    if url.startswith("sqlite"):
        if url == f"sqlite:///{DEFAULT_DB_PATH}":
            DEFAULT_DB_PATH.parent.mkdir(parents=True, exist_ok=True)
        # Several processes (action server, staff page, CLI) share the file: wait for locks instead of failing.
        return sa.create_engine(url, future=True, connect_args={"timeout": 15, "check_same_thread": False})
    connect_args = {"connect_timeout": max(1, int(connect_timeout))} if url.startswith("postgres") else {}
    return sa.create_engine(url, future=True, pool_pre_ping=True, connect_args=connect_args)


CONVERSATION_KEYS = ("channel", "sender_id", "language", "category", "trigger")


def build_ticket(draft: TicketDraft, now: Optional[datetime] = None) -> Ticket:
    """Number, priority and masking for a new ticket."""
    now = now or utcnow()
    priority, reasons = prioritize(draft.category, draft.slots, draft.estimate_summary)
    data = draft.dict()
    contact = data.pop("contact") if draft.consent else None
    contact_kind = data.pop("contact_kind") if draft.consent and contact else None
    data.pop("contact", None)
    data.pop("contact_kind", None)
    # The conversation's address is how staff replies reach the customer: a numeric Telegram chat id or a random
    # session id can look like an ID number and must not be masked.
    data = mask_data(data, skip_keys=CONVERSATION_KEYS)
    data["excerpt"] = [
        Message(role=m["role"], text=mask_pii(m["text"])[:EXCERPT_CHARS], at=m.get("at"))
        for m in data["excerpt"][-EXCERPT_MESSAGES:]
    ]
    return Ticket(**data, id=new_ticket_id(now), created_at=now, updated_at=now, priority=priority,
                  priority_reasons=reasons, contact=contact, contact_kind=contact_kind)


def _row_from_ticket(t: Ticket) -> db.TicketRow:
    j = t.to_json_dict()
    row = db.TicketRow(
        id=t.id, created_at=t.created_at, updated_at=t.updated_at, channel=t.channel, sender_id=t.sender_id,
        language=t.language, category=t.category, trigger=t.trigger, priority=t.priority,
        priority_reasons=t.priority_reasons, status=t.status, slots=j["slots"], estimate_summary=j["estimate_summary"],
        cards=t.cards, excerpt=j["excerpt"], consent=t.consent, contact=t.contact, contact_kind=t.contact_kind)
    row.notes = [db.NoteRow(at=n.at, author=n.author, kind=n.kind, text=n.text) for n in t.notes]
    return row


def _ticket_from_row(row: db.TicketRow) -> Ticket:
    return Ticket(
        id=row.id, created_at=row.created_at, updated_at=row.updated_at, channel=row.channel, sender_id=row.sender_id,
        language=row.language, category=row.category, trigger=row.trigger, priority=row.priority,
        priority_reasons=row.priority_reasons or [], status=row.status, slots=row.slots or {},
        estimate_summary=row.estimate_summary, cards=row.cards or [], excerpt=row.excerpt or [],
        consent=bool(row.consent), contact=row.contact, contact_kind=row.contact_kind,
        notes=[Note(at=n.at, author=n.author, kind=n.kind, text=n.text) for n in row.notes])


class TicketStore:
    def __init__(self, url: Optional[str] = None, spool_dir: Optional[os.PathLike | str] = None,
                 connect_timeout: float = 3.0,
                 on_created: Optional[Callable[[Ticket], None]] = None):
        self.url = url or default_db_url()
        self.spool = Spool(spool_dir or default_spool_dir())
        self.engine = _engine_for(self.url, connect_timeout)
        self._sessions = sessionmaker(bind=self.engine, future=True, expire_on_commit=False)
        self._schema_ready = False
        self._lock = threading.Lock()
        self.on_created = on_created

    # ------------------------------------------------------------ plumbing

    def _ensure_schema(self) -> None:
        if not self._schema_ready:
            with self._lock:
                if not self._schema_ready:
                    db.Base.metadata.create_all(self.engine)
                    self._schema_ready = True

    def _session(self):
        self._ensure_schema()
        return self._sessions()

    def is_available(self) -> bool:
        try:
            with self._session() as session:
                session.execute(sa.text("SELECT 1"))
            return True
        except UNAVAILABLE:
            return False

    def close(self) -> None:
        self.engine.dispose()

    # ------------------------------------------------------------ spool

    def flush_spool(self) -> int:
        """Write spooled tickets to the database; returns how many were written. Raises when the DB is down."""
        if not self.spool.pending():
            return 0
        written = 0
        with self.spool.exclusive():
            for path, payload in self.spool.items():
                try:
                    ticket = Ticket.parse_obj({**payload, "spooled": False})
                except ValidationError as err:
                    self.spool.set_aside(path, f"not a ticket: {err}")
                    continue
                with self._session() as session:
                    existing = session.get(db.TicketRow, ticket.id)
                    if existing is not None and (existing.sender_id, existing.created_at) != (
                            ticket.sender_id, ticket.created_at):
                        ticket = self._renumber(session, ticket)
                        existing = None
                    if existing is None:  # else: written before a crash, the file just outlived the commit
                        session.add(_row_from_ticket(ticket))
                        session.commit()
                        written += 1
                self.spool.remove(path)
        if written:
            logger.info("Wrote %d spooled ticket(s) to the database", written)
        return written

    @staticmethod
    def _renumber(session, ticket: Ticket) -> Ticket:
        """Two tickets drew the same number while one waited in the spool (about once in years): the spooled one
        gets a fresh number and a note with the number its customer was given, so staff can still find it."""
        while True:
            new_id = new_ticket_id(ticket.created_at)
            if session.get(db.TicketRow, new_id) is None:
                break
        logger.error("Spooled ticket %s clashes with a stored ticket; stored as %s", ticket.id, new_id)
        note = Note(at=utcnow(), author="system", kind="note",
                    text=f"Number given to the customer: {ticket.id} (renumbered: the number was taken)")
        return ticket.copy(update={"id": new_id, "notes": [*ticket.notes, note]})

    def try_flush_spool(self) -> int:
        try:
            return self.flush_spool()
        except UNAVAILABLE as err:
            logger.warning("Ticket database still unavailable, %d ticket(s) stay spooled: %s",
                           len(self.spool), _short(err))
            return 0

    def start_periodic_flush(self, interval_s: float = 30.0) -> threading.Event:
        """Background flusher (daemon thread); set the returned event to stop it."""
        stop = threading.Event()

        def loop() -> None:
            while not stop.wait(interval_s):
                self.try_flush_spool()

        threading.Thread(target=loop, name="ticket-spool-flusher", daemon=True).start()
        return stop

    # ------------------------------------------------------------ tickets

    def create(self, draft: TicketDraft) -> Ticket:
        """Store a new ticket; when the database is down it is spooled (ticket.spooled is True) instead."""
        ticket = build_ticket(draft)
        try:
            for _ in range(5):
                try:
                    with self._session() as session:
                        session.add(_row_from_ticket(ticket))
                        session.commit()
                    break
                except sa_exc.IntegrityError:  # number already taken (see models._ID_RANDOM_CHARS): draw another
                    ticket = ticket.copy(update={"id": new_ticket_id(ticket.created_at)})
        except UNAVAILABLE as err:
            logger.warning("Ticket database unavailable, ticket %s spooled: %s", ticket.id, _short(err))
            self.spool.put(ticket.id, ticket.to_json_dict())
            ticket = ticket.copy(update={"spooled": True})
        else:
            if self.spool.pending():
                # The database is back: write the waiting tickets, but not on the customer's time.
                threading.Thread(target=self.try_flush_spool, name="ticket-spool-flush", daemon=True).start()
        if self.on_created:
            try:
                self.on_created(ticket)
            except Exception:  # a notification problem must never cost the customer the ticket
                logger.exception("on_created hook failed for ticket %s", ticket.id)
        return ticket

    def get(self, ticket_id: str) -> Ticket:
        try:
            self.flush_spool()
            with self._session() as session:
                row = session.get(db.TicketRow, ticket_id)
                if row is not None:
                    return _ticket_from_row(row)
        except UNAVAILABLE as err:
            spooled = self.spool.find(ticket_id)
            if spooled is not None:
                return Ticket.parse_obj({**spooled, "spooled": True})
            raise StoreUnavailable(_short(err)) from err
        spooled = self.spool.find(ticket_id)
        if spooled is not None:
            return Ticket.parse_obj({**spooled, "spooled": True})
        raise TicketNotFound(ticket_id)

    def list(self, status: Optional[str] = None, language: Optional[str] = None, category: Optional[str] = None,
             sender_id: Optional[str] = None, limit: int = 200) -> List[Ticket]:
        """Most urgent first, then newest first."""
        self.try_flush_spool()
        with self._session() as session:
            query = sa.select(db.TicketRow)
            for column, value in ((db.TicketRow.status, status), (db.TicketRow.language, language),
                                  (db.TicketRow.category, category), (db.TicketRow.sender_id, sender_id)):
                if value:
                    query = query.where(column == value)
            query = query.order_by(db.TicketRow.priority, db.TicketRow.created_at.desc()).limit(limit)
            return [_ticket_from_row(r) for r in session.execute(query).scalars()]

    def open_ticket_for(self, sender_id: str) -> Optional[Ticket]:
        """The newest not-closed ticket of a conversation, if any."""
        for status in ("in_progress", "open"):
            found = self.list(status=status, sender_id=sender_id, limit=1)
            if found:
                return found[0]
        return None

    def _update(self, ticket_id: str, mutate: Callable[[db.TicketRow], None]) -> Ticket:
        self.try_flush_spool()
        with self._session() as session:
            row = session.get(db.TicketRow, ticket_id)
            if row is None:
                raise TicketNotFound(ticket_id)
            mutate(row)
            row.updated_at = utcnow()
            session.commit()
            return _ticket_from_row(row)

    def add_note(self, ticket_id: str, text: str, author: str = "staff", kind: str = "note") -> Ticket:
        text = (text or "").strip()
        if not text:
            raise ValueError("empty note")
        return self._update(ticket_id, lambda row: row.notes.append(
            db.NoteRow(at=utcnow(), author=mask_pii(author)[:128], kind=kind, text=mask_pii(text))))

    def set_status(self, ticket_id: str, status: str, author: str = "staff", note: Optional[str] = None) -> Ticket:
        if status not in STATUSES:
            raise ValueError(f"unknown status {status!r}; one of {', '.join(STATUSES)}")

        def mutate(row: db.TicketRow) -> None:
            if row.status != status:
                row.notes.append(db.NoteRow(at=utcnow(), author=mask_pii(author)[:128], kind="status",
                                            text=f"{row.status} -> {status}"))
                row.status = status
            if note and note.strip():
                row.notes.append(db.NoteRow(at=utcnow(), author=mask_pii(author)[:128], kind="note",
                                            text=mask_pii(note.strip())))

        return self._update(ticket_id, mutate)

    def delete(self, ticket_ids: Iterable[str]) -> None:
        """For tests and KVKK erasure requests."""
        with self._session() as session:
            for tid in ticket_ids:
                row = session.get(db.TicketRow, tid)
                if row is not None:
                    session.delete(row)
            session.commit()


def _short(err: BaseException) -> str:
    return mask_pii(str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__)[:200]
