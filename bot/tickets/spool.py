"""Durable local spool: tickets wait here, one JSON file each, while the database is unreachable.

A file is written to a temporary name, fsynced, renamed into place and the directory fsynced, so after a crash a
ticket is either completely in the spool or not there at all (and the user was not given its number). Files are
removed only after the database commit, so a crash in between means the ticket is offered again; the store's
insert is idempotent on the ticket number.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import time
from pathlib import Path
from typing import Iterator, List, Tuple

logger = logging.getLogger(__name__)


class Spool:
    def __init__(self, directory: os.PathLike | str):
        self.directory = Path(directory)

    def _ensure_dir(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)

    def _fsync_dir(self) -> None:
        fd = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def put(self, ticket_id: str, payload: dict) -> Path:
        self._ensure_dir()
        # The time prefix keeps the spool in creation order when it is flushed.
        name = f"{time.time_ns():020d}-{ticket_id}.json"
        final = self.directory / name
        tmp = self.directory / f".{name}.tmp"
        data = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, final)
        self._fsync_dir()
        return final

    def pending(self) -> List[Path]:
        if not self.directory.is_dir():
            return []
        return sorted(p for p in self.directory.glob("*.json") if not p.name.startswith("."))

    def __len__(self) -> int:
        return len(self.pending())

    def items(self) -> Iterator[Tuple[Path, dict]]:
        """Readable spooled tickets in creation order; unreadable files are moved to `bad/` for a human to see."""
        for path in self.pending():
            try:
                yield path, json.loads(path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                continue  # flushed meanwhile by another process
            except (OSError, ValueError) as err:
                self.set_aside(path, f"unreadable: {err}")

    def set_aside(self, path: Path, reason: str) -> None:
        """Move a file that is not a ticket out of the way (into `bad/`) so it cannot block the ones after it."""
        logger.error("Spooled file %s moved to %s/bad: %s", path.name, self.directory, reason)
        bad = self.directory / "bad"
        bad.mkdir(exist_ok=True)
        with contextlib.suppress(OSError):
            os.replace(path, bad / path.name)

    def find(self, ticket_id: str) -> dict | None:
        for path in self.pending():
            if path.name.endswith(f"-{ticket_id}.json"):
                try:
                    return json.loads(path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    return None
        return None

    def remove(self, path: Path) -> None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        self._fsync_dir()

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """One flusher at a time across processes (action server, staff page, CLI)."""
        self._ensure_dir()
        with open(self.directory / ".lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
