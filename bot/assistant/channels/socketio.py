"""socket.io channel that keeps working whatever python-socketio 5.x is installed.

Rasa 3.6 calls `sio.enter_room(...)` without `await` (rasa/core/channels/socketio.py:236). From python-socketio 5.10
on, `AsyncServer.enter_room` is a coroutine, so the client never joins its room and with `session_persistence`
every bot reply is lost (RasaHQ/rasa#13027). The project pins python-socketio 5.9.0; this subclass also awaits
the call when it is a coroutine, so an upgrade cannot silently break the website widget.

Credentials key: `bot.assistant.channels.socketio.SocketIOInput` (same settings as Rasa's `socketio`, same name, so the
URL stays /socket.io and `output_channel=socketio` keeps working).

Several Rasa instances: with REDIS_HOST set, every instance's socket.io server shares rooms through Redis
(ResilientRedisManager below), so a reply emitted by any instance reaches the widget connected to another one.
"""
from __future__ import annotations

import asyncio
import inspect
import logging
import pickle
from typing import Any, Awaitable, Callable, Optional

from rasa.core.channels import socketio as rasa_socketio
from rasa.core.channels.channel import UserMessage
from sanic import Blueprint
from socketio import AsyncManager, AsyncRedisManager, AsyncServer
from socketio.asyncio_redis_manager import RedisError

from bot.assistant.redis_settings import CONNECT_TIMEOUT_S, SOCKET_TIMEOUT_S, RedisSettings

logger = logging.getLogger(__name__)


class ResilientRedisManager(AsyncRedisManager):
    """socket.io across Rasa instances through Redis pub/sub, that keeps one instance working when Redis is down.

    A bot reply (or a staff reply pushed through any instance's HTTP API) is emitted to the room of the customer's
    session; with this manager the emit goes through Redis to every instance, and the one holding the customer's
    socket delivers it. python-socketio 5.9.0's AsyncRedisManager gives up on a failed publish (the message is lost)
    and, when Redis is down as its listener starts, retries in a tight loop; here a publish that reaches nobody is
    delivered by this instance itself, and the listener retries every few seconds.
    """

    def __init__(self, url: str, channel: str) -> None:
        super().__init__(url, channel=channel, redis_options={
            "socket_connect_timeout": CONNECT_TIMEOUT_S, "health_check_interval": 10})
        self.listening = False

    async def emit(self, event, data, namespace=None, room=None, skip_sid=None, callback=None, **kwargs):
        if kwargs.get("ignore_queue") or callback is not None:
            return await super().emit(event, data, namespace=namespace, room=room, skip_sid=skip_sid,
                                      callback=callback, **kwargs)
        try:
            receivers = await asyncio.wait_for(self.redis.publish(self.channel, pickle.dumps({
                "method": "emit", "event": event, "data": data, "namespace": namespace or "/", "room": room,
                "skip_sid": skip_sid, "callback": None, "host_id": self.host_id})), SOCKET_TIMEOUT_S)
        except (RedisError, OSError, asyncio.TimeoutError) as error:
            logger.warning("socket.io: Redis unavailable (%s); delivering on this instance only", error)
            receivers = 0
        if not receivers:  # nobody listens (Redis down, or our listener is reconnecting): deliver here
            await AsyncManager.emit(self, event, data, namespace=namespace or "/", room=room, skip_sid=skip_sid)

    async def _listen(self):
        channel = self.channel.encode("utf-8")
        retry_s = 1.0
        while True:
            try:
                await self.pubsub.subscribe(self.channel)
                self.listening = True
                retry_s = 1.0
                async for message in self.pubsub.listen():
                    if message["channel"] == channel and message["type"] == "message" and "data" in message:
                        yield message["data"]
            except (RedisError, OSError) as error:
                self.listening = False
                logger.warning("socket.io: Redis listener lost (%s); retrying in %.0f s", error, retry_s)
                await asyncio.sleep(retry_s)
                retry_s = min(retry_s * 2, 5.0)
                self._redis_connect()


def client_manager_from_env() -> Optional[ResilientRedisManager]:
    settings = RedisSettings.from_env()
    if settings is None:
        return None
    return ResilientRedisManager(settings.url, channel=f"{settings.prefix}-socketio")


class _RoomAwaitingServer(AsyncServer):
    """AsyncServer whose enter_room also works when called without await (python-socketio >= 5.10).

    With REDIS_HOST set (bot/assistant/redis_settings.py) it shares its rooms with the other Rasa instances through
    ResilientRedisManager.
    """

    def __init__(self, *args, **kwargs):
        if "client_manager" not in kwargs:
            manager = client_manager_from_env()
            if manager is not None:
                kwargs["client_manager"] = manager
        super().__init__(*args, **kwargs)

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
