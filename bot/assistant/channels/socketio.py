"""socket.io channel that keeps working whatever python-socketio 5.x is installed.

Rasa 3.6 calls `sio.enter_room(...)` without `await` (rasa/core/channels/socketio.py:236). From python-socketio 5.10
on, `AsyncServer.enter_room` is a coroutine, so the client never joins its room and with `session_persistence`
every bot reply is lost (RasaHQ/rasa#13027). The project pins python-socketio 5.9.0; this subclass also awaits
the call when it is a coroutine, so an upgrade cannot silently break the website widget.

Credentials key: `bot.assistant.channels.socketio.SocketIOInput` (same settings as Rasa's `socketio`, same name, so the
URL stays /socket.io and `output_channel=socketio` keeps working).
"""
from __future__ import annotations

import inspect
from typing import Any, Awaitable, Callable

from rasa.core.channels import socketio as rasa_socketio
from rasa.core.channels.channel import UserMessage
from sanic import Blueprint
from socketio import AsyncServer


class _RoomAwaitingServer(AsyncServer):
    """AsyncServer whose enter_room also works when called without await (python-socketio >= 5.10)."""

    def enter_room(self, sid, room, namespace=None):  # type: ignore[override]
        result = super().enter_room(sid, room, namespace=namespace)
        if inspect.isawaitable(result):
            # Called un-awaited by Rasa from inside a coroutine: run it as a task on the running loop. The
            # room join in 5.10+ is synchronous work wrapped in a coroutine, so it completes before the next
            # emit on this loop is processed.
            import asyncio

            return asyncio.ensure_future(result)
        return result


class SocketIOInput(rasa_socketio.SocketIOInput):
    def blueprint(self, on_new_message: Callable[[UserMessage], Awaitable[Any]]) -> Blueprint:
        # Sessions bound to a server-issued token, checked input, allowed origins only: socketio_sessions.py.
        # cors_allowed_origins=[] leaves CORS headers to Rasa's --cors (a second header would break browsers).
        from bot.assistant.channels.socketio_sessions import secure_blueprint

        return secure_blueprint(self, _RoomAwaitingServer(async_mode="sanic", cors_allowed_origins=[]), on_new_message)
