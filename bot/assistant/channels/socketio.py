"""socket.io channel that keeps working whatever python-socketio 5.x is installed.

Rasa 3.6 calls `sio.enter_room(...)` without `await` (rasa/core/channels/socketio.py:236). From python-socketio 5.10
on, `AsyncServer.enter_room` is a coroutine, so the client never joins its room and with `session_persistence`
every bot reply is lost (RasaHQ/rasa#13027). The project pins python-socketio 5.9.0; this subclass also awaits
the call when it is a coroutine, so an upgrade cannot silently break the website widget.

Credentials key: `bot.assistant.channels.socketio.SocketIOInput` (same settings as Rasa's `socketio`, same name, so the
URL stays /socket.io and `output_channel=socketio` keeps working).

Several Rasa instances: with REDIS_HOST set, every instance's socket.io server shares rooms through Redis
(ResilientRedisManager below), so a reply emitted by any instance reaches the widget connected to another one.
What goes through Redis is JSON signed with HMAC-SHA256 under a key derived from SOCKET_SESSION_SECRET, which every
instance shares: python-socketio's own manager publishes pickles and unpickles whatever arrives on the channel, so
anyone able to publish on the Redis ran code in every Rasa instance (issue 20, finding 4). A message that is not
signed JSON is dropped unread.
"""
from __future__ import annotations

import asyncio
import hashlib
import hmac
import inspect
import json
import logging
from typing import Any, Awaitable, Callable, Dict, Optional

from rasa.core.channels import socketio as rasa_socketio
from rasa.core.channels.channel import UserMessage
from sanic import Blueprint
from socketio import AsyncManager, AsyncRedisManager, AsyncServer
from socketio.asyncio_redis_manager import RedisError

from bot.assistant.redis_settings import CONNECT_TIMEOUT_S, SOCKET_TIMEOUT_S, RedisSettings

logger = logging.getLogger(__name__)

# Marks (and versions) the signed messages on the channel; anything else is not ours.
ENVELOPE_PREFIX = b"gpuadvisor-sio1:"
# What the pub/sub manager may be asked to do by another instance; "callback" (acknowledgements across instances)
# is not used by the product.
ACCEPTED_METHODS = ("emit", "disconnect", "close_room")


def channel_key(secret: Optional[bytes] = None) -> bytes:
    """The HMAC key of the Redis channel, derived from the secret every instance shares (its sessions' secret)."""
    from bot.assistant.channels.socketio_sessions import session_secret

    return hmac.new(secret or session_secret(), b"socketio-redis-channel", hashlib.sha256).digest()


def encode_message(data: Dict[str, Any], key: bytes) -> bytes:
    """`data` as signed JSON: ENVELOPE_PREFIX, the hex HMAC-SHA256 of the JSON, ":", the JSON."""
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return ENVELOPE_PREFIX + hmac.new(key, body, hashlib.sha256).hexdigest().encode() + b":" + body


def decode_message(raw: Any, key: bytes) -> Optional[Dict[str, Any]]:
    """The message published by an instance holding `key`, or None for anything else (never unpickled)."""
    if not isinstance(raw, bytes) or not raw.startswith(ENVELOPE_PREFIX):
        return None
    mac, _, body = raw[len(ENVELOPE_PREFIX):].partition(b":")
    if not hmac.compare_digest(mac, hmac.new(key, body, hashlib.sha256).hexdigest().encode()):
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("method") not in ACCEPTED_METHODS:
        return None
    return data


class ResilientRedisManager(AsyncRedisManager):
    """socket.io across Rasa instances through Redis pub/sub, that keeps one instance working when Redis is down.

    A bot reply (or a staff reply pushed through any instance's HTTP API) is emitted to the room of the customer's
    session; with this manager the emit goes through Redis to every instance, and the one holding the customer's
    socket delivers it. python-socketio 5.9.0's AsyncRedisManager gives up on a failed publish (the message is lost)
    and, when Redis is down as its listener starts, retries in a tight loop; here a publish that reaches nobody is
    delivered by this instance itself, and the listener retries every few seconds. Messages are signed JSON
    (encode_message), never pickles.
    """

    def __init__(self, url: str, channel: str, key: Optional[bytes] = None) -> None:
        super().__init__(url, channel=channel, redis_options={
            "socket_connect_timeout": CONNECT_TIMEOUT_S, "health_check_interval": 10})
        self.listening = False
        self.key = key or channel_key()

    async def _publish(self, data):
        # disconnect / close_room of python-socketio's pub/sub manager: signed JSON instead of its pickle.
        try:
            return await asyncio.wait_for(self.redis.publish(self.channel, encode_message(data, self.key)),
                                          SOCKET_TIMEOUT_S)
        except (RedisError, OSError, asyncio.TimeoutError, TypeError, ValueError) as error:
            logger.warning("socket.io: could not publish %s through Redis (%s)", data.get("method"), error)
            return 0

    async def emit(self, event, data, namespace=None, room=None, skip_sid=None, callback=None, **kwargs):
        if kwargs.get("ignore_queue") or callback is not None:
            return await super().emit(event, data, namespace=namespace, room=room, skip_sid=skip_sid,
                                      callback=callback, **kwargs)
        try:
            message = encode_message({
                "method": "emit", "event": event, "data": data, "namespace": namespace or "/", "room": room,
                "skip_sid": skip_sid, "callback": None, "host_id": self.host_id}, self.key)
            receivers = await asyncio.wait_for(self.redis.publish(self.channel, message), SOCKET_TIMEOUT_S)
        except (RedisError, OSError, asyncio.TimeoutError) as error:
            logger.warning("socket.io: Redis unavailable (%s); delivering on this instance only", error)
            receivers = 0
        except (TypeError, ValueError) as error:  # not JSON: cannot cross instances, deliver here
            logger.warning("socket.io: %s event not JSON-serialisable (%s); delivering on this instance only",
                           event, error)
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
                        # A dict is taken as it is by the pub/sub manager's reader: raw bytes never reach its
                        # pickle.loads.
                        data = decode_message(message["data"], self.key)
                        if data is None:
                            logger.warning("socket.io: dropped a message on the Redis channel that is not signed "
                                           "by an instance of this deployment")
                            continue
                        yield data
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
