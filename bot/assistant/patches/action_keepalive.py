"""Calls to the action server over kept-alive connections instead of a new HTTP client and TCP connection per call.

Rasa 3.6's `EndpointConfig.request` opens a new `aiohttp.ClientSession` for every request and closes it afterwards,
so each custom-action call (two or three per form turn) pays for a client, a TCP connection and its teardown on
both servers: about 5 % of the Rasa server's CPU time in a py-spy profile under load (issue 10). Here each endpoint
keeps one client session per event loop; `request` is unchanged otherwise (same headers, auth, timeout, errors).

Idle connections are dropped after KEEPALIVE_S, below the 5 s after which Sanic (the action server) closes them.
That alone is what Rasa 3.6.11 shipped and 3.6.15 reverted (connection errors): a server (or proxy) that closes
idle connections sooner, while Rasa's event loop is busy with a turn, leaves a dead connection in the pool that
looks alive, and the next call fails on it ("Couldn't connect"). So a call whose *reused* connection turns out
closed before any answer came back (aiohttp's ServerDisconnectedError or a reset) is sent once more on a new
connection: the server closed that connection idle, it never saw the request. aiohttp tells a reused connection by
its public tracing signal (on_connection_reuseconn). tests/test_rasa_patches.py closes idle connections after
0.2 s, with the loop free and with the loop blocked, and every call still succeeds.

The call's JSON (the tracker and the domain) is written by ujson (a dependency of Sanic, so of Rasa) instead of the
standard library: serialising it was 5 % of the Rasa server's CPU time under load (issue 10). Values ujson does not
write (NaN, bytes, odd keys) fall back to `json.dumps`, so the body always parses to what Rasa would send. Persian
and Turkish letters are written as UTF-8 (2 bytes), not as \\uXXXX escapes (6 bytes): the bot's answers in the
events sent are mostly such letters.
Installed by bot/assistant/patches/__init__.py.
"""
from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Dict, Tuple, cast

from bot.assistant.patches.import_hooks import is_patched, replace, when_imported

try:
    import ujson
except ImportError:  # a dependency of Sanic, so of Rasa; the standard library writes the same JSON
    ujson = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)

ENDPOINTS_MODULE = "rasa.utils.endpoints"
PATCH_MARKER = "_advisor_kept_session"
KEEPALIVE_S = 3.0  # Sanic's default keep_alive_timeout is 5 s


class _KeptSession:
    """Stands in for `async with ClientSession(...) as session`: hands out the kept session, never closes it."""

    def __init__(self, session: Any) -> None:
        self._session = session

    async def __aenter__(self) -> Any:
        return _RetryOnStaleConnection(self._session)

    async def __aexit__(self, *_exc: Any) -> None:
        return None


class _Attempt:
    """The trace context of one request: whether aiohttp took its connection from the pool."""

    def __init__(self) -> None:
        self.reused = False


async def _note_reuse(_session: Any, context: Any, _params: Any) -> None:
    if isinstance(context.trace_request_ctx, _Attempt):
        context.trace_request_ctx.reused = True


class _RetryOnStaleConnection:
    """The session as `EndpointConfig.request` uses it (`async with session.request(...) as response`), sending a
    request once more when its reused connection was found closed before any answer."""

    def __init__(self, session: Any) -> None:
        self._session = session

    def request(self, method: str, url: Any, **kwargs: Any) -> "_Response":
        return _Response(self._session, method, url, kwargs)


class _Response:
    def __init__(self, session: Any, method: str, url: Any, kwargs: Dict[str, Any]) -> None:
        self._session, self._method, self._url, self._kwargs = session, method, url, kwargs
        self._response: Any = None

    async def __aenter__(self) -> Any:
        import aiohttp

        attempt = _Attempt()
        try:
            self._response = await self._session.request(self._method, self._url, trace_request_ctx=attempt,
                                                         **self._kwargs)
        except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError):
            if not attempt.reused:
                raise
            logger.debug("Kept-alive connection to %s was closed by the server; sent on a new one", self._url)
            self._response = await self._session.request(self._method, self._url, **self._kwargs)
        return self._response

    async def __aexit__(self, *_exc: Any) -> None:
        self._response.release()


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
            tracing = aiohttp.TraceConfig()
            cast(Any, tracing.on_connection_reuseconn).append(_note_reuse)  # aiohttp types the list oddly
            client = aiohttp.ClientSession(
                headers=fresh.headers, auth=fresh.auth, timeout=fresh.timeout, trace_configs=[tracing],
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
    replace(config, "session", _kept_session_factory(config.session))
    logger.debug("Action-server calls keep their connections alive (bot.assistant.patches.action_keepalive)")


def is_installed() -> bool:
    return is_patched(ENDPOINTS_MODULE, "EndpointConfig.session", PATCH_MARKER)


def install() -> None:
    """Patch now if Rasa's endpoints module is loaded, otherwise as soon as it is."""
    when_imported(ENDPOINTS_MODULE, patch_endpoints)
