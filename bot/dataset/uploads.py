"""Files customers send to the data check, between the channel that receives them and the action that reads them.

The channel (widget upload, Telegram document) writes the bytes to a private file under ADVISOR_UPLOAD_DIR
(default var/uploads, mode 0600, a random name); bot/dataset/channel_check.py measures it and deletes it, and only
the figures go to Rasa. A file left behind (a widget upload the browser never finished) is deleted by the next
upload's sweep after MAX_AGE_S. A file over the channel's limit is not kept: the payload then says why.

Masked copies: when the check finds personal data, the worker also writes a copy with it masked
(bot/dataset/masking.py) to masked-<random>.jsonl|csv beside the uploads (0600). It belongs to one conversation and
lives only while offered: Telegram sends it as a document and deletes it at once; the widget offers it for download
over the same authenticated socket.io session and deletes it after the last chunk, or MASKED_MAX_AGE_S after the
offer (a timer, and the sweep after a restart), whichever comes first.
"""
from __future__ import annotations

import os
import re
import secrets
import time
from pathlib import Path
from dataclasses import dataclass
from typing import AsyncIterator, Dict, Optional, Tuple

PAYLOAD_INTENT = "dataset_upload"
MAX_AGE_S = 600  # an upload the action did not read within ten minutes is swept away
MASKED_MAX_AGE_S = 600  # a masked copy waits ten minutes for its download: long enough to read the summary first
MASKED_NAME = re.compile(r"^masked-[0-9a-f]{32}\.(?:jsonl|csv)$")
_SAFE_NAME = re.compile(r"[^\w.-]+", re.UNICODE)
_EXTENSIONS = ("jsonl", "ndjson", "json", "csv", "tsv", "xlsx", "xlsm")
NAME = re.compile(r"^[0-9a-f]{32}\.(?:jsonl|ndjson|json|csv|tsv|xlsx|xlsm|bin)$")
CHANNEL_LIMITS = {"socketio": "widget", "telegram": "telegram"}  # input channel -> knowledge/dataset.yml limits


class TooLarge(Exception):
    pass


def upload_dir() -> Path:
    return Path(os.environ.get("ADVISOR_UPLOAD_DIR", "var/uploads"))


def limits_key(input_channel: Optional[str]) -> str:
    return CHANNEL_LIMITS.get(input_channel or "", "widget")


def max_bytes(input_channel: Optional[str]) -> int:
    from bot.dataset.texts import load_dataset_knowledge

    return load_dataset_knowledge().limits[limits_key(input_channel)].max_bytes


def _extension(file_name: Optional[str]) -> str:
    suffix = (file_name or "").rsplit(".", 1)[-1].lower() if "." in (file_name or "") else ""
    return suffix if suffix in _EXTENSIONS else "bin"


def sweep(now: Optional[float] = None) -> int:
    """Delete uploads older than MAX_AGE_S; returns how many."""
    folder, now, removed = upload_dir(), now or time.time(), 0
    if not folder.is_dir():
        return 0
    for copy_id in [key for key, copy in _MASKED.items() if now - copy.created > MASKED_MAX_AGE_S]:
        drop_masked(copy_id)
    for path in folder.iterdir():
        age = now - path.stat().st_mtime
        if (NAME.match(path.name) and age > MAX_AGE_S) or (MASKED_NAME.match(path.name) and age > MASKED_MAX_AGE_S):
            path.unlink(missing_ok=True)
            removed += 1
    return removed


def new_upload(file_name: Optional[str]) -> Tuple[str, Path, int]:
    """(name, path, descriptor) of a new private file (0600, created exclusively) for an upload."""
    sweep()
    folder = upload_dir()
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{secrets.token_hex(16)}.{_extension(file_name)}"
    path = folder / name
    return name, path, os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)


async def store(chunks: AsyncIterator[bytes], file_name: Optional[str], limit: int) -> str:
    """Write the chunks to a new private file; its name. TooLarge (and nothing kept) past `limit` bytes."""
    name, path, descriptor = new_upload(file_name)
    written = 0
    try:
        with os.fdopen(descriptor, "wb") as handle:
            async for chunk in chunks:
                written += len(chunk)
                if written > limit:
                    raise TooLarge()
                handle.write(chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return name


async def one_chunk(data: bytes) -> AsyncIterator[bytes]:
    yield data


def path_of(name: str) -> Optional[Path]:
    """The upload's path for a name from the payload; None for anything that is not such a name."""
    if not isinstance(name, str) or not NAME.match(name):
        return None
    return upload_dir() / name


# ------------------------------------------------------------------------------------------ masked copies


@dataclass
class MaskedCopy:
    """A masked copy waiting for its conversation: where it is, what the customer's download is called."""

    copy_id: str
    conversation: str
    path: Path
    file_name: str
    created: float
    announced: bool = False

    @property
    def size(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0


_MASKED: Dict[str, MaskedCopy] = {}


def new_masked(kind: str) -> Tuple[str, Path]:
    """(copy_id, path) of a new private, empty file for a masked copy of a file of `kind`."""
    folder = upload_dir()
    folder.mkdir(parents=True, exist_ok=True)
    copy_id = secrets.token_hex(16)
    path = folder / f"masked-{copy_id}.{'jsonl' if kind in ('jsonl', 'json') else 'csv'}"
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    return copy_id, path


def masked_file_name(original: Optional[str], path: Path) -> str:
    """The download's name: the customer's own file name (only letters, digits, '.', '-', '_') + "-masked"."""
    stem = (original or "").rsplit("/", 1)[-1].rsplit("\\", 1)[-1]
    stem = _SAFE_NAME.sub("_", stem.rsplit(".", 1)[0] if "." in stem else stem).strip("._")[:60] or "data"
    return f"{stem}-masked{path.suffix}"


def offer_masked(copy_id: str, conversation: str, path: Path, original: Optional[str]) -> MaskedCopy:
    """Register a written masked copy for `conversation`; it is deleted MASKED_MAX_AGE_S later at the latest."""
    import asyncio

    copy = _MASKED[copy_id] = MaskedCopy(copy_id, conversation, path, masked_file_name(original, path), time.time())
    try:
        asyncio.get_running_loop().call_later(MASKED_MAX_AGE_S, drop_masked, copy_id)
    except RuntimeError:  # no event loop (a script): the sweep deletes it
        pass
    return copy


def take_masked(conversation: str) -> Optional[MaskedCopy]:
    """The conversation's masked copy not yet announced to the customer (the channel offers or sends it once)."""
    for copy in _MASKED.values():
        if copy.conversation == conversation and not copy.announced:
            copy.announced = True
            return copy
    return None


def masked_copy(copy_id: object, conversation: str) -> Optional[MaskedCopy]:
    """The copy `copy_id` if it belongs to `conversation` and is still kept; None otherwise."""
    copy = _MASKED.get(copy_id) if isinstance(copy_id, str) else None
    if copy is None or copy.conversation != conversation:
        return None
    if time.time() - copy.created > MASKED_MAX_AGE_S or not copy.path.exists():
        drop_masked(copy.copy_id)
        return None
    return copy


def drop_masked(copy_id: str) -> None:
    """Delete the copy's file and forget it (downloaded, sent, expired or refused)."""
    copy = _MASKED.pop(copy_id, None)
    if copy is not None:
        copy.path.unlink(missing_ok=True)
