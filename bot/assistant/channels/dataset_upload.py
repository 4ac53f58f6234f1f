"""The widget's file upload over its socket.io session (issue 23): the file comes in chunks on the connection that
already holds the conversation, so the same session proof (bot/assistant/channels/socketio_sessions.py) covers it.

    dataset_chunk {session_id, session_token, upload_id, index, name?, data: <bytes>, last}  -> ack {ok} | {error}

Each chunk stays under engine.io's 1 MB message limit and the Rasa server's 1 MiB body limit (long polling), so
neither has to be raised for every other message. The chunks go straight to a private file (bot/dataset/uploads.py)
that is measured and deleted after the last one (bot/dataset/channel_check.py); the figures then enter the
conversation as the payload Rasa answers.

A file with personal data leaves a masked copy for the conversation: after the answer, the server offers it to the
tab that uploaded the file, and the customer downloads it over the same session, in chunks:

    server -> dataset_masked {copy_id, file_name, size, button, downloaded, gone}   (texts in the conversation's
                                                                                     language, knowledge/dataset.yml)
    dataset_masked_chunk {session_id, session_token, copy_id, index}  -> ack {data: <bytes>, last} | {error}

The copy is deleted after its last chunk is sent, or when it expires (bot/dataset/uploads.py MASKED_MAX_AGE_S).
"""
from __future__ import annotations

import logging
import os
import re
from typing import Any, Callable, Dict, Optional, Tuple

from bot.dataset import channel_check, uploads

logger = logging.getLogger(__name__)
EVENT = "dataset_chunk"
MASKED_OFFER_EVENT = "dataset_masked"
MASKED_CHUNK_EVENT = "dataset_masked_chunk"
MASKED_CHUNK_BYTES = 256 * 1024  # as the upload's chunks: under engine.io's 1 MB message limit
MAX_CHUNK_BYTES = 512 * 1024  # the widget sends 256 KiB; engine.io refuses messages over 1,000,000 bytes
_UPLOAD_ID = re.compile(r"^[A-Za-z0-9]{8,40}$")


def register_upload(sio: Any, channel: Any, bound: Dict[str, str], verify: Callable[[Any, Any], bool],
                    on_new_message: Callable) -> None:
    """Add the dataset_chunk handler to the channel's socket.io server."""
    from rasa.core.channels.channel import UserMessage
    from rasa.core.channels.socketio import SocketIOOutput

    open_uploads: Dict[Tuple[str, str], Dict[str, Any]] = {}

    async def finish(sid: str, session_id: str, text: str) -> None:
        output = SocketIOOutput(sio, channel.bot_message_evt)
        await on_new_message(UserMessage(text, output, session_id, input_channel=channel.name(), metadata={}))

    def refusal(sid: str, data: Any) -> Optional[Dict[str, Any]]:
        """Why a socket's request is refused: not a dict, or not signed for the session this socket is bound to."""
        if not isinstance(data, dict):
            return {"error": "bad_request"}
        session_id = bound.get(sid)
        if session_id is None or data.get("session_id") != session_id or not verify(session_id,
                                                                                   data.get("session_token")):
            return {"error": "session"}
        return None

    @sio.on(EVENT, namespace=channel.namespace)
    async def dataset_chunk(sid: str, data: Any = None) -> Dict[str, Any]:
        refused = refusal(sid, data)
        if refused:
            return refused
        session_id = bound[sid]
        upload_id, chunk = str(data.get("upload_id") or ""), data.get("data")
        if not _UPLOAD_ID.match(upload_id) or not isinstance(chunk, (bytes, bytearray)) \
                or len(chunk) > MAX_CHUNK_BYTES:
            return {"error": "bad_request"}
        key = (sid, upload_id)
        state = open_uploads.get(key)
        if state is None:
            if data.get("index") != 0:
                return {"error": "bad_request"}
            name, path, descriptor = uploads.new_upload(str(data.get("name") or ""))
            os.close(descriptor)
            state = open_uploads[key] = {"name": name, "path": path, "written": 0, "next": 0,
                                         "original": str(data.get("name") or "")[:200]}
        if data.get("index") != state["next"]:
            return {"error": "bad_request"}
        limit = uploads.max_bytes("socketio")
        state["written"] += len(chunk)
        if state["written"] > limit:
            open_uploads.pop(key, None)
            state["path"].unlink(missing_ok=True)
            await finish(sid, session_id, channel_check.rejected_payload("too_large",
                                                                         {"limit_mb": limit // 1_000_000}))
            return {"error": "too_large"}
        with open(state["path"], "ab") as handle:
            handle.write(chunk)
        state["next"] += 1
        if not data.get("last"):
            return {"ok": True}
        open_uploads.pop(key, None)
        text = await channel_check.check_upload(state["name"], "socketio",
                                                await channel_check.conversation_model(session_id),
                                                state["original"], session_id)
        await finish(sid, session_id, text)
        await offer_masked_copy(sio, channel.namespace, sid, session_id)
        return {"ok": True, "done": True}

    @sio.on(MASKED_CHUNK_EVENT, namespace=channel.namespace)
    async def dataset_masked_chunk(sid: str, data: Any = None) -> Dict[str, Any]:
        return refusal(sid, data) or masked_chunk(bound[sid], data.get("copy_id"), data.get("index"))


async def offer_masked_copy(sio: Any, namespace: str, sid: str, session_id: str) -> None:
    """Offer the masked copy the check just left for this conversation, if any, to the tab that uploaded."""
    copy = uploads.take_masked(session_id)
    if copy is None:
        return
    from bot.assistant.channels.limits import conversation_language
    from bot.dataset.texts import load_dataset_knowledge

    kb, lang = load_dataset_knowledge(), await conversation_language(session_id)

    def text(key: str) -> str:  # no known language: both of the assistant's
        return kb.text(key, lang) if lang else kb.text(key, "fa") + " / " + kb.text(key, "tr")

    await sio.emit(MASKED_OFFER_EVENT, {"copy_id": copy.copy_id, "file_name": copy.file_name, "size": copy.size,
                                        "button": text("masked_button"), "downloaded": text("masked_downloaded"),
                                        "gone": text("masked_gone")}, room=sid, namespace=namespace)


def masked_chunk(session_id: str, copy_id: Any, index: Any) -> Dict[str, Any]:
    """One chunk of the conversation's masked copy; after the last one the copy is deleted."""
    copy = uploads.masked_copy(copy_id, session_id)
    if copy is None:
        return {"error": "gone"}
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        return {"error": "bad_request"}
    with open(copy.path, "rb") as handle:
        handle.seek(index * MASKED_CHUNK_BYTES)
        data = handle.read(MASKED_CHUNK_BYTES)
        last = handle.tell() >= os.fstat(handle.fileno()).st_size
    if last:
        uploads.drop_masked(copy.copy_id)
    return {"data": data, "last": last}
