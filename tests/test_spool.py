"""Nothing is lost while the ticket database is down: tickets wait in the durable spool with their final numbers and
are written when it returns (next access, or the periodic flusher)."""
from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid

import pytest

from bot.tickets import Message, TicketDraft, TicketStore
from bot.tickets.spool import Spool
from bot.tickets.store import StoreUnavailable, build_ticket

PG_HOST, PG_PORT = "127.0.0.1", 5432


def draft(i: int, sender: str) -> TicketDraft:
    return TicketDraft(sender_id=sender, channel="telegram", language="tr" if i % 2 else "fa",
                       category="quote", slots={"method": "full", "gpus": 4, "budget_usd": 900 + i},
                       excerpt=[Message(role="user", text=f"ticket {i}, numaram 0532 123 45 6{i % 10}")],
                       consent=bool(i % 2), contact=f"user{i}@example.com" if i % 2 else None,
                       contact_kind="email" if i % 2 else None)


class SwitchableProxy:
    """A TCP forwarder to PostgreSQL that can be taken down and brought back on the same port:
    the database "goes away" for the store exactly as a real outage looks (connection refused)."""

    def __init__(self, target=(PG_HOST, PG_PORT)):
        self.target = target
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = probe.getsockname()[1]
        probe.close()
        self._listener = None
        self._conns = []
        self._lock = threading.Lock()

    def up(self):
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(16)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def down(self):
        if self._listener:
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept(); close() alone does not
            self._listener.close()
            self._listener = None
        with self._lock:
            for c in self._conns:
                try:
                    c.close()
                except OSError:
                    pass
            self._conns.clear()

    def _accept(self, listener):
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            with self._lock:
                self._conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


def _assert_all_written(store: TicketStore, spooled, sender, also=()):
    assert len(store.spool) == 0
    stored = {t.id: t for t in store.list(sender_id=sender)}
    assert set(stored) == {t.id for t in list(spooled) + list(also)}
    for t in spooled:
        back = stored[t.id]
        assert back.created_at == t.created_at and back.priority == t.priority
        assert back.excerpt[0].text.endswith("numaram [PHONE]")
        assert back.contact == t.contact and not back.spooled


def test_dead_sqlite_path_spools_then_flushes_on_next_access(tmp_path):
    dead_dir = tmp_path / "db"
    dead_dir.write_text("a file where the database directory should be")
    store = TicketStore(f"sqlite:///{dead_dir}/tickets.db", spool_dir=tmp_path / "spool")
    sender = f"spool-{uuid.uuid4().hex[:6]}"

    spooled = [store.create(draft(i, sender)) for i in range(5)]
    assert all(t.spooled for t in spooled)
    assert len({t.id for t in spooled}) == 5
    assert len(store.spool) == 5
    # Staff can still open a spooled ticket by its number; the list says the database is down.
    assert store.get(spooled[2].id).spooled
    with pytest.raises(Exception):
        store.list()
    # On disk: one complete JSON file per ticket, contact only with consent, personal data masked.
    files = store.spool.pending()
    payloads = [json.loads(p.read_text()) for p in files]
    assert [p["id"] for p in payloads] == [t.id for t in spooled]
    assert all(oct(p.stat().st_mode & 0o777) == "0o600" for p in files)
    assert "0532" not in "".join(p.read_text() for p in files)

    dead_dir.unlink()
    dead_dir.mkdir()  # the database is back
    assert store.get(spooled[0].id).spooled is False  # any access flushes first
    _assert_all_written(store, spooled, sender)


def test_crash_leftovers_and_corrupt_files_do_not_block_the_spool(tmp_path):
    spool = Spool(tmp_path / "spool")
    spool.put("T-000101-AAAAA", {"not": "a ticket"})
    (tmp_path / "spool" / ".00000000000000000001-T-000101-BBBBB.json.tmp").write_text('{"half":')
    (tmp_path / "spool" / "00000000000000000002-T-000101-CCCCC.json").write_text("{not json")
    sender = f"crash-{uuid.uuid4().hex[:6]}"
    good = build_ticket(draft(1, sender))
    spool.put(good.id, good.to_json_dict())

    store = TicketStore(f"sqlite:///{tmp_path}/t.db", spool_dir=tmp_path / "spool")
    assert store.flush_spool() == 1
    assert store.get(good.id).contact == "user1@example.com"
    # A half-written temp file (crash before the rename) is never read as a ticket; unreadable or invalid files
    # are moved aside for a person to look at instead of blocking every later ticket.
    bad = sorted(p.name for p in (tmp_path / "spool" / "bad").iterdir())
    assert len(bad) == 2 and bad[0].endswith("-T-000101-CCCCC.json") and bad[1].endswith("-T-000101-AAAAA.json")
    assert store.spool.pending() == []


@pytest.mark.postgres
def test_postgres_outage_spools_and_periodic_flusher_writes_everything(tmp_path):
    proxy = SwitchableProxy()
    proxy.up()
    url = f"postgresql://postgres@127.0.0.1:{proxy.port}/test"
    store = TicketStore(url, spool_dir=tmp_path / "spool", connect_timeout=2)
    sender = f"pg-outage-{uuid.uuid4().hex[:6]}"
    before = store.create(draft(0, sender))
    assert not before.spooled

    proxy.down()
    started = time.monotonic()
    spooled = [store.create(draft(i, sender)) for i in range(1, 7)]
    assert all(t.spooled for t in spooled) and len(store.spool) == 6
    assert time.monotonic() - started < 10, "a down database must not stall the conversation"
    with pytest.raises(StoreUnavailable):
        store.get("T-000101-ZZZZZ")

    # A restarted process (action server restart) finds the spool on disk.
    restarted = TicketStore(url, spool_dir=tmp_path / "spool", connect_timeout=2)
    assert len(restarted.spool) == 6
    stop = restarted.start_periodic_flush(interval_s=0.2)
    try:
        time.sleep(0.6)
        assert len(restarted.spool) == 6  # still down: nothing lost, nothing written twice
        proxy.up()
        deadline = time.monotonic() + 15
        while len(restarted.spool) and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        stop.set()
    try:
        _assert_all_written(restarted, spooled, sender, also=[before])
        assert os.listdir(tmp_path / "spool") == [".lock"]
    finally:
        restarted.delete([t.id for t in [before] + spooled])
        proxy.down()


def test_concurrent_flushers_write_each_ticket_once(tmp_path):
    dead = tmp_path / "db"
    dead.write_text("")
    sender = f"conc-{uuid.uuid4().hex[:6]}"
    offline = TicketStore(f"sqlite:///{dead}/t.db", spool_dir=tmp_path / "spool")
    spooled = [offline.create(draft(i, sender)) for i in range(8)]
    dead.unlink()
    dead.mkdir()
    stores = [TicketStore(f"sqlite:///{dead}/t.db", spool_dir=tmp_path / "spool") for _ in range(3)]
    results = []
    threads = [threading.Thread(target=lambda s=s: results.append(s.try_flush_spool())) for s in stores]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sum(results) == 8
    _assert_all_written(stores[0], spooled, sender)


def test_a_spooled_ticket_whose_number_was_taken_meanwhile_is_renumbered_not_lost(tmp_path):
    store = TicketStore(f"sqlite:///{tmp_path}/t.db", spool_dir=tmp_path / "spool")
    stored = store.create(draft(0, "first-customer"))
    clashing = build_ticket(draft(1, "second-customer")).copy(update={"id": stored.id})
    store.spool.put(clashing.id, clashing.to_json_dict())

    assert store.flush_spool() == 1
    tickets = {t.sender_id: t for t in store.list()}
    assert tickets["first-customer"].id == stored.id
    renumbered = tickets["second-customer"]
    assert renumbered.id != stored.id and renumbered.created_at == clashing.created_at
    assert f"Number given to the customer: {stored.id}" in renumbered.notes[-1].text
    # Flushing the same file again after a crash (file outlived the commit) writes nothing twice.
    build_again = build_ticket(draft(2, "third")).to_json_dict()
    store.spool.put(build_again["id"], build_again)
    assert store.flush_spool() == 1
    store.spool.put(build_again["id"], build_again)
    assert store.flush_spool() == 0
    assert len(store.list()) == 3
