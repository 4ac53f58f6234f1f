"""Telegram Bot API pieces that need no Rasa: settings from the environment, a small aiohttp client, message
splitting and callback-data packing. Used by the Rasa channel (bot/assistant/channels/telegram.py) and by the
`gpu-advisor telegram set-webhook` command (bot/assistant/channels/telegram_cli.py)."""
from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional

import aiohttp

logger = logging.getLogger(__name__)

DEFAULT_API_URL = "https://api.telegram.org"
WEBHOOK_PATH = "/webhooks/telegram/webhook"
# The only update kinds the channel acts on; Telegram stops sending the rest once the webhook says so.
ALLOWED_UPDATES = ["message", "edited_message", "callback_query"]
# Bot API sendMessage: "Text of the message to be sent, 1-4096 characters after entities parsing",
# counted in UTF-16 code units (https://core.telegram.org/bots/api#sendmessage).
MAX_MESSAGE_UTF16 = 4096
# Bot API InlineKeyboardButton.callback_data: "Data to be sent in a callback query, 1-64 bytes".
MAX_CALLBACK_BYTES = 64
# Bot API setWebhook.secret_token: "1-256 characters. Only characters A-Z, a-z, 0-9, _ and - are allowed".
SECRET_TOKEN_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,256}$")


class TelegramConfigError(ValueError):
    """The Telegram settings are missing or malformed."""


@dataclass(frozen=True)
class TelegramSettings:
    token: str
    secret_token: str
    webhook_url: Optional[str]
    api_url: str = DEFAULT_API_URL

    @classmethod
    def from_env(cls, overrides: Optional[Dict[str, Any]] = None, environ=None) -> "TelegramSettings":
        """Read TELEGRAM_TOKEN, TELEGRAM_SECRET_TOKEN, TELEGRAM_WEBHOOK_URL and TELEGRAM_API_URL.

        Values in `overrides` (the channel's credentials entry) win over the environment.
        """
        env = os.environ if environ is None else environ
        given = {k: v for k, v in (overrides or {}).items() if v not in (None, "")}
        token = str(given.get("access_token") or env.get("TELEGRAM_TOKEN") or "")
        secret = str(given.get("secret_token") or env.get("TELEGRAM_SECRET_TOKEN") or "")
        webhook_url = given.get("webhook_url") or env.get("TELEGRAM_WEBHOOK_URL") or None
        api_url = str(given.get("api_url") or env.get("TELEGRAM_API_URL") or DEFAULT_API_URL).rstrip("/")
        if not re.match(r"^\d+:[A-Za-z0-9_-]+$", token):
            raise TelegramConfigError("TELEGRAM_TOKEN is missing or not a bot token like '123456:ABC-def'")
        if not SECRET_TOKEN_PATTERN.match(secret):
            raise TelegramConfigError(
                "TELEGRAM_SECRET_TOKEN is missing or invalid (1-256 characters of A-Z a-z 0-9 _ -); "
                "without it anybody could post updates to the webhook")
        return cls(token=token, secret_token=secret, webhook_url=webhook_url, api_url=api_url)


class BotApiError(RuntimeError):
    """The Bot API answered ok=false or could not be reached."""


class BotApi:
    """Minimal async Bot API client (aiogram 2.15 cannot send `secret_token` nor change the base URL)."""

    def __init__(self, token: str, api_url: str = DEFAULT_API_URL, timeout_s: float = 30.0):
        self._token = token
        self.api_url = api_url.rstrip("/")
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)

    def _url(self, method: str) -> str:
        return f"{self.api_url}/bot{self._token}/{method}"

    def file_url(self, file_path: str) -> str:
        """Where a getFile path is downloaded (holds the token: never log it)."""
        return f"{self.api_url}/file/bot{self._token}/{file_path}"

    @staticmethod
    async def _result(method: str, resp: aiohttp.ClientResponse) -> Any:
        try:
            body = await resp.json(content_type=None)
        except (ValueError, aiohttp.ContentTypeError) as exc:
            raise BotApiError(f"{method}: HTTP {resp.status}, answer is not JSON") from exc
        if not isinstance(body, dict) or not body.get("ok"):
            description = body.get("description") if isinstance(body, dict) else None
            raise BotApiError(f"{method}: HTTP {resp.status}: {description}")
        return body.get("result")

    async def call(self, method: str, payload: Optional[Dict[str, Any]] = None) -> Any:
        try:
            async with aiohttp.ClientSession(timeout=self._timeout) as session:
                async with session.post(self._url(method), json=payload or {}) as resp:
                    return await self._result(method, resp)
        except aiohttp.ClientError as exc:  # the token is in the URL: never log the exception's URL
            raise BotApiError(f"{method}: cannot reach the Bot API at {self.api_url}: {type(exc).__name__}") from exc

    async def upload(self, method: str, fields: Dict[str, Any], file_field: str, path: Path,
                     file_name: Optional[str] = None, content_type: str = "image/png") -> Any:
        form = aiohttp.FormData()
        for key, value in fields.items():
            form.add_field(key, value if isinstance(value, str) else json.dumps(value))
        try:
            async with aiohttp.ClientSession(timeout=self._timeout) as session:
                with open(path, "rb") as handle:
                    form.add_field(file_field, handle, filename=file_name or path.name, content_type=content_type)
                    async with session.post(self._url(method), data=form) as resp:
                        return await self._result(method, resp)
        except aiohttp.ClientError as exc:
            raise BotApiError(f"{method}: cannot reach the Bot API at {self.api_url}: {type(exc).__name__}") from exc

    async def set_webhook(self, url: str, secret_token: str, drop_pending_updates: bool = False) -> Any:
        return await self.call("setWebhook", {
            "url": url,
            "secret_token": secret_token,
            "allowed_updates": ALLOWED_UPDATES,
            "drop_pending_updates": drop_pending_updates,
        })


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _prefix_within(text: str, limit_utf16: int) -> int:
    """Largest character index i such that text[:i] fits in limit_utf16 UTF-16 code units."""
    used = 0
    for index, char in enumerate(text):
        used += 2 if ord(char) > 0xFFFF else 1
        if used > limit_utf16:
            return index
    return len(text)


def split_message(text: str, limit_utf16: int = MAX_MESSAGE_UTF16) -> List[str]:
    """Split a long answer into Telegram messages, preferring paragraph, then line, then word boundaries.

    A word is only cut when it alone is longer than a whole message.
    """
    rest = text.strip()
    parts: List[str] = []
    while utf16_len(rest) > limit_utf16:
        end = _prefix_within(rest, limit_utf16)
        # One character more: whitespace right after the limit is itself a clean boundary (rest[:end] fits).
        window = rest[:end + 1]
        cut = -1
        for separator in ("\n\n", "\n"):
            position = window.rfind(separator)
            if position > end // 3:  # a boundary too near the start would leave a tiny message
                cut = position
                break
        if cut < 0:
            spaces = [m.start() for m in re.finditer(r"\s", window)]
            cut = spaces[-1] if spaces and spaces[-1] > 0 else end
        parts.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        parts.append(rest)
    return [p for p in parts if p]


class CallbackPayloads:
    """Maps button payloads to Telegram callback_data (ASCII, at most 64 bytes).

    Short ASCII payloads such as `/inform{"method":"qlora"}` travel as they are. Longer or non-ASCII payloads get a
    short token; the mapping lives in memory, and a token that is unknown (e.g. after a restart) is resolved from
    the pressed button's title instead (see TelegramInput).
    """

    PREFIX = "cb:"

    def __init__(self, capacity: int = 20000):
        self._by_token: "OrderedDict[str, str]" = OrderedDict()
        self._capacity = capacity

    @staticmethod
    def fits(payload: str) -> bool:
        return payload.isascii() and 0 < len(payload.encode()) <= MAX_CALLBACK_BYTES

    def pack(self, payload: str) -> str:
        if self.fits(payload) and not payload.startswith(self.PREFIX):
            return payload
        token = self.PREFIX + hashlib.sha256(payload.encode()).hexdigest()[:24]
        self._by_token[token] = payload
        self._by_token.move_to_end(token)
        while len(self._by_token) > self._capacity:
            self._by_token.popitem(last=False)
        return token

    def is_token(self, data: str) -> bool:
        return data.startswith(self.PREFIX)

    def unpack(self, data: str) -> Optional[str]:
        """The payload for callback_data; None for a token this process never issued."""
        if not self.is_token(data):
            return data
        return self._by_token.get(data)


class RecentIds:
    """Bounded memory of update_ids already taken, so Telegram's retries are not processed twice."""

    def __init__(self, capacity: int = 50000):
        self._seen: "OrderedDict[int, None]" = OrderedDict()
        self._capacity = capacity

    def first_time(self, update_id: int) -> bool:
        if update_id in self._seen:
            return False
        self._seen[update_id] = None
        while len(self._seen) > self._capacity:
            self._seen.popitem(last=False)
        return True
