"""REST channel that checks what it is given (credentials key `bot.assistant.channels.rest.RestInput`).

Same URL and answer as Rasa's `rest` channel: `POST /webhooks/rest/webhook {"sender": "...", "message": "..."}` →
`200 [{"recipient_id": ..., "text": ...}, ...]`. What it adds (security review findings 4, 6, 9, 11, 12):

- a body that is empty, not JSON, not an object, or whose `message` is not a string → `400 {"error": reason}`
  (Rasa's channel answered 500 or silently `[]`);
- `sender` is required (400 without it; before, every caller without one shared the conversation "default"), and it
  may not name a Telegram chat or a website session: those channels authenticate their users, REST does not;
- `input_channel` is always `rest` and `metadata` keeps only language hints (bot/assistant/channels/limits.py): a
  client can neither mark its message as staff nor pretend to be the Telegram channel;
- a message longer than 4,000 characters is not read or stored; the answer says so in the user's language;
- more messages than knowledge/rate_limits.yml allows per conversation or per client address → `429` with
  Retry-After and the same list answer, saying so in the conversation's language (issue 20, finding 6);
- an error while the assistant handles the message → the answer says so in the conversation's language (not `[]`);
- with REST_CHANNEL_TOKEN set (or REST_CHANNEL_TOKEN_FILE), every call must carry `Authorization: Bearer <token>`
  (401 otherwise). A REST conversation has no other credential than its sender id (issue 20, finding 7): in
  production the REST channel is for the operator's own integrations, which hold the token; a browser uses the
  socket.io channel, whose sessions are signed.
  Streaming (`?stream=true`) is not offered.
"""
from __future__ import annotations

import hmac
import json
import logging
from asyncio import CancelledError
from typing import Any, Awaitable, Callable, Optional, Tuple

from rasa.core.channels import rest as rasa_rest
from rasa.core.channels.channel import CollectingOutputChannel, UserMessage
from sanic import Blueprint, response
from sanic.request import Request
from sanic.response import HTTPResponse

from bot.assistant.channels.limits import (channel_answer, client_address, client_metadata, conversation_language,
                                           rest_sender_problem, too_long, too_long_answer)
from bot.assistant.rate_limits import CLIENT_KEY, client_key, limiter

logger = logging.getLogger(__name__)


def _bad_request(reason: str) -> HTTPResponse:
    return response.json({"error": reason}, status=400)


def read_request(body: bytes) -> Tuple[Optional[dict], Optional[str]]:
    """(the JSON object, None) or (None, why it cannot be read)."""
    if not body or not body.strip():
        return None, "empty body: send a JSON object {\"sender\": ..., \"message\": ...}"
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return None, "body is not JSON (UTF-8)"
    if not isinstance(data, dict):
        return None, "body must be a JSON object {\"sender\": ..., \"message\": ...}"
    problem = rest_sender_problem(data.get("sender"))
    if problem:
        return None, problem
    if not isinstance(data.get("message"), str):
        return None, "message is required: a string"
    if not data["message"].strip():
        return None, "message is empty"
    return data, None


TOKEN_ENV = "REST_CHANNEL_TOKEN"


def _authorised(header: Optional[str]) -> bool:
    """True when no REST token is configured, or the header carries it."""
    from bot.secret_files import read_secret

    expected = read_secret(TOKEN_ENV)
    if not expected:
        return True
    given = (header or "").removeprefix("Bearer ").strip()
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), expected.encode())


class RestInput(rasa_rest.RestInput):
    @classmethod
    def name(cls) -> str:
        return "rest"  # keeps the URL /webhooks/rest/webhook and the channel name stored in tickets

    def blueprint(self, on_new_message: Callable[[UserMessage], Awaitable[Any]]) -> Blueprint:
        webhook = Blueprint("hardened_rest_webhook", __name__)

        @webhook.route("/", methods=["GET"])
        async def health(_: Request) -> HTTPResponse:
            return response.json({"status": "ok"})

        @webhook.route("/webhook", methods=["POST"])
        async def receive(request: Request) -> HTTPResponse:
            if not _authorised(request.headers.get("Authorization")):
                return response.json({"error": "this REST channel needs Authorization: Bearer <REST_CHANNEL_TOKEN>"},
                                     status=401)
            data, problem = read_request(request.body)
            if problem:
                return _bad_request(problem)
            sender, text = data["sender"], data["message"]
            metadata = client_metadata(data.get("metadata"))
            address = client_address(request.ip, request.headers.get("X-Forwarded-For"))
            if not limiter().message_allowed(sender, address):
                language = await conversation_language(sender, text, metadata)
                seconds = limiter().retry_after_s(sender, address)
                return response.json([{"recipient_id": sender, "text": channel_answer(
                    "rate_limited", language, seconds=seconds)}], status=429, headers={"Retry-After": str(seconds)})
            if too_long(text):
                language = await conversation_language(sender, text, metadata)
                return response.json([{"recipient_id": sender, "text": too_long_answer(text, metadata, language)}])
            from bot.assistant.channels.socketio_sessions import session_secret

            metadata[CLIENT_KEY] = client_key(address, session_secret())
            collector = CollectingOutputChannel()
            try:
                await on_new_message(UserMessage(text, collector, sender, input_channel=self.name(),
                                                 metadata=metadata))
            except (CancelledError, Exception) as error:  # noqa: BLE001 - the customer gets an answer either way
                # The traceback is masked by the log redaction; the message text itself is not logged.
                logger.error("rest: message handling failed (%s)", type(error).__name__,
                             exc_info=not isinstance(error, CancelledError))
                language = await conversation_language(sender, text, metadata)
                collector.messages.append({"recipient_id": sender, "text": channel_answer("server_error", language)})
            return response.json(collector.messages)

        return webhook
