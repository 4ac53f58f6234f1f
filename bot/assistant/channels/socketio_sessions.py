"""socket.io sessions bound to a server-issued secret (security review finding 3) and checked input on every event.

Rasa's socket.io channel lets any client name any `session_id` and so join that conversation's room: it received
every reply and could speak for the customer. Here the server issues the session:

- `session_request {session_id?, session_token?}`: a known session is resumed only with its token, an HMAC-SHA256
  of the session id under SOCKET_SESSION_SECRET (env or file, bot/secret_files.py); otherwise a new session
  `web-<32 hex>` is issued. `session_confirm {session_id, session_token}` answers, and the connection joins that room
  only. With a resumed session the server also sends `session_history`: the conversation as the tracker store keeps
  it, masked, so the widget needs no copy of the chat in the host page's localStorage (finding 16).
- `user_uttered {message, session_id, session_token, metadata?}`: refused unless this connection holds that session
  and the token verifies; `metadata` keeps only language hints (bot/assistant/channels/limits.py); a message over
  4,000 characters gets the "too long" answer in the user's language and is not passed on (finding 6); more
  messages than knowledge/rate_limits.yml allows per session or per client address get the "too fast" answer in the
  conversation's language (issue 20, finding 6), and an error inside the assistant gets an answer too.
- The allowed browser origins come from ADVISOR_ALLOWED_ORIGINS (bot/origins.py; default: the website's own), also
  for the WebSocket upgrade (finding 8).

Several Rasa instances must share SOCKET_SESSION_SECRET; without it each process draws its own, and sessions do not
survive a restart.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import inspect
import json
import logging
import re
import secrets
import uuid
from typing import Any, Awaitable, Callable, Dict, List, Optional

from rasa.core.channels.channel import UserMessage
from rasa.core.channels.socketio import SocketBlueprint, SocketIOOutput
from sanic import Blueprint, response

from bot.assistant.channels.limits import (channel_answer, client_address, client_metadata, conversation_language,
                                           too_long, too_long_answer)
from bot.assistant.rate_limits import CLIENT_KEY, client_key, limiter
from bot.origins import allowed_origins
from bot.secret_files import read_secret

logger = logging.getLogger(__name__)

SECRET_ENV = "SOCKET_SESSION_SECRET"
SESSION_ID = re.compile(r"web-[0-9a-f]{32}")
_process_secret: Optional[bytes] = None


def session_secret() -> bytes:
    global _process_secret
    configured = read_secret(SECRET_ENV)
    if configured:
        return configured.encode()
    if _process_secret is None:
        logger.warning("%s is not set: website sessions last as long as this process", SECRET_ENV)
        _process_secret = secrets.token_bytes(32)
    return _process_secret


def sign_session(session_id: str, secret: Optional[bytes] = None) -> str:
    mac = hmac.new(secret or session_secret(), b"socketio-session:" + session_id.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).decode().rstrip("=")


def verify_session(session_id: Any, token: Any, secret: Optional[bytes] = None) -> bool:
    if not isinstance(session_id, str) or not isinstance(token, str) or not SESSION_ID.fullmatch(session_id):
        return False
    return hmac.compare_digest(token.encode("utf-8", "surrogateescape"), sign_session(session_id, secret).encode())


def new_session_id() -> str:
    return "web-" + uuid.uuid4().hex


async def _maybe_await(result: Any) -> None:
    if inspect.isawaitable(result):
        await result


def history_entries(events: List[Dict[str, Any]], limit: int = 200) -> List[Dict[str, Any]]:
    """What the widget shows, rebuilt from tracker events (already masked by the tracker store): the customer's
    lines (a pressed button as its title, hidden payloads left out) and the bot's texts, images and buttons."""
    entries: List[Dict[str, Any]] = []
    titles: Dict[str, str] = {}
    for event in events:
        kind = event.get("event")
        if kind == "user":
            text = event.get("text") or ""
            if text.startswith("/"):
                if text in titles:
                    entries.append({"from": "user", "text": titles[text]})
                continue
            if text:
                entries.append({"from": "user", "text": text})
        elif kind == "bot":
            # As Rasa's SocketIOOutput sent it: one bubble per paragraph, the buttons on the last one, the image
            # (a chart) as a bubble of its own.
            data = event.get("data") or {}
            parts = [p for p in (event.get("text") or "").strip().split("\n\n") if p] if event.get("text") else []
            buttons = [{"title": str(b.get("title") or b.get("payload")),
                        "payload": str(b.get("payload") or b.get("title"))}
                       for b in (data.get("buttons") or data.get("quick_replies") or []) if isinstance(b, dict)]
            for i, part in enumerate(parts):
                entry: Dict[str, Any] = {"from": "bot", "text": part}
                if buttons and i == len(parts) - 1:
                    entry["buttons"] = buttons
                entries.append(entry)
            if buttons:
                titles = {b["payload"]: b["title"] for b in buttons}
            attachment = data.get("attachment")
            if isinstance(attachment, dict) and (attachment.get("payload") or {}).get("src"):
                entries.append({"from": "bot", "image": attachment["payload"]["src"]})
            elif isinstance(data.get("image"), str):
                entries.append({"from": "bot", "image": data["image"]})
        elif kind == "restart":
            entries = []
    return entries[-limit:]


async def _stored_history(session_id: str) -> List[Dict[str, Any]]:
    """The conversation from the tracker store (masked there), or [] when it cannot be read."""
    try:
        from sanic import Sanic

        agent = Sanic.get_app().ctx.agent
        # The full history: retrieve() holds only the recent turns (bot/assistant/tracker_store.py).
        tracker = await agent.tracker_store.retrieve_full_tracker(session_id)
        if tracker is None:
            return []
        return history_entries([event.as_dict() for event in tracker.events])
    except Exception:  # history is a convenience: the conversation itself goes on without it
        logger.warning("socket.io: could not read the history of a session", exc_info=True)
        return []


def secure_blueprint(channel: Any, sio: Any, on_new_message: Callable[[UserMessage], Awaitable[Any]]) -> Blueprint:
    """The socket.io blueprint of `channel` (Rasa's SocketIOInput settings) on the server `sio`."""
    webhook = SocketBlueprint(sio, channel.socketio_path, "socketio_webhook", __name__)
    bound: Dict[str, str] = {}  # connection sid -> the session it proved it holds
    addresses: Dict[str, Optional[str]] = {}  # connection sid -> the client's address (rate limits)
    channel.sio = sio

    @webhook.route("/", methods=["GET"])
    async def health(_: Any) -> Any:
        return response.json({"status": "ok"})

    @sio.on("connect", namespace=channel.namespace)
    async def connect(sid: str, environ: Dict, auth: Optional[Dict] = None) -> bool:
        # Browsers always send Origin; a page on another site is refused here, for polling and WebSocket alike
        # (engine.io's own check stays off: it would add a second Access-Control-Allow-Origin next to Rasa's).
        origin = environ.get("HTTP_ORIGIN")
        request = environ.get("sanic.request")  # engine.io's Sanic driver fixes REMOTE_ADDR to 127.0.0.1
        addresses[sid] = client_address(getattr(request, "ip", None) or environ.get("REMOTE_ADDR"),
                                        environ.get("HTTP_X_FORWARDED_FOR"))
        if origin and origin not in allowed_origins():
            logger.info("socket.io: connection from a foreign origin refused")
            return False
        if channel.jwt_key:
            from rasa.core.channels.channel import decode_bearer_token

            token = auth.get("token") if isinstance(auth, dict) else None
            return bool(token and decode_bearer_token(token, channel.jwt_key, channel.jwt_algorithm))
        return True

    @sio.on("disconnect", namespace=channel.namespace)
    async def disconnect(sid: str) -> None:
        bound.pop(sid, None)
        addresses.pop(sid, None)

    @sio.on("session_request", namespace=channel.namespace)
    async def session_request(sid: str, data: Any = None) -> None:
        data = data if isinstance(data, dict) else {}
        requested, token = data.get("session_id"), data.get("session_token")
        resumed = verify_session(requested, token)
        session_id = requested if resumed else new_session_id()
        previous = bound.get(sid)
        if previous and previous != session_id:
            await _maybe_await(sio.leave_room(sid, previous, namespace=channel.namespace))
        bound[sid] = session_id
        await _maybe_await(sio.enter_room(sid, session_id, namespace=channel.namespace))
        await sio.emit("session_confirm", {"session_id": session_id, "session_token": sign_session(session_id)},
                       room=sid, namespace=channel.namespace)
        if resumed:
            await sio.emit("session_history", await _stored_history(session_id), room=sid,
                           namespace=channel.namespace)

    @sio.on(channel.user_message_evt, namespace=channel.namespace)
    async def handle_message(sid: str, data: Any = None) -> None:
        if not isinstance(data, dict):
            return
        session_id = bound.get(sid)
        if session_id is None or data.get("session_id") != session_id \
                or not verify_session(session_id, data.get("session_token")):
            logger.info("socket.io: message refused, the connection does not hold that session")
            await sio.emit("session_refused", {"reason": "send session_request first, then the session_token"},
                           room=sid, namespace=channel.namespace)
            return
        text = data.get("message")
        if not isinstance(text, str) or not text.strip() or text.lstrip().startswith("/dataset_upload"):
            return  # the data check's payload only ever comes from the upload below, never typed
        raw_metadata = data.get(channel.metadata_key)
        if isinstance(raw_metadata, str):
            try:
                raw_metadata = json.loads(raw_metadata)
            except ValueError:
                raw_metadata = {}
        metadata = client_metadata(raw_metadata)
        output = SocketIOOutput(sio, channel.bot_message_evt)
        await _deliver(UserMessage(text, output, session_id, input_channel=channel.name(), metadata=metadata),
                       addresses.get(sid), on_new_message)

    from bot.assistant.channels.dataset_upload import register_upload  # the widget's file upload (issue 23)

    register_upload(sio, channel, bound, verify_session, on_new_message)
    return webhook


async def _deliver(message: UserMessage, address: Optional[str],
                   on_new_message: Callable[[UserMessage], Awaitable[Any]]) -> None:
    """Pass a checked message on, unless its session or address is over its rate or the text over its length;
    those, and an error inside the assistant, are answered in the conversation's language."""
    session_id, text, metadata, output = message.sender_id, message.text, message.metadata, message.output_channel
    if not limiter().message_allowed(session_id, address):
        language = await conversation_language(session_id, text, metadata)
        await output.send_text_message(session_id, channel_answer(
            "rate_limited", language, seconds=limiter().retry_after_s(session_id, address)))
        return
    if too_long(text):
        language = await conversation_language(session_id, text, metadata)
        await output.send_text_message(session_id, too_long_answer(text, metadata, language))
        return
    metadata[CLIENT_KEY] = client_key(address, session_secret())
    try:
        await on_new_message(message)
    except Exception as error:  # noqa: BLE001 - the customer gets an answer, the widget does not hang
        logger.error("socket.io: message handling failed (%s)", type(error).__name__, exc_info=True)
        language = await conversation_language(session_id, text, metadata)
        await output.send_text_message(session_id, channel_answer("server_error", language))
