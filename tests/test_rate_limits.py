"""Rate limits per conversation, per client address and for tickets, and the language of the channels' own answers
(issue 20, findings 6 and 9), against a real action server and Rasa server (REST, socket.io, Telegram).

The servers get small limits (a file written here, same schema as knowledge/rate_limits.yml) so that a test
reaches them in a few messages, and trust X-Forwarded-For as behind the cluster's HAProxy, so each test speaks from
an address of its own.
"""
from __future__ import annotations

import asyncio
import itertools
import json
import re
import urllib.error
import urllib.request
import uuid

import pytest
import yaml

from bot.assistant.channels.limits import channel_texts
from bot.assistant.rate_limits import Bucket, Limits, RateLimiter, TokenBuckets, limits
from tests.servers import ROOT, start_action_server, start_rasa_server

PERSIAN = re.compile(r"[\u0600-\u06FF]")
SMALL_LIMITS = {"messages_per_conversation": {"burst": 5, "per_minute": 1},
                "messages_per_address": {"burst": 24, "per_minute": 1},
                "tickets_per_conversation": {"burst": 1, "per_minute": 0.05},
                "tickets_per_address": {"burst": 2, "per_minute": 0.05},
                "max_tracked_keys": 1000}
TELEGRAM_TOKEN = "123456:rate-limit-test"
TELEGRAM_SECRET = "rate-limit-secret"


def _fixed(key: str, lang: str) -> str:
    """The part of a channel text before its first placeholder."""
    return channel_texts()[key][lang].split("{")[0].strip()


# ---------------------------------------------------------------------------------------------- the buckets

class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_gives_its_burst_then_refills_at_its_rate():
    clock = _Clock()
    buckets = TokenBuckets(Bucket(burst=3, per_minute=6), max_keys=100, clock=clock)
    assert [buckets.take("a") for _ in range(4)] == [True, True, True, False]
    assert buckets.take("b")  # another key has its own bucket
    assert buckets.retry_after_s("a") == 10  # 6 a minute: one every 10 s
    clock.now += 10
    assert buckets.take("a") and not buckets.take("a")


def test_memory_is_bounded_by_the_number_of_keys():
    buckets = TokenBuckets(Bucket(burst=1, per_minute=1), max_keys=100, clock=_Clock())
    for number in range(1000):
        buckets.take(f"sender-{number}")
    assert len(buckets.buckets) == 100


def test_a_refused_message_does_not_spend_the_other_bucket():
    limiter = RateLimiter(Limits.parse_obj({**SMALL_LIMITS, "messages_per_conversation": {"burst": 1,
                                                                                           "per_minute": 1}}),
                          clock=_Clock())
    assert limiter.message_allowed("c1", "10.0.0.1")
    for _ in range(30):
        assert not limiter.message_allowed("c1", "10.0.0.1")
    # The address's bucket was not drained by the refused messages of c1.
    assert limiter.message_allowed("c2", "10.0.0.1")


def test_the_products_limits_file_is_valid():
    configured = limits()
    assert configured.messages_per_conversation.burst >= 3  # a person pressing buttons quickly is not refused
    assert configured.tickets_per_address.burst <= 10


# ---------------------------------------------------------------------------------------------- real servers

@pytest.fixture(scope="module")
def stack(rasa_model, tmp_path_factory):
    from tests.fake_bot_api import FakeBotApi

    tmp = tmp_path_factory.mktemp("rate-limits")
    limits_file = tmp / "limits.yml"
    limits_file.write_text(yaml.safe_dump(SMALL_LIMITS))
    env = {"ADVISOR_RATE_LIMITS_FILE": str(limits_file), "ADVISOR_TRUSTED_PROXY": "1",
           "TICKETS_DB_URL": f"sqlite:///{tmp}/tickets.db", "TICKETS_SPOOL_DIR": str(tmp / "spool"),
           "SOCKET_SESSION_SECRET": "rate-limit-test-secret-0123456789",
           "TELEGRAM_TOKEN": TELEGRAM_TOKEN, "TELEGRAM_SECRET_TOKEN": TELEGRAM_SECRET,
           "TELEGRAM_WEBHOOK_URL": "https://bot.example/webhooks/telegram/webhook"}
    with FakeBotApi() as fake:
        env["TELEGRAM_API_URL"] = fake.url
        actions = start_action_server(env=env)
        try:
            rasa = start_rasa_server(actions.port, env=env,
                                     credentials=yaml.safe_load((ROOT / "credentials.telegram.yml").read_text()))
        except Exception:
            actions.stop()
            raise
        try:
            yield {"rasa": rasa, "actions": actions, "fake": fake, "tickets_url": env["TICKETS_DB_URL"]}
        finally:
            rasa.stop()
            actions.stop()


class Client:
    """One customer over REST, from its own address (X-Forwarded-For, trusted as behind HAProxy)."""

    def __init__(self, stack, address: str, sender: str = "") -> None:
        self.url = f"{stack['rasa'].url}/webhooks/rest/webhook"
        self.address = address
        self.sender = sender or f"rl-{uuid.uuid4().hex[:10]}"

    def say(self, text: str):
        body = json.dumps({"sender": self.sender, "message": text}, ensure_ascii=False).encode()
        request = urllib.request.Request(self.url, data=body, headers={
            "Content-Type": "application/json", "X-Forwarded-For": f"203.0.113.77, {self.address}"})
        try:
            with urllib.request.urlopen(request, timeout=60) as resp:
                return resp.status, resp.headers, json.loads(resp.read())
        except urllib.error.HTTPError as error:
            return error.code, error.headers, json.loads(error.read() or b"null")

    def text(self, reply) -> str:
        return "\n".join(r.get("text") or "" for r in reply)


_ADDRESSES = itertools.count(1)


def _address() -> str:
    """A client address no other test of the session has used: a shared one would find its bucket drained."""
    n = next(_ADDRESSES)
    return f"198.51.{100 + n // 250}.{n % 250 + 1}"


@pytest.mark.parametrize("lang, greeting, other_language", [
    ("fa", "سلام، وقت بخیر", "Merhaba, iyi günler"),
    ("tr", "Merhaba, iyi günler", "سلام، وقت بخیر")])
def test_a_flooding_conversation_is_told_to_wait_in_its_own_language(stack, lang, greeting, other_language):
    client = Client(stack, _address())
    statuses = [client.say(greeting)[0] for _ in range(SMALL_LIMITS["messages_per_conversation"]["burst"])]
    assert statuses == [200] * len(statuses)
    # Over the limit, and written in the other language: answered in the conversation's language all the same.
    status, headers, reply = client.say(other_language)
    statuses.append(status)
    assert statuses[-1] == 429, statuses
    assert int(headers["Retry-After"]) >= 1
    answer = client.text(reply)
    assert answer.startswith(_fixed("rate_limited", lang)), answer
    assert bool(PERSIAN.search(answer)) == (lang == "fa")


@pytest.mark.parametrize("lang, greeting, long_text", [
    ("fa", "سلام", "Merhaba, bir sorum var. " * 300),
    ("tr", "Merhaba", "سلام، یک سؤال دارم. " * 300)])
def test_an_over_long_message_is_answered_in_the_conversations_language(stack, lang, greeting, long_text):
    client = Client(stack, _address())
    client.say(greeting)
    status, _, reply = client.say(long_text)
    answer = client.text(reply)
    assert status == 200 and answer.startswith(_fixed("message_too_long", lang)), answer
    assert bool(PERSIAN.search(answer)) == (lang == "fa")


def test_one_address_cannot_flood_under_many_conversation_ids(stack):
    address = _address()
    statuses = [Client(stack, address).say("سلام")[0] for _ in range(SMALL_LIMITS["messages_per_address"]["burst"] + 1)]
    assert statuses[:-1] == [200] * (len(statuses) - 1) and statuses[-1] == 429, statuses
    assert Client(stack, _address()).say("سلام")[0] == 200  # another address is served


def _open_ticket(client: Client, lang: str) -> str:
    client.say("سلام" if lang == "fa" else "Merhaba")
    client.say("/request_quote")
    client.say("بله" if lang == "fa" else "Evet")
    return client.text(client.say("ali.rezaei@example.com")[2])


@pytest.mark.parametrize("lang", ["fa", "tr"])
def test_tickets_from_one_address_are_limited_and_the_refusal_is_in_the_customers_language(stack, lang):
    from bot.tickets.store import TicketStore

    address = _address()
    clients = [Client(stack, address) for _ in range(SMALL_LIMITS["tickets_per_address"]["burst"] + 1)]
    answers = [_open_ticket(client, lang) for client in clients]
    store = TicketStore(stack["tickets_url"])
    opened = [client for client in clients if store.open_ticket_for(client.sender) is not None]
    assert len(opened) == SMALL_LIMITS["tickets_per_address"]["burst"], answers
    assert store.open_ticket_for(clients[-1].sender) is None
    assert _fixed("tickets_limited", lang) in answers[-1], answers[-1]
    assert bool(PERSIAN.search(answers[-1])) == (lang == "fa")


async def test_socketio_messages_are_limited_per_session_with_the_answer_in_its_language(stack):
    import socketio

    client = socketio.AsyncClient(reconnection=False)
    replies: list = []
    session: dict = {}
    confirmed = asyncio.Event()

    @client.on("session_confirm")
    async def on_confirm(data):
        session.update(data)
        confirmed.set()

    @client.on("bot_uttered")
    async def on_bot(data):
        replies.append(data.get("text") or "")

    await client.connect(stack["rasa"].url, transports=["polling"], socketio_path="/socket.io")
    try:
        await client.emit("session_request", {})
        await asyncio.wait_for(confirmed.wait(), 30)
        burst = SMALL_LIMITS["messages_per_conversation"]["burst"]
        for _ in range(burst + 1):
            await client.emit("user_uttered", {"message": "Merhaba", **session})
            await asyncio.sleep(0.05)
        prefix = _fixed("rate_limited", "tr")
        for _ in range(300):
            if any(text.startswith(prefix) for text in replies):
                break
            await asyncio.sleep(0.2)
        assert any(text.startswith(prefix) for text in replies), replies
    finally:
        await client.disconnect()


def test_telegram_chats_are_limited_with_the_answer_in_the_chats_language(stack):
    fake, rasa = stack["fake"], stack["rasa"]
    chat_id = uuid.uuid4().int % 10**9
    fake.clear()
    for number in range(SMALL_LIMITS["messages_per_conversation"]["burst"] + 1):
        update = {"update_id": 900_000 + chat_id % 10**5 * 10 + number, "message": {
            "message_id": number + 1, "date": 1700000000, "text": "سلام",
            "chat": {"id": chat_id, "type": "private", "first_name": "Test"},
            "from": {"id": chat_id, "is_bot": False, "first_name": "Test", "language_code": "fa"}}}
        request = urllib.request.Request(f"{rasa.url}/webhooks/telegram/webhook",
                                         data=json.dumps(update, ensure_ascii=False).encode(),
                                         headers={"Content-Type": "application/json",
                                                  "X-Telegram-Bot-Api-Secret-Token": TELEGRAM_SECRET})
        with urllib.request.urlopen(request, timeout=60) as resp:
            assert resp.status == 200
    sent = [str(call.payload.get("text")) for call in fake.calls("sendMessage")
            if str(call.payload.get("chat_id")) == str(chat_id)]
    assert sent and sent[-1].startswith(_fixed("rate_limited", "fa")), sent
