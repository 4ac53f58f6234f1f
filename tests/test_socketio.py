"""socket.io (the website widget's transport) and the token on the Rasa HTTP API.

Rasa 3.6 calls `sio.enter_room(...)` without await; with python-socketio >= 5.10 that is a coroutine, the client
never joins its room, and with session_persistence every bot reply is lost (research notes §0.1). The project
pins python-socketio 5.9.0 and bot.assistant.channels.socketio.SocketIOInput awaits the call when needed; these tests
cover both.
"""
from __future__ import annotations

import asyncio
import inspect
import re
import urllib.error
import urllib.request

import pytest
import socketio

PERSIAN = re.compile(r"[\u0600-\u06FF]")


def test_installed_python_socketio_keeps_enter_room_synchronous():
    # Rasa 3.6.21 calls enter_room without await; a coroutine here means silently lost widget replies.
    assert not inspect.iscoroutinefunction(socketio.AsyncServer.enter_room), socketio.__version__


async def test_our_channel_joins_the_room_even_when_enter_room_is_a_coroutine(monkeypatch):
    from bot.assistant.channels.socketio import _RoomAwaitingServer

    joined = []

    async def coroutine_enter_room(self, sid, room, namespace=None):  # python-socketio >= 5.10 behaviour
        joined.append((sid, room))

    monkeypatch.setattr(socketio.AsyncServer, "enter_room", coroutine_enter_room)
    server = _RoomAwaitingServer(async_mode="asgi")
    server.enter_room("sid-1", "session-1")  # called the way Rasa 3.6 calls it: no await
    await asyncio.sleep(0)
    assert joined == [("sid-1", "session-1")]


async def converse_over_socketio(base_url: str, text: str, timeout: float = 60.0) -> list:
    """session_request, then user_uttered; returns the bot_uttered payloads of that turn."""
    client = socketio.AsyncClient(reconnection=False)
    replies: list = []
    confirmed = asyncio.Event()
    got_reply = asyncio.Event()
    session: dict = {}

    @client.on("session_confirm")
    async def on_confirm(data):
        session.update(data)  # the server issues the session: {session_id, session_token}
        confirmed.set()

    @client.on("bot_uttered")
    async def on_bot(data):
        replies.append(data)
        got_reply.set()

    # Polling only: the resolved python-engineio client's websocket transport needs aiohttp >= 3.10 (§3.2).
    await client.connect(base_url, transports=["polling"], socketio_path="/socket.io")
    try:
        await client.emit("session_request", {})
        await asyncio.wait_for(confirmed.wait(), timeout)
        await client.emit("user_uttered", {"message": text, **session})
        await asyncio.wait_for(got_reply.wait(), timeout)
        await asyncio.sleep(1.0)  # the rest of the turn's messages
    finally:
        await client.disconnect()
    return replies


@pytest.mark.e2e
async def test_bot_uttered_arrives_with_session_persistence(rasa_server):
    replies = await converse_over_socketio(rasa_server.url, "سلام")
    texts = [r.get("text", "") for r in replies]
    assert any(PERSIAN.search(t) for t in texts), replies
    buttons = [b for r in replies for b in r.get("quick_replies", [])]
    assert all(b["payload"].startswith("/") for b in buttons)


@pytest.mark.e2e
def test_rasa_http_api_refuses_calls_without_the_token(rasa_server):
    for path in ("/conversations/someone/tracker", "/status"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{rasa_server.url}{path}", timeout=10)
        assert refused.value.code in (401, 403), path
        with pytest.raises(urllib.error.HTTPError) as wrong:
            urllib.request.urlopen(f"{rasa_server.url}{path}?token=not-the-token", timeout=10)
        assert wrong.value.code in (401, 403), path
    token = rasa_server.extra["auth_token"]
    with urllib.request.urlopen(f"{rasa_server.url}/conversations/someone/tracker?token={token}", timeout=10) as ok:
        assert ok.status == 200


@pytest.mark.e2e
def test_rest_channel_stays_available(conversation):
    assert PERSIAN.search(conversation().say_text("سلام"))
