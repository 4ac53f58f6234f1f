"""Calls to the action server over kept-alive connections instead of a new HTTP client and TCP connection per call.

Rasa 3.6's `EndpointConfig.request` opens a new `aiohttp.ClientSession` for every request and closes it afterwards,
so each custom-action call (two or three per form turn) pays for a client, a TCP connection and its teardown on
both servers: about 5 % of the Rasa server's CPU time in a py-spy profile under load (issue 10). Here each endpoint
keeps one client session per event loop; `request` is unchanged otherwise (same headers, auth, timeout, errors).

Idle connections are dropped after KEEPALIVE_S, below the 5 s after which Sanic (the action server) closes them,
so a request is never sent on a connection the server is closing.

The call's JSON (the tracker and the domain) is written by ujson (a dependency of Sanic, so of Rasa) instead of the
standard library: serialising it was 5 % of the Rasa server's CPU time under load (issue 10). Values ujson does not
write (NaN, bytes, odd keys) fall back to `json.dumps`, so the body always parses to what Rasa would send. Persian
and Turkish letters are written as UTF-8 (2 bytes), not as \\uXXXX escapes (6 bytes): the bot's answers in the
events sent are mostly such letters.
Installed by importing `bot.assistant`.
"""
from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Dict, Tuple

from bot.assistant.import_hooks import is_patched, when_imported

try:
    import ujson
except ImportError:  # a dependency of Sanic, so of Rasa; the standard library writes the same JSON
    ujson = None

logger = logging.getLogger(__name__)

ENDPOINTS_MODULE = "rasa.utils.endpoints"
PATCH_MARKER = "_advisor_kept_session"
KEEPALIVE_S = 3.0  # Sanic's default keep_alive_timeout is 5 s


class _KeptSession:
    """Stands in for `async with ClientSession(...) as session`: hands out the kept session, never closes it."""

    def __init__(self, session: Any) -> None:
        self._session = session

    async def __aenter__(self) -> Any:
        return self._session

    async def __aexit__(self, *_exc: Any) -> None:
        return None


def json_body(value: Any) -> str:
    """JSON text of an action call: ujson's, or the standard library's where ujson refuses the value."""
    if ujson is not None:
        try:
            text = ujson.dumps(value, ensure_ascii=False, escape_forward_slashes=False)
            text.encode("utf-8")  # a lone surrogate (from a "\ud800" escape in a message) is not UTF-8: escaped below
            return text
        except (TypeError, ValueError, OverflowError, UnicodeEncodeError):
            pass
    return json.dumps(value)


def json_copy(value: Any) -> Any:
    """`value` as the receiver of its call JSON reads it: a fresh copy made of JSON values (in-process actions)."""
    text = json_body(value)
    return ujson.loads(text) if ujson is not None else json.loads(text)


def _kept_session_factory(original_session: Any) -> Any:
    import aiohttp

    def session(self: Any) -> Any:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not inside a running loop: Rasa's own behaviour
            return original_session(self)
        kept: Dict[int, Tuple[Any, aiohttp.ClientSession]] = self.__dict__.setdefault(PATCH_MARKER, {})
        kept_loop, client = kept.get(id(loop), (None, None))
        if client is None or client.closed or kept_loop is not loop:
            fresh = original_session(self)  # headers, auth and timeout as Rasa sets them
            client = aiohttp.ClientSession(
                headers=fresh.headers, auth=fresh.auth, timeout=fresh.timeout,
                connector=aiohttp.TCPConnector(keepalive_timeout=KEEPALIVE_S), json_serialize=json_body)
            asyncio.ensure_future(fresh.close())  # never used; closing it frees nothing but is tidy
            kept[id(loop)] = (loop, client)
        return _KeptSession(client)

    setattr(session, PATCH_MARKER, True)
    return session


def patch_endpoints(module: Any) -> None:
    """Replace EndpointConfig.session in Rasa's loaded endpoints module (idempotent)."""
    config = module.EndpointConfig
    if getattr(config.session, PATCH_MARKER, False):
        return
    config.session = _kept_session_factory(config.session)
    logger.debug("Action-server calls keep their connections alive (bot.assistant.action_keepalive)")


def is_installed() -> bool:
    return is_patched(ENDPOINTS_MODULE, "EndpointConfig.session", PATCH_MARKER)


def install() -> None:
    """Patch now if Rasa's endpoints module is loaded, otherwise as soon as it is."""
    when_imported(ENDPOINTS_MODULE, patch_endpoints)


install()
