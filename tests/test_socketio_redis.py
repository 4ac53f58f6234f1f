"""The socket.io rooms shared through Redis (real Redis on 127.0.0.1:6379) carry signed JSON, never pickles.

Issue 20, finding 4: python-socketio's AsyncRedisManager unpickles whatever is published on its channel, so anyone
able to publish on the Redis ran code in every Rasa instance. Two socket.io servers here stand for two Rasa
instances, each with bot.assistant.channels.socketio.ResilientRedisManager on one channel; what their clients would
receive is recorded where the engine.io packet would leave.
"""
from __future__ import annotations

import asyncio
import json
import os
import pickle
import uuid
from pathlib import Path
from typing import List, Tuple

import pytest
import redis
import socketio

from bot.assistant.channels.socketio import ResilientRedisManager, channel_key, encode_message

REDIS_URL = "redis://127.0.0.1:6379/0"
NAMESPACE = "/"


class _RecordingServer(socketio.AsyncServer):
    """A socket.io server whose packets to clients are recorded instead of sent."""

    def __init__(self, **kwargs):
        super().__init__(async_mode="aiohttp", **kwargs)
        self.sent: List[Tuple[str, str]] = []

    async def _send_eio_packet(self, eio_sid, eio_pkt):
        self.sent.append((eio_sid, str(eio_pkt.data)))


class _FileCreator:
    """Unpickling this creates `path`: the code an attacker would run."""

    def __init__(self, path: Path):
        self.path = path

    def __reduce__(self):
        return (Path.touch, (self.path,))


async def _instance(channel: str, key: bytes) -> Tuple[_RecordingServer, ResilientRedisManager]:
    manager = ResilientRedisManager(REDIS_URL, channel=channel, key=key)
    server = _RecordingServer(client_manager=manager)
    manager.initialize()  # starts the listener, as the first connection would
    for _ in range(50):
        if manager.listening:
            break
        await asyncio.sleep(0.1)
    assert manager.listening, "the listener did not subscribe to Redis"
    return server, manager


async def _wait_for(condition, timeout: float = 5.0) -> bool:
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        if condition():
            return True
        await asyncio.sleep(0.05)
    return condition()


@pytest.fixture
def channel():
    return f"t{uuid.uuid4().hex[:8]}-socketio"


async def _two_instances(channel: str):
    key = channel_key(b"test-secret-shared-by-both-instances")
    sender, sender_manager = await _instance(channel, key)
    receiver, receiver_manager = await _instance(channel, key)
    sid = receiver_manager.connect("eio-customer", NAMESPACE)
    receiver_manager.enter_room(sid, NAMESPACE, "web-session-1")
    return sender, sender_manager, receiver, receiver_manager, key


async def _stop(*managers: ResilientRedisManager) -> None:
    for manager in managers:
        manager.thread.cancel()
        await asyncio.gather(manager.thread, return_exceptions=True)


async def test_a_forged_pickle_on_the_channel_runs_nothing_and_real_emits_still_arrive(channel, tmp_path):
    sender, sender_manager, receiver, receiver_manager, key = await _two_instances(channel)
    try:
        marker = tmp_path / "pwned"
        forged = pickle.dumps({"method": "emit", "event": "bot_uttered", "data": _FileCreator(marker),
                               "namespace": NAMESPACE, "room": "web-session-1"})
        listeners = redis.Redis.from_url(REDIS_URL).publish(channel, forged)
        assert listeners == 2  # both instances were listening when the pickle arrived
        # The same with a forged signature: JSON, but not signed with the deployment's key.
        redis.Redis.from_url(REDIS_URL).publish(channel, encode_message(
            {"method": "emit", "event": "bot_uttered", "data": {"text": "forged"}, "namespace": NAMESPACE,
             "room": "web-session-1"}, channel_key(b"another-secret")))

        await sender.emit("bot_uttered", {"text": "سلام، از نمونه دیگر"}, room="web-session-1")

        assert await _wait_for(lambda: receiver.sent), "the legitimate emit did not cross to the other instance"
        assert len(receiver.sent) == 1, receiver.sent  # the forged JSON was dropped too
        assert json.loads(receiver.sent[0][1][1:]) == ["bot_uttered", {"text": "سلام، از نمونه دیگر"}]
        assert receiver.sent[0][0] == "eio-customer"
        assert not marker.exists(), "the forged pickle was unpickled: code from Redis ran in the instance"
    finally:
        await _stop(sender_manager, receiver_manager)


async def test_what_the_manager_publishes_is_signed_json(channel):
    key = channel_key(b"test-secret")
    manager = ResilientRedisManager(REDIS_URL, channel=channel, key=key)
    pubsub = redis.Redis.from_url(REDIS_URL).pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(channel)
    try:
        pubsub.get_message(timeout=1)
        await manager.emit("bot_uttered", {"text": "Merhaba"}, room="web-session-2")
        message = None
        for _ in range(20):
            message = pubsub.get_message(timeout=0.5)
            if message:
                break
        assert message is not None, "nothing was published"
        raw = message["data"]
        assert raw.startswith(b"gpuadvisor-sio1:")
        with pytest.raises(pickle.UnpicklingError):
            pickle.loads(raw)
        assert b'"text":"Merhaba"' in raw
    finally:
        pubsub.close()


def test_the_stock_manager_would_have_run_the_pickle(tmp_path):
    """The check above can fail: python-socketio's own reader unpickles the same bytes (this is what was fixed)."""
    marker = tmp_path / "pwned"
    pickle.loads(pickle.dumps({"data": _FileCreator(marker)}))  # what AsyncPubSubManager._thread does with bytes
    assert marker.exists()
    os.unlink(marker)


@pytest.fixture
def product_user(monkeypatch):
    """The product's ACL user on the real Redis, as scripts/cluster.sh creates it; removed afterwards."""
    from bot.assistant.redis_account import provision
    from bot.assistant.redis_settings import RedisSettings

    prefix = f"t{uuid.uuid4().hex[:8]}"
    env = {"REDIS_HOST": "127.0.0.1", "REDIS_PORT": "6379", "REDIS_USERNAME": f"advisor-{prefix}",
           "REDIS_PASSWORD": uuid.uuid4().hex, "REDIS_KEY_PREFIX": prefix}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = RedisSettings.from_env()
    warnings = provision(settings)
    try:
        yield settings, warnings
    finally:
        redis.Redis().execute_command("ACL", "DELUSER", settings.username)


async def test_the_product_signs_in_with_its_own_acl_user_limited_to_its_keys_and_channel(product_user):
    from rasa.utils.endpoints import EndpointConfig

    from bot.assistant.channels.socketio import client_manager_from_env
    from bot.assistant.lock_store import FailoverRedisLockStore

    settings, warnings = product_user
    # This machine's Redis lets anyone in (a shared test server): the operator is told so.
    assert any("without a password" in warning for warning in warnings), warnings
    own = redis.Redis(**settings.client_options())
    assert own.set(f"{settings.prefix}:probe", "1", ex=10)
    with pytest.raises(redis.exceptions.NoPermissionError):
        own.set("someone-else:probe", "1")
    with pytest.raises(redis.exceptions.NoPermissionError):
        own.flushall()
    with pytest.raises(redis.exceptions.NoPermissionError):
        own.publish("other-socketio", b"x")
    with pytest.raises(redis.exceptions.AuthenticationError):
        redis.Redis(host=settings.host, username=settings.username, password="wrong").ping()

    # The lock store and the socket.io manager take the account from the environment.
    store = FailoverRedisLockStore(EndpointConfig(url="127.0.0.1", key_prefix="gpuadvisor"))
    assert store.ping() and not store.redis_down
    lock = store.create_lock(f"conv-{uuid.uuid4().hex[:6]}")
    store.save_lock(lock)
    assert not store.redis_down, "the lock store fell back to memory: its Redis account was refused"
    manager = client_manager_from_env()
    assert await manager.redis.publish(manager.channel, b"ping") >= 0
