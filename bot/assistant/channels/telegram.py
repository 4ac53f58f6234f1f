"""Hardened Telegram channel for Rasa 3.6 (replaces rasa.core.channels.telegram.TelegramInput).

Why not the stock channel (research notes §0.2-0.5, §3.1): it calls setWebhook at start-up with asyncio.run (fails
offline and inside a running server, which breaks staff replies pushed with `output_channel=telegram`), checks no
secret, turns unsupported updates into HTTP 500s that Telegram retries, never answers callback queries and cannot
change the Bot API URL.

This channel:
- is configured from TELEGRAM_TOKEN, TELEGRAM_SECRET_TOKEN, TELEGRAM_WEBHOOK_URL, TELEGRAM_API_URL;
- makes no network call at start-up (the webhook is registered by `gpu-advisor telegram set-webhook`);
- answers 403 to any update without the matching X-Telegram-Bot-Api-Secret-Token header;
- handles message, edited_message and callback_query, answers 200 to everything else, and never answers 500;
- drops retried update_ids, across Rasa instances when REDIS_HOST is set (SharedRecentIds);
- sends buttons as inline keyboards, the chart as an uploaded photo, long answers split under 4096 characters.

Credentials key: `bot.assistant.channels.telegram.TelegramInput` (name "telegram": webhook /webhooks/telegram/webhook,
`channel: telegram` response variants and `output_channel=telegram` keep working).
"""
from __future__ import annotations

import hmac
import json
import logging
import os
import re
from pathlib import Path, PurePosixPath
from typing import Any, Awaitable, Callable, Dict, List, Optional, Text
from urllib.parse import urlparse

from rasa.core.channels.channel import InputChannel, OutputChannel, UserMessage
from redis.exceptions import RedisError
from sanic import Blueprint, response
from sanic.request import Request
from sanic.response import HTTPResponse

from bot.assistant.channels.limits import channel_answer, conversation_language, too_long, too_long_answer
from bot.assistant.rate_limits import limiter
from bot.assistant.redis_settings import CONNECT_TIMEOUT_S, SOCKET_TIMEOUT_S, RedisSettings

from bot.telegram_api import (
    BotApi,
    BotApiError,
    CallbackPayloads,
    RecentIds,
    TelegramSettings,
    split_message,
)

logger = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
# Languages the assistant speaks; a Telegram client set to one of them decides the language of the /start greeting.
ASSISTANT_LANGUAGES = ("fa", "tr")
# The assistant reads a `language` entity from payloads (actions/language.py), so /start from a fa or tr client
# becomes /start{"language":"fa"}: the greeting comes in that language, and what the user types afterwards
# decides from then on. The same value also travels as metadata for anything else that wants it.
LANGUAGE_HINT_KEY = "language_hint"
# "/start@MyBot payload" (groups, deep links) -> "/start"
_COMMAND_WITH_BOT = re.compile(r"^/([A-Za-z0-9_]+)@[A-Za-z0-9_]+")
# How long an update_id is remembered across instances (Telegram stops retrying an update after about a day).
DEDUP_TTL_S = 24 * 3600
_LEADING_BOT_MENTION = re.compile(r"^@[A-Za-z0-9_]*bot\b[\s,:]*", re.IGNORECASE)


def _chart_dir() -> Path:
    return Path(os.environ.get("ADVISOR_CHART_DIR", "var/charts"))


def _public_url() -> str:
    return os.environ.get("ADVISOR_PUBLIC_URL", "http://localhost:8080").rstrip("/")


def local_chart_path(image_url: str) -> Optional[Path]:
    """The file behind a chart URL that points into our own chart folder, if it exists.

    Telegram cannot fetch http://localhost:8080/charts/x.png, so such charts are uploaded instead of linked.
    """
    parsed = urlparse(image_url)
    public = urlparse(_public_url())
    ours = (parsed.scheme, parsed.netloc) == (public.scheme, public.netloc) or parsed.hostname in (
        "localhost", "127.0.0.1")
    path = PurePosixPath(parsed.path)
    if not ours or len(path.parts) < 2 or path.parent.name != "charts":
        return None
    candidate = (_chart_dir() / path.name).resolve()
    if candidate.parent != _chart_dir().resolve() or not candidate.is_file():
        return None
    return candidate


class TelegramOutput(OutputChannel):
    """Sends Rasa responses through the Bot API. Creating it costs nothing: no network call."""

    @classmethod
    def name(cls) -> Text:
        return "telegram"

    def __init__(self, api: BotApi, payloads: CallbackPayloads) -> None:
        self.api = api
        self.payloads = payloads

    async def _call(self, method: str, payload: Dict[str, Any]) -> Any:
        try:
            return await self.api.call(method, payload)
        except BotApiError as error:
            # One failed message must not abort the rest of the turn, nor turn the webhook into a 500.
            logger.error("Telegram %s to chat %s failed: %s", method, payload.get("chat_id"), error)
            return None

    async def send_text_message(self, recipient_id: Text, text: Text, **kwargs: Any) -> None:
        for part in split_message(text):
            await self._call("sendMessage", {"chat_id": recipient_id, "text": part})

    def _keyboard(self, buttons: List[Dict[str, Any]], button_type: Optional[str]) -> Dict[str, Any]:
        usable = [b for b in buttons if isinstance(b, dict) and b.get("title")]
        if button_type == "reply":
            return {"keyboard": [[{"text": b["title"]}] for b in usable],
                    "one_time_keyboard": True, "resize_keyboard": True}
        keys = [{"text": b["title"], "callback_data": self.payloads.pack(str(b.get("payload") or b["title"]))}
                for b in usable]
        short = len(keys) <= 3 and all(len(k["text"]) <= 12 for k in keys)
        rows = [keys] if button_type != "vertical" and short else [[k] for k in keys]
        return {"inline_keyboard": rows}

    async def send_text_with_buttons(self, recipient_id: Text, text: Text, buttons: List[Dict[Text, Any]],
                                     button_type: Optional[Text] = None, **kwargs: Any) -> None:
        parts = split_message(text or "") or ["…"]
        for part in parts[:-1]:
            await self._call("sendMessage", {"chat_id": recipient_id, "text": part})
        await self._call("sendMessage", {"chat_id": recipient_id, "text": parts[-1],
                                         "reply_markup": self._keyboard(buttons, button_type)})

    async def send_quick_replies(self, recipient_id: Text, text: Text, quick_replies: List[Dict[Text, Any]],
                                 **kwargs: Any) -> None:
        await self.send_text_with_buttons(recipient_id, text, quick_replies, **kwargs)

    async def send_image_url(self, recipient_id: Text, image: Text, **kwargs: Any) -> None:
        chart = local_chart_path(image)
        if chart is not None:
            try:
                await self.api.upload("sendPhoto", {"chat_id": str(recipient_id)}, "photo", chart)
            except BotApiError as error:
                logger.error("Telegram sendPhoto (upload %s) failed: %s", chart.name, error)
            return
        await self._call("sendPhoto", {"chat_id": recipient_id, "photo": image})

    async def send_attachment(self, recipient_id: Text, attachment: Any, **kwargs: Any) -> None:
        if isinstance(attachment, str):
            await self.send_text_message(recipient_id, attachment)

    async def send_custom_json(self, recipient_id: Text, json_message: Dict[Text, Any], **kwargs: Any) -> None:
        if json_message.get("photo"):
            await self.send_image_url(recipient_id, str(json_message["photo"]))
        if json_message.get("text"):
            await self.send_text_message(recipient_id, str(json_message["text"]))

    async def send_chat_action(self, recipient_id: Text, action: str) -> None:
        await self._call("sendChatAction", {"chat_id": recipient_id, "action": action})

    async def answer_callback_query(self, callback_query_id: str) -> None:
        await self._call("answerCallbackQuery", {"callback_query_id": callback_query_id})


class SharedRecentIds:
    """update_ids already taken, shared by every Rasa instance through Redis (SET NX with an expiry).

    Telegram retries an update it got no 2xx for, and behind a balancer the retry may land on another instance: a
    per-process memory would answer it twice. The key expires after TELEGRAM_DEDUP_TTL_S (default one day; Telegram
    gives up retrying long before). When Redis does not answer, this process's own memory decides, so a single
    instance still drops its own duplicates.
    """

    def __init__(self, settings: Optional[RedisSettings], ttl_s: int) -> None:
        self.local = RecentIds()
        self.ttl_s = ttl_s
        self.prefix = f"{settings.prefix}:telegram:update:" if settings else ""
        self.redis = None
        if settings is not None:
            import redis.asyncio

            self.redis = redis.asyncio.Redis(**settings.client_options(),
                                             socket_connect_timeout=CONNECT_TIMEOUT_S,
                                             socket_timeout=SOCKET_TIMEOUT_S)

    async def first_time(self, update_id: int) -> bool:
        seen_here = not self.local.first_time(update_id)
        if self.redis is None:
            return not seen_here
        try:
            fresh = await self.redis.set(f"{self.prefix}{update_id}", "1", nx=True, ex=self.ttl_s)
        except (RedisError, OSError) as error:
            logger.warning("Telegram de-duplication: Redis unavailable (%s); this instance decides alone", error)
            return not seen_here
        return bool(fresh)


def _dedup_ttl_s() -> int:
    try:
        return max(60, int(os.environ.get("TELEGRAM_DEDUP_TTL_S", DEDUP_TTL_S)))
    except ValueError:
        return DEDUP_TTL_S


class TelegramInput(InputChannel):
    """Webhook receiver. See the module docstring for what it accepts and rejects."""

    @classmethod
    def name(cls) -> Text:
        return "telegram"

    @classmethod
    def from_credentials(cls, credentials: Optional[Dict[Text, Any]]) -> InputChannel:
        return cls(TelegramSettings.from_env(credentials))

    def __init__(self, settings: TelegramSettings) -> None:
        self.settings = settings
        self.payloads = CallbackPayloads()
        self.recent_updates = SharedRecentIds(RedisSettings.from_env(), _dedup_ttl_s())
        self._output: Optional[TelegramOutput] = None

    def get_output_channel(self) -> TelegramOutput:
        # Cached and network-free: the Rasa HTTP API calls this for every `output_channel=telegram` push.
        if self._output is None:
            self._output = TelegramOutput(BotApi(self.settings.token, self.settings.api_url), self.payloads)
        return self._output

    def _authorised(self, request: Request) -> bool:
        given = request.headers.get(SECRET_HEADER, "")
        return hmac.compare_digest(given.encode(), self.settings.secret_token.encode())

    @staticmethod
    def _clean_text(text: str) -> str:
        text = _LEADING_BOT_MENTION.sub("", text.strip())
        text = _COMMAND_WITH_BOT.sub(r"/\1", text)
        if text == "/start" or text.startswith("/start "):
            return "/start"  # deep-link parameters are not ours to interpret
        return text

    def _button_title(self, callback: Dict[str, Any], data: str) -> Optional[str]:
        markup = (callback.get("message") or {}).get("reply_markup") or {}
        for row in markup.get("inline_keyboard") or []:
            for key in row:
                if isinstance(key, dict) and key.get("callback_data") == data:
                    return key.get("text")
        return None

    def _extract(self, update: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        """(text, chat, sender, callback id) of an update we act on, else None."""
        callback = update.get("callback_query")
        if isinstance(callback, dict):
            message = callback.get("message") or {}
            data = str(callback.get("data") or "")
            text = self.payloads.unpack(data)
            if text is None:  # a token issued before a restart: the pressed button's title says the same
                text = self._button_title(callback, data)
            return {"text": text, "chat": message.get("chat") or {}, "from": callback.get("from") or {},
                    "callback_id": callback.get("id")}
        for kind in ("message", "edited_message"):
            message = update.get(kind)
            if isinstance(message, dict):
                sender = message.get("from") or {}
                if sender.get("is_bot"):
                    return None
                text = message.get("text") or message.get("caption")
                return {"text": self._clean_text(text) if isinstance(text, str) else None,
                        "chat": message.get("chat") or {}, "from": sender, "callback_id": None,
                        "document": message.get("document")}
        return None

    def blueprint(self, on_new_message: Callable[[UserMessage], Awaitable[Any]]) -> Blueprint:
        telegram_webhook = Blueprint("custom_telegram_webhook", __name__)

        @telegram_webhook.route("/", methods=["GET"])
        async def health(_: Request) -> HTTPResponse:
            return response.json({"status": "ok"})

        @telegram_webhook.route("/webhook", methods=["POST"])
        async def receive(request: Request) -> HTTPResponse:
            if not self._authorised(request):
                return response.json({"status": "forbidden"}, status=403)
            try:
                update = json.loads(request.body or b"")
            except (ValueError, UnicodeDecodeError, RecursionError):  # nested too deeply: no update either
                logger.warning("Telegram webhook: body is not JSON; ignored")
                return response.json({"status": "ignored", "reason": "malformed"})
            if not isinstance(update, dict) or not isinstance(update.get("update_id"), int):
                return response.json({"status": "ignored", "reason": "not an update"})
            if not await self.recent_updates.first_time(update["update_id"]):
                return response.json({"status": "ignored", "reason": "duplicate"})
            try:
                await self._handle(update, on_new_message)
            except Exception:  # noqa: BLE001 - a 500 makes Telegram retry the same update for hours
                logger.exception("Telegram update %s failed", update.get("update_id"))
                return response.json({"status": "error"})
            return response.json({"status": "ok"})

        return telegram_webhook

    async def _handle(self, update: Dict[str, Any], on_new_message: Callable[[UserMessage], Awaitable[Any]]) -> None:
        found = self._extract(update)
        if found is None:
            logger.debug("Telegram update %s of kind %s ignored", update.get("update_id"),
                         [k for k in update if k != "update_id"])
            return
        out = self.get_output_channel()
        if found["callback_id"]:
            await out.answer_callback_query(str(found["callback_id"]))  # stops the button's spinner at once
        text, chat, sender = found["text"], found["chat"], found["from"]
        if chat.get("id") is None:
            return
        conversation = str(chat["id"])
        # Per chat only: every update comes from Telegram's own addresses (issue 20, finding 6); before a document
        # is fetched and measured, so a flood of files costs no work either.
        if not limiter().message_allowed(conversation):
            hint = {"locale": str(sender.get("language_code") or "")}
            language = await conversation_language(conversation, text or "", hint)
            await out.send_text_message(conversation, channel_answer(
                "rate_limited", language, seconds=limiter().retry_after_s(conversation)))
            return
        if found.get("document") and chat.get("id") is not None:  # a training file: the data check (issue 23)
            from bot.dataset.telegram_upload import document_payload

            await out.send_chat_action(str(chat["id"]), "typing")
            text = await document_payload(out.api, found["document"], str(chat["id"]))
        elif text and text.lstrip().startswith("/dataset_upload"):
            return  # the data check's payload only ever comes from a document, never typed
        if not text or chat.get("id") is None:
            return
        # "typing…" in the user's app while the assistant works (Telegram clears it with the first reply).
        await out.send_chat_action(str(chat["id"]), "typing")
        language_code = str(sender.get("language_code") or "")
        metadata: Dict[str, Any] = {"telegram": {
            "update_id": update["update_id"],
            "chat_id": chat.get("id"),
            "chat_type": chat.get("type"),
            "user_id": sender.get("id"),
            "language_code": language_code or None,
        }}
        base_language = language_code.split("-")[0].lower()
        if text == "/start" and base_language in ASSISTANT_LANGUAGES:
            metadata[LANGUAGE_HINT_KEY] = base_language
            text = "/start" + json.dumps({"language": base_language})
        # the same 4,000-character limit as the other channels (limits.py), not stored; a data check's figures are ours
        if not found.get("document") and too_long(text):
            language = await conversation_language(conversation, text, {"locale": language_code})
            await out.send_text_message(conversation, too_long_answer(text, {"locale": language_code}, language))
            return
        answered = False
        try:
            await on_new_message(UserMessage(text, out, conversation, input_channel=self.name(), metadata=metadata))
            answered = True
        except Exception:
            # The customer is told in the conversation's language; the update is not retried (answered 200).
            language = await conversation_language(conversation, text, {"locale": language_code})
            await out.send_text_message(conversation, channel_answer("server_error", language))
            raise
        finally:
            if found.get("document"):  # the data check's masked copy, after its summary (deleted either way)
                from bot.dataset.telegram_upload import send_masked_copy

                language = await conversation_language(conversation) if answered else None
                await send_masked_copy(out.api, conversation, language, send=answered)
