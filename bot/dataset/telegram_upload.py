"""A document sent to the Telegram bot -> the data check's payload for Rasa (bot/dataset/channel_check.py).

Bot API: getFile gives the file's path, served at {api}/file/bot<token>/<path> (core.telegram.org/bots/api#getfile;
bots may download files up to 20 MB, the telegram limit in knowledge/dataset.yml). The size Telegram announces is
checked before anything is downloaded; the download itself stops at the limit too.

A file with personal data leaves a masked copy (bot/dataset/uploads.py); after the answer, send_masked_copy sends it
back with sendDocument (core.telegram.org/bots/api#senddocument, multipart upload) and deletes it, sent or not.
"""
from __future__ import annotations

import logging
from typing import Any, AsyncIterator, Dict, Optional

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


async def send_masked_copy(api, chat_id: str, lang: Optional[str], send: bool = True) -> None:
    """Send the conversation's new masked copy, if the check left one, as a document captioned in `lang` (both
    languages when None); then delete it, sent or not."""
    copy = uploads.take_masked(chat_id)
    if copy is None:
        return
    try:
        if send:
            from bot.dataset.texts import load_dataset_knowledge

            kb = load_dataset_knowledge()
            caption = kb.text("masked_caption", lang) if lang else \
                kb.text("masked_caption", "fa") + "\n" + kb.text("masked_caption", "tr")
            content_type = "application/jsonl" if copy.path.suffix == ".jsonl" else "text/csv"
            await api.upload("sendDocument", {"chat_id": chat_id, "caption": caption}, "document", copy.path,
                             file_name=copy.file_name, content_type=content_type)
    except Exception:  # the customer has the figures; the copy is deleted all the same
        logger.warning("Telegram sendDocument of the masked copy failed", exc_info=True)
    finally:
        uploads.drop_masked(copy.copy_id)
