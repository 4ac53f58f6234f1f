"""The cluster of `make cluster`, started for real (scripts/cluster.sh on free ports): two Rasa instances, two action
servers, HAProxy, supervisord, PostgreSQL, Redis; in Persian and Turkish.

- a conversation whose turns alternate between the instances keeps all its values;
- two messages of one customer at the same moment on both instances are answered one after the other (Redis lock);
- a staff reply pushed through one instance reaches the widget connected to the other (socket.io through Redis);
- a Telegram update delivered to both instances is answered once (de-duplication in Redis);
- faults: action servers stopped or hung, Redis gone, PostgreSQL gone: answered in the customer's language within
  10 s, reported by /health, and the conversation goes on once the part is back;
- bad input through the balancer never gets a 5xx;
- a Rasa instance killed while conversations run: none is lost, the balancer moves them, supervisord restarts it
  and the conversation continues on the restarted instance.
"""
from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List

import aiohttp
import pytest
import socketio
import yaml

from bot.staff.rasa_api import RasaClient
from bot.tickets import TicketStore
from bot.tickets.models import TicketDraft
from tests.cluster import Cluster, PostgresSwitch, start_cluster
from tests.e2e.helpers import assert_estimate, assert_language, expected_advice, joined
from tests.fake_bot_api import FakeBotApi
from tests.servers import ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.cluster]

DATABASE = "advisor_cluster_test"
SERVICE = yaml.safe_load((ROOT / "domain" / "service.yml").read_text(encoding="utf-8"))["responses"]
TELEGRAM_TOKEN = "123456:cluster-test"
TELEGRAM_SECRET = "cluster-secret-token"
FAULT_ANSWER_S = 10.0  # issue 12: the customer hears from us within 10 s


def service_text(name: str, lang: str) -> str:
    for variant in SERVICE[name]:
        is_tr = any(c.get("value") == "tr" for c in variant.get("condition", []))
        if is_tr == (lang == "tr"):
            return variant["text"]
    raise KeyError(name)


# One customer's estimate, typed in four turns (each turn adds one value).
TURNS = {
    "fa": ["سلام، می‌خواهم یک مدل را فاین‌تیون کنم", "مدل Llama 3.1 8B", "با QLoRA", "طول توالی 4096 توکن",
           "بودجه 100 دلار"],
    "tr": ["merhaba, bir modeli ince ayarlamak istiyorum", "modelim Llama 3.1 8B", "QLoRA ile", "4096 token",
           "bütçem 100 dolar"],
}
EXPECTED = dict(model="llama-3.1-8b", method="qlora", seq_len=4096, budget_usd=100)


def sender() -> str:
    return f"cluster-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="module")
def fake_telegram():
    with FakeBotApi() as fake:
        yield fake


@pytest.fixture(scope="module")
def cluster(rasa_model, fake_telegram) -> Cluster:
    env = {"TELEGRAM_TOKEN": TELEGRAM_TOKEN, "TELEGRAM_SECRET_TOKEN": TELEGRAM_SECRET,
           "TELEGRAM_API_URL": fake_telegram.url,
           "TELEGRAM_WEBHOOK_URL": "https://bot.example/webhooks/telegram/webhook"}
    with start_cluster(DATABASE, env=env) as running:
        yield running


def assert_values_kept(cluster: Cluster, who: str) -> None:
    slots = cluster.tracker(who)["slots"]
    assert slots["model_id"] == EXPECTED["model"], slots
    assert slots["method"] == EXPECTED["method"] and slots["seq_len"] == EXPECTED["seq_len"], slots
    assert slots["budget_usd"] == EXPECTED["budget_usd"], slots


# ----------------------------------------------------------------------------------------------------------- basics

def test_every_service_answers_its_health_check(cluster):
    for base in (cluster.balancer, cluster.rasa_a, cluster.rasa_b):
        status, report = cluster.health(base)
        assert status == 200, report
        assert report["status"] == "ok" and report["tracker_store"] == "ok" and report["locks"] == "redis", report
    for name in ("ACTIONS_A_PORT", "ACTIONS_B_PORT", "ACTIONS_BALANCER_PORT", "WEB_PORT", "STAFF_PORT"):
        status, _ = cluster.health(cluster.url(name))
        assert status == 200, name
    assert "RUNNING" in cluster.ctl("status", "haproxy")


@pytest.mark.parametrize("lang", ["fa", "tr"])
def test_turns_alternating_between_instances_keep_every_value(cluster, lang):
    who = sender()
    replies: List[dict] = []
    for turn, text in enumerate(TURNS[lang]):
        replies = cluster.say(who, text, base=cluster.rasa_a if turn % 2 == 0 else cluster.rasa_b)
        assert_language(replies, lang)
    advice = expected_advice(**EXPECTED)
    assert_estimate(replies, lang, best_card=advice.best.card_id, mentions=["4096"])
    assert_values_kept(cluster, who)


def _user_turns_in_order(events: List[dict]) -> List[str]:
    """The user texts of the tracker, checking that each turn ended (action_listen) before the next began."""
    texts: List[str] = []
    waiting_for_listen = False
    for event in events:
        if event["event"] == "user":
            assert not waiting_for_listen, f"a turn started before the previous one ended: {texts}"
            texts.append(event.get("text"))
            waiting_for_listen = True
        elif event["event"] == "action" and event.get("name") == "action_listen":
            waiting_for_listen = False
    return texts


def test_two_messages_at_the_same_moment_on_both_instances_are_answered_in_order(cluster):
    pairs = {"fa": ("مدل Llama 3.1 8B", "با QLoRA"), "tr": ("modelim Llama 3.1 8B", "QLoRA ile")}
    senders = {f"{lang}-{i}": (lang, sender()) for lang in pairs for i in range(2)}
    for lang, who in senders.values():
        cluster.say(who, TURNS[lang][0])
    barrier = threading.Barrier(2 * len(senders))

    def send(who: str, text: str, base: str) -> List[dict]:
        barrier.wait()
        return cluster.say(who, text, base=base)

    with ThreadPoolExecutor(2 * len(senders)) as pool:
        futures = {}
        for lang, who in senders.values():
            first, second = pairs[lang]
            futures[(who, 1)] = pool.submit(send, who, first, cluster.rasa_a)
            futures[(who, 2)] = pool.submit(send, who, second, cluster.rasa_b)
        answers = {key: future.result(timeout=120) for key, future in futures.items()}
    for lang, who in senders.values():
        assert answers[(who, 1)] and answers[(who, 2)], "both messages must be answered"
        assert_language(answers[(who, 1)] + answers[(who, 2)], lang)
        turns = _user_turns_in_order(cluster.tracker(who)["events"])
        assert sorted(turns[1:]) == sorted(pairs[lang]), turns  # each message exactly once, one turn after the other
        slots = cluster.tracker(who)["slots"]
        assert slots["model_id"] == "llama-3.1-8b" and slots["method"] == "qlora", slots  # neither turn lost


# ------------------------------------------------------------------------------------------- socket.io across nodes

async def _widget_session(base: str, http: aiohttp.ClientSession):
    client = socketio.AsyncClient(reconnection=False, http_session=http)
    received: List[dict] = []
    confirmed = asyncio.Event()
    session: Dict[str, str] = {}

    @client.on("session_confirm")
    async def on_confirm(data):
        session.update(data if isinstance(data, dict) else {"session_id": data})
        confirmed.set()

    @client.on("bot_uttered")
    async def on_bot(data):
        received.append(data)

    await client.connect(base, transports=["polling"], socketio_path="/socket.io")
    await client.emit("session_request", {})
    await asyncio.wait_for(confirmed.wait(), 30)
    return client, session, received


async def _wait_for(received: List[dict], predicate, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for message in received:
            if predicate(message):
                return message
        await asyncio.sleep(0.1)
    raise AssertionError(f"no matching bot_uttered within {timeout}s: {received}")


async def test_staff_reply_reaches_a_widget_connected_through_the_other_instance(cluster):
    # The widget connects through the balancer (sticky by cookie): the cookie names the instance holding it.
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        client, session, received = await _widget_session(cluster.balancer, http)
        try:
            holder = {c.key: c.value for c in http.cookie_jar}.get("advisor_srv")
            assert holder in ("a", "b"), list(http.cookie_jar)
            await client.emit("user_uttered", {"message": "سلام", **session})
            await _wait_for(received, lambda m: m.get("text"), 60)
            other = cluster.rasa_b if holder == "a" else cluster.rasa_a
            staff_text = f"سلام، من سارا از پشتیبانی هستم ({uuid.uuid4().hex[:6]})"
            staff = RasaClient(other, cluster.token)
            await asyncio.to_thread(staff.say_as_staff, session["session_id"], staff_text, "sara")
            message = await _wait_for(received, lambda m: m.get("text") == staff_text, 20)
            assert message["text"] == staff_text
        finally:
            await client.disconnect()


# ------------------------------------------------------------------------------------------------------ Telegram

def _telegram_update(update_id: int, chat_id: int, text: str) -> dict:
    return {"update_id": update_id, "message": {
        "message_id": update_id % 100000, "date": int(time.time()), "text": text,
        "chat": {"id": chat_id, "type": "private"},
        "from": {"id": chat_id, "is_bot": False, "first_name": "Ali", "language_code": "fa"}}}


def test_a_telegram_update_delivered_to_both_instances_is_answered_once(cluster, fake_telegram):
    chat_id = int(uuid.uuid4().int % 10**9) + 10**9
    update = _telegram_update(int(uuid.uuid4().int % 10**8), chat_id, "سلام")
    headers = {"X-Telegram-Bot-Api-Secret-Token": TELEGRAM_SECRET}
    barrier = threading.Barrier(3)

    def deliver(base: str):
        barrier.wait()
        return cluster.request(f"{base}/webhooks/telegram/webhook", update, headers=headers)

    with ThreadPoolExecutor(3) as pool:  # both instances directly, and once more through the balancer
        results = list(pool.map(deliver, [cluster.rasa_a, cluster.rasa_b, cluster.balancer]))
    assert all(status == 200 for status, _ in results), results
    assert sorted(body.get("status") for _, body in results).count("ok") == 1, results

    def to_chat(method: str):
        return [c for c in fake_telegram.calls(method) if str(c.payload.get("chat_id")) == str(chat_id)]

    deadline = time.monotonic() + 30
    while not to_chat("sendMessage") and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(2)  # a second answer, if any, would have come by now
    assert len(to_chat("sendChatAction")) == 1
    sent = to_chat("sendMessage")
    assert len(sent) >= 1 and len({c.payload["text"] for c in sent}) == len(sent), sent  # one answer, not two


# ------------------------------------------------------------------------------------------------------ bad input

BAD_BODIES = [b"", b"[]", b'"hello"', b"42", b"{not json", b'{"sender": "x", "message": null}',
              b'{"sender": "x", "message": 42}', b'{"message": "hi"}', b'{"sender": null, "message": "hi"}',
              b'{"sender": ["x"], "message": "hi"}']


@pytest.mark.parametrize("body", BAD_BODIES, ids=[repr(b)[:30] for b in BAD_BODIES])
def test_malformed_rest_bodies_get_a_4xx_through_the_balancer(cluster, body):
    status, answer = cluster.request(f"{cluster.balancer}/webhooks/rest/webhook", raw=body)
    assert 400 <= status < 500, (status, answer)


@pytest.mark.parametrize("lang,text", [("fa", "بودجه " + "9" * 5000 + " دلار"),
                                       ("tr", "bütçem " + "9" * 5000 + " dolar"),
                                       ("fa", "سلام " * 2000), ("tr", "merhaba " * 1000)])
def test_huge_numbers_and_long_messages_are_answered_in_the_users_language(cluster, lang, text):
    who = sender()
    cluster.say(who, TURNS[lang][0])
    replies = cluster.say(who, text)
    assert_language(replies, lang)


def test_a_body_over_the_size_limit_is_refused_without_5xx(cluster):
    body = ('{"sender": "%s", "message": "%s"}' % (sender(), "a" * (2 * 1024 * 1024))).encode()
    status, _ = cluster.request(f"{cluster.balancer}/webhooks/rest/webhook", raw=body)
    assert 400 <= status < 500, status


# --------------------------------------------------------------------------------------------------------- faults

def _wait_actions_back(cluster: Cluster, timeout: float = 60) -> None:
    """Until the balancer's action-server frontend answers again (HAProxy saw a server come back)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if cluster.health(cluster.url("ACTIONS_BALANCER_PORT"))[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise TimeoutError("action servers not back behind the balancer")


@pytest.mark.parametrize("lang", ["fa", "tr"])
@pytest.mark.parametrize("fault", ["stopped", "hung"])
def test_action_servers_stopped_or_hung_answered_within_10_s_then_the_conversation_goes_on(cluster, lang, fault):
    who = sender()
    for text in TURNS[lang][:3]:
        cluster.say(who, text)
    pids = [cluster.pid("actions-a"), cluster.pid("actions-b")]
    if fault == "stopped":
        cluster.ctl("stop", "actions-a", "actions-b")
    else:
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)  # accepts connections, never answers
    try:
        # The form reads its values inside Rasa (bot/assistant/patches/in_process_actions.py): the sequence length is
        # noted and the budget asked for during the outage as at any other time.
        started = time.monotonic()
        noted = cluster.say(who, TURNS[lang][3])
        noted_s = time.monotonic() - started
        # The estimate itself is the action server's: the customer is told, in the conversation's language.
        started = time.monotonic()
        replies = cluster.say(who, TURNS[lang][4])
        elapsed = time.monotonic() - started
    finally:
        if fault == "stopped":
            cluster.ctl("start", "actions-a", "actions-b")
        else:
            for pid in pids:
                os.kill(pid, signal.SIGCONT)
    assert noted_s < FAULT_ANSWER_S, noted_s
    assert_language(noted, lang)
    assert service_text("utter_action_unavailable", lang) not in joined(noted), noted
    assert cluster.tracker(who)["slots"]["seq_len"] == EXPECTED["seq_len"]
    assert elapsed < FAULT_ANSWER_S, elapsed
    assert joined(replies) == service_text("utter_action_unavailable", lang), replies
    _wait_actions_back(cluster)
    # The customer sends the message again, as the answer asked, and gets the estimate.
    replies = cluster.say(who, TURNS[lang][4])
    assert_estimate(replies, lang, best_card=expected_advice(**EXPECTED).best.card_id)
    assert_values_kept(cluster, who)


def test_without_redis_each_instance_still_answers_and_health_says_so(cluster):
    who = sender()
    cluster.say(who, TURNS["tr"][0], base=cluster.rasa_a)
    cluster.relay.cut()
    try:
        for turn, text in enumerate(TURNS["tr"][1:], start=1):
            replies = cluster.say(who, text, base=cluster.rasa_a, timeout=FAULT_ANSWER_S)
            assert_language(replies, "tr")
        assert_estimate(replies, "tr", best_card=expected_advice(**EXPECTED).best.card_id)
        for base in (cluster.rasa_a, cluster.balancer):
            status, report = cluster.health(base)
            assert status == 200, report  # still serving
            assert report["status"] == "degraded" and report["redis"] == "down", report
            assert report["locks"] == "this instance only", report
    finally:
        cluster.relay.restore()
    deadline = time.monotonic() + 20
    while cluster.health(cluster.rasa_a)[1].get("status") != "ok":
        assert time.monotonic() < deadline, cluster.health(cluster.rasa_a)
        time.sleep(0.5)
    assert_values_kept(cluster, who)


def test_without_postgresql_messages_are_answered_tickets_spooled_and_health_says_so(cluster, tmp_path):
    switch = PostgresSwitch(cluster.database)
    store = TicketStore(f"postgresql://postgres@127.0.0.1:5432/{cluster.database}", spool_dir=tmp_path / "spool")
    who = {"fa": sender(), "tr": sender()}
    for lang in who:
        cluster.say(who[lang], TURNS[lang][0])
    switch.cut()
    try:
        for lang, text in (("fa", "هزینه‌ها چقدر است؟"), ("tr", "fiyatlarınız nedir, öğrenebilir miyim?")):
            started = time.monotonic()
            status, replies = cluster.request(f"{cluster.balancer}/webhooks/rest/webhook",
                                              {"sender": who[lang], "message": text}, timeout=30)
            assert status == 200, (status, replies)
            assert time.monotonic() - started < FAULT_ANSWER_S
            assert joined(replies) == service_text("utter_storage_unavailable", lang), replies
        status, report = cluster.health()
        assert status == 200 and report["tracker_store"] == "down" and report["status"] == "degraded", report
        # A ticket opened now (as an action server opens it: same store class, its own spool) waits in the spool.
        ticket = store.create(TicketDraft(sender_id=who["fa"], language="fa", category="technical"))
        assert ticket.spooled and len(store.spool) == 1
    finally:
        switch.restore()
    assert store.try_flush_spool() == 1 and len(store.spool) == 0
    assert store.get(ticket.id).sender_id == who["fa"]
    store.delete([ticket.id])
    store.close()
    deadline = time.monotonic() + 30
    while True:  # the connection pool recovers by itself
        replies = cluster.say(who["fa"], TURNS["fa"][1])
        if joined(replies) != service_text("utter_storage_unavailable", "fa"):
            break
        assert time.monotonic() < deadline, replies
        time.sleep(1)
    assert_language(replies, "fa")
    assert cluster.tracker(who["fa"])["slots"]["model_id"] == "llama-3.1-8b"


# ---------------------------------------------------------------------------------- an instance dies mid-traffic

def test_killing_a_rasa_instance_loses_no_conversation_and_it_is_restarted(cluster):
    conversations = [(lang, sender()) for lang in ("fa", "tr") for _ in range(3)]
    killed = threading.Event()
    before_kill = threading.Barrier(len(conversations) + 1)
    errors: List[str] = []

    def talk(lang: str, who: str) -> None:
        try:
            for turn, text in enumerate(TURNS[lang]):
                if turn == 2:
                    before_kill.wait(timeout=120)
                    killed.wait(timeout=30)
                replies = cluster.say(who, text, timeout=60)
                assert_language(replies, lang)
        except Exception as error:  # noqa: BLE001 - reported below with the conversation
            errors.append(f"{who} ({lang}): {error!r}")

    threads = [threading.Thread(target=talk, args=c) for c in conversations]
    for thread in threads:
        thread.start()
    before_kill.wait(timeout=120)
    os.kill(cluster.pid("rasa-a"), signal.SIGKILL)
    killed.set()
    for thread in threads:
        thread.join(timeout=300)
    assert not errors, errors
    for _, who in conversations:
        assert_values_kept(cluster, who)
    # supervisord starts the killed instance again, and a conversation goes on there where it was.
    cluster.wait_healthy(cluster.rasa_a, timeout=240)
    lang, who = conversations[0]
    replies = cluster.say(who, "LoRA olursa?" if lang == "tr" else "اگر LoRA باشد چه؟", base=cluster.rasa_a)
    assert_language(replies, lang)
    slots = cluster.tracker(who, base=cluster.rasa_a)["slots"]
    assert slots["method"] == "lora" and slots["seq_len"] == 4096 and slots["budget_usd"] == 100, slots
