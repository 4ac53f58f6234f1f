"""The parts that let several Rasa instances share the work, without starting Rasa (real Redis on 127.0.0.1:6379).

The whole cluster is tested in tests/e2e/test_cluster.py; here each part on its own: atomic lock tickets across two
lock-store objects (two instances), the fallback when Redis is gone, Telegram ids shared through Redis, the socket.io
manager delivering locally without Redis, the action-call timeout and its answer, the store-failure language.
"""
from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import aiohttp
import pytest
import redis
from aiohttp import web

from bot.assistant.redis_settings import RedisSettings
from tests.cluster import RedisRelay
from tests.servers import free_port

ROOT = Path(__file__).resolve().parents[1]


def _lock_store(port: int = 6379, prefix: str = "t"):
    from rasa.utils.endpoints import EndpointConfig

    from bot.assistant.lock_store import FailoverRedisLockStore

    return FailoverRedisLockStore(EndpointConfig(url="127.0.0.1", port=port, key_prefix=prefix))


def test_two_instances_taking_tickets_at_the_same_moment_get_distinct_tickets():
    prefix = f"t{uuid.uuid4().hex[:8]}"
    instances = [_lock_store(prefix=prefix), _lock_store(prefix=prefix)]
    barrier = threading.Barrier(16)
    tickets = []

    def take(i: int) -> None:
        barrier.wait()
        tickets.append(instances[i % 2].issue_ticket("conversation"))

    threads = [threading.Thread(target=take, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(tickets) == list(range(16))  # Rasa's read-modify-write hands out duplicates here
    for ticket in tickets:
        instances[ticket % 2].cleanup("conversation", ticket)
    assert instances[0].get_lock("conversation") is None  # the last one out removes the lock


async def test_lock_store_serves_from_this_process_while_redis_is_gone_and_returns_to_redis():
    relay = RedisRelay()
    store = _lock_store(port=relay.port, prefix=f"t{uuid.uuid4().hex[:8]}")
    try:
        assert store.ping()
        relay.cut()
        started = time.monotonic()
        async with store.lock("c1"):
            assert store.redis_down
        assert time.monotonic() - started < 2
        assert not store.ping()
        relay.restore()
        assert store.ping() and not store.redis_down
        async with store.lock("c2"):
            assert store.red.exists(store.key_prefix + "c2")  # back in Redis
    finally:
        relay.close()


async def test_telegram_update_ids_are_shared_between_instances_with_an_expiry():
    from bot.assistant.channels.telegram import SharedRecentIds

    settings = RedisSettings(host="127.0.0.1", port=6379, prefix=f"t{uuid.uuid4().hex[:8]}")
    first, second = SharedRecentIds(settings, ttl_s=120), SharedRecentIds(settings, ttl_s=120)
    assert await first.first_time(42) is True
    assert await second.first_time(42) is False  # the other instance already took it
    assert 0 < redis.Redis(db=settings.db).ttl(f"{settings.prefix}:telegram:update:42") <= 120


async def test_telegram_de_duplication_falls_back_to_this_process_without_redis():
    from bot.assistant.channels.telegram import SharedRecentIds

    unreachable = RedisSettings(host="127.0.0.1", port=free_port(), prefix="t")
    ids = SharedRecentIds(unreachable, ttl_s=120)
    assert await ids.first_time(7) is True
    assert await ids.first_time(7) is False


async def test_socketio_manager_delivers_on_this_instance_when_redis_is_gone(monkeypatch):
    import socketio

    from bot.assistant.channels.socketio import ResilientRedisManager

    delivered = []

    async def local_emit(self, event, data, namespace, room=None, skip_sid=None, callback=None, **kwargs):
        delivered.append((event, data, room))

    monkeypatch.setattr(socketio.AsyncManager, "emit", local_emit)
    manager = ResilientRedisManager(f"redis://127.0.0.1:{free_port()}/0", channel="t-socketio")
    await manager.emit("bot_uttered", {"text": "سلام"}, room="session-1")
    assert delivered == [("bot_uttered", {"text": "سلام"}, "session-1")]


def test_socketio_uses_redis_only_when_configured(monkeypatch):
    from bot.assistant.channels.socketio import ResilientRedisManager, client_manager_from_env

    monkeypatch.delenv("REDIS_HOST", raising=False)
    assert client_manager_from_env() is None
    monkeypatch.setenv("REDIS_HOST", "127.0.0.1")
    monkeypatch.setenv("REDIS_KEY_PREFIX", "blue")
    manager = client_manager_from_env()
    assert isinstance(manager, ResilientRedisManager) and manager.channel == "blue-socketio"


def test_importing_bot_assistant_does_not_load_rasa_core_but_its_loading_installs_the_patches():
    code = ("import sys, bot.assistant\n"
            "assert 'rasa.core.processor' not in sys.modules\n"
            "import rasa.core.processor, rasa.core.tracker_store\n"
            "from bot.assistant.patches import action_timeout, store_unavailable\n"
            "assert action_timeout.is_installed()\n"
            "assert getattr(rasa.core.processor.MessageProcessor.handle_message, store_unavailable.PATCH_MARKER)\n"
            "assert getattr(rasa.core.tracker_store.FailSafeTrackerStore.retrieve, store_unavailable.PATCH_MARKER)\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]


# ------------------------------------------------------------------------------------- action server timeouts

def _domain():
    from rasa.shared.core.domain import Domain

    return Domain.load(str(ROOT / "domain"))


def _tracker(domain, language: str):
    from rasa.shared.core.events import SlotSet, UserUttered
    from rasa.shared.core.trackers import DialogueStateTracker

    return DialogueStateTracker.from_events(
        "someone", [SlotSet("language", language), UserUttered("4096", message_id="m1")], slots=domain.slots)


@pytest.fixture
def slow_action_server():
    """An action server that accepts the call and never answers in time."""
    async def webhook(request):
        await asyncio.sleep(30)
        return web.json_response({"events": [], "responses": []})

    port = free_port()
    loop = asyncio.new_event_loop()
    app = web.Application()
    app.router.add_post("/webhook", webhook)
    runner = web.AppRunner(app)
    loop.run_until_complete(runner.setup())
    loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port).start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{port}/webhook"
    loop.call_soon_threadsafe(loop.stop)


@pytest.mark.parametrize("down", ["slow", "refused"])
async def test_an_action_call_gives_up_within_the_timeout_and_the_rest_of_the_turn_does_not_wait(
        monkeypatch, slow_action_server, down):
    import rasa.core.processor  # noqa: F401 - loading it installs the patch
    from rasa.core.actions.action import RemoteAction
    from rasa.core.channels.channel import CollectingOutputChannel
    from rasa.core.nlg import TemplatedNaturalLanguageGenerator
    from rasa.utils.endpoints import EndpointConfig

    from rasa.shared.core.events import SlotSet

    from bot.assistant.patches.action_timeout import ActionServerUnavailable

    monkeypatch.setenv("ACTION_SERVER_TIMEOUT_S", "1.5")
    url = slow_action_server if down == "slow" else f"http://127.0.0.1:{free_port()}/webhook"
    domain = _domain()
    tracker = _tracker(domain, "fa")
    nlg = TemplatedNaturalLanguageGenerator(domain.responses)
    started = time.monotonic()
    with pytest.raises(ActionServerUnavailable):
        await RemoteAction("action_estimate", EndpointConfig(url)).run(CollectingOutputChannel(), nlg, tracker,
                                                                       domain)
    assert time.monotonic() - started < 3
    started = time.monotonic()
    with pytest.raises(ActionServerUnavailable):  # same turn: no second wait
        await RemoteAction("action_answer_faq", EndpointConfig(url)).run(CollectingOutputChannel(), nlg,
                                                                         tracker, domain)
    assert time.monotonic() - started < 0.2
    # The slot-mapping validation runs inside Rasa (patches/in_process_actions.py): in the same turn it still
    # reads the message ("4096": the sequence length) without waiting.
    events = await RemoteAction("action_validate_slot_mappings", EndpointConfig(url)).run(
        CollectingOutputChannel(), nlg, tracker, domain)
    assert time.monotonic() - started < 1.0
    assert SlotSet("seq_len", 4096) in events, events


@pytest.mark.parametrize("language", ["fa", "tr"])
async def test_the_failed_action_answers_in_the_conversation_language_and_ends_the_turn(language):
    import rasa.core.processor  # noqa: F401
    from rasa.core.channels.channel import CollectingOutputChannel
    from rasa.core.nlg import TemplatedNaturalLanguageGenerator
    from rasa.shared.core.events import BotUttered, FollowupAction

    from bot.assistant.patches.action_timeout import ActionServerUnavailable, _answer_outage_instead_of_raising

    class Failing:
        async def run(self, *args):
            raise ActionServerUnavailable("down")

    domain = _domain()
    action = Failing()
    _answer_outage_instead_of_raising(action)
    events = await action.run(CollectingOutputChannel(), TemplatedNaturalLanguageGenerator(domain.responses),
                              _tracker(domain, language), domain)
    assert isinstance(events[0], BotUttered) and isinstance(events[-1], FollowupAction)
    assert events[-1].action_name == "action_listen"
    expected = [v["text"] for v in domain.responses["utter_action_unavailable"]
                if any(c.get("value") == "tr" for c in v.get("condition") or []) == (language == "tr")]
    assert events[0].text == expected[0]


def test_which_failures_mean_the_action_server_is_unavailable():
    from rasa.core.actions.action import ActionExecutionRejection
    from rasa.shared.exceptions import RasaException
    from rasa.utils.endpoints import ClientResponseError

    from bot.assistant.patches.action_timeout import _is_unavailable

    def raised_from(cause):
        try:
            raise RasaException("failed") from cause
        except RasaException as error:
            return error

    assert _is_unavailable(asyncio.TimeoutError())
    assert _is_unavailable(raised_from(aiohttp.ClientConnectionError()))
    assert _is_unavailable(raised_from(ClientResponseError(503, "Service Unavailable", "no server")))
    assert not _is_unavailable(raised_from(ClientResponseError(404, "Not Found", "")))
    assert not _is_unavailable(ActionExecutionRejection("validate_estimate_form"))
    assert not _is_unavailable(ValueError("a bug"))


def test_the_store_failure_answer_takes_the_language_from_the_message():
    from rasa.core.channels.channel import UserMessage

    from bot.assistant.patches.store_unavailable import message_language

    assert message_language(UserMessage("fiyatlarınız nedir?")) == "tr"
    assert message_language(UserMessage("قیمت‌ها چقدر است؟")) == "fa"
    assert message_language(UserMessage("/start", metadata={"language_hint": "tr"})) == "tr"
    assert message_language(UserMessage("👍")) == "fa"
