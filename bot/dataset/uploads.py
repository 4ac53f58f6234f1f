"""Files customers send to the data check, between the channel that receives them and the action that reads them.

The channel (widget upload, Telegram document) writes the bytes to a private file under ADVISOR_UPLOAD_DIR
(default var/uploads, mode 0600, a random name); bot/dataset/channel_check.py measures it and deletes it, and only
the figures go to Rasa. A file left behind (a widget upload the browser never finished) is deleted by the next
upload's sweep after MAX_AGE_S. A file over the channel's limit is not kept: the payload then says why.
"""
from __future__ import annotations

import os
import re
import secrets
import time
from pathlib import Path
from typing import AsyncIterator, Optional, Tuple

PAYLOAD_INTENT = "dataset_upload"
MAX_AGE_S = 600  # an upload the action did not read within ten minutes is swept away
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
    for path in folder.iterdir():
        if NAME.match(path.name) and now - path.stat().st_mtime > MAX_AGE_S:
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
