"""A document sent to the Telegram bot -> the data check's payload for Rasa (bot/dataset/channel_check.py).

Bot API: getFile gives the file's path, served at {api}/file/bot<token>/<path> (core.telegram.org/bots/api#getfile;
bots may download files up to 20 MB, the telegram limit in knowledge/dataset.yml). The size Telegram announces is
checked before anything is downloaded; the download itself stops at the limit too.
"""
from __future__ import annotations

import logging
from typing import Any, AsyncIterator, Dict

import aiohttp

from bot.dataset import channel_check, uploads

logger = logging.getLogger(__name__)
CHUNK_BYTES = 1 << 16


async def _download(api, file_path: str) -> AsyncIterator[bytes]:
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        async with session.get(api.file_url(file_path)) as resp:
            if resp.status != 200:
                raise uploads.TooLarge() if resp.status == 400 else OSError(f"download: HTTP {resp.status}")
            async for chunk in resp.content.iter_chunked(CHUNK_BYTES):
                yield chunk


async def document_payload(api, document: Dict[str, Any], chat_id: str) -> str:
    """The Rasa message for a received document (a report's figures, or why it was refused)."""
    limit = uploads.max_bytes("telegram")
    if not isinstance(document, dict) or not document.get("file_id"):
        return channel_check.rejected_payload("not_a_file")
    if int(document.get("file_size") or 0) > limit:
        return channel_check.rejected_payload("too_large", {"limit_mb": limit // 1_000_000})
    try:
        info = await api.call("getFile", {"file_id": document["file_id"]})
        file_path = info.get("file_path") if isinstance(info, dict) else None
        if not file_path:
            return channel_check.rejected_payload("too_large", {"limit_mb": limit // 1_000_000})
        return await channel_check.receive(_download(api, file_path), document.get("file_name"), "telegram",
                                           chat_id)
    except Exception:  # the Bot API or the download failed: the customer hears that no file arrived
        logger.warning("Telegram document could not be fetched", exc_info=True)
        return channel_check.rejected_payload("not_a_file")
