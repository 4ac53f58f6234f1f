"""The REST channel's own answers (issue 20, findings 7 and 9): an error inside the assistant is answered in the
conversation's language, and with REST_CHANNEL_TOKEN set a call without the token is refused.

The error case runs the channel's blueprint in Sanic's test client with an assistant that fails (a real Rasa turns
its own errors into answers before the channel sees them); the token is checked on a real Rasa server.
"""
from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
import uuid

import pytest

from bot.assistant.channels.limits import channel_texts
from tests.servers import start_rasa_server

PERSIAN = re.compile(r"[\u0600-\u06FF]")


def _failing_app():
    from sanic import Sanic

    from bot.assistant.channels.rest import RestInput

    async def assistant_that_fails(message):
        raise RuntimeError("the assistant failed")

    app = Sanic(f"rest-test-{uuid.uuid4().hex[:8]}")
    app.blueprint(RestInput().blueprint(assistant_that_fails), url_prefix="/webhooks/rest")
    return app


@pytest.mark.parametrize("lang, text", [("fa", "سلام، یک سؤال درباره قیمت دارم"),
                                        ("tr", "Merhaba, fiyatlar hakkında bir sorum var")])
def test_an_error_inside_the_assistant_is_answered_in_the_users_language(lang, text):
    app = _failing_app()
    _, response = app.test_client.post("/webhooks/rest/webhook",
                                       content=json.dumps({"sender": f"err-{lang}", "message": text}))
    assert response.status == 200
    answer = " ".join(reply["text"] for reply in response.json)
    assert answer == channel_texts()["server_error"][lang], answer


@pytest.fixture(scope="module")
def guarded_rasa(rasa_model, action_server):
    server = start_rasa_server(action_server.port, env={"REST_CHANNEL_TOKEN": "rest-token-for-integrations"})
    yield server
    server.stop()


def _post(server, headers: dict) -> int:
    body = json.dumps({"sender": f"guarded-{uuid.uuid4().hex[:8]}", "message": "سلام"}).encode()
    request = urllib.request.Request(f"{server.url}/webhooks/rest/webhook", data=body,
                                     headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=60) as resp:
            assert json.loads(resp.read())
            return resp.status
    except urllib.error.HTTPError as error:
        return error.code


def test_with_a_rest_token_configured_only_callers_holding_it_are_served(guarded_rasa):
    assert _post(guarded_rasa, {}) == 401
    assert _post(guarded_rasa, {"Authorization": "Bearer wrong"}) == 401
    assert _post(guarded_rasa, {"Authorization": "Bearer rest-token-for-integrations"}) == 200


@pytest.mark.parametrize("lang, text", [("fa", "سلام، یک سؤال درباره قیمت دارم"),
                                        ("tr", "Merhaba, fiyatlar hakkında bir sorum var")])
def test_an_error_inside_the_assistant_is_answered_on_telegram_too(lang, text):
    """The Telegram channel (fake Bot API on loopback) tells the customer instead of leaving the chat silent."""
    from sanic import Sanic

    from bot.assistant.channels.telegram import TelegramInput
    from bot.telegram_api import TelegramSettings
    from tests.fake_bot_api import FakeBotApi

    async def assistant_that_fails(message):
        raise RuntimeError("the assistant failed")

    with FakeBotApi() as fake:
        channel = TelegramInput(TelegramSettings(token="123456:error-test", secret_token="error-secret",
                                                 webhook_url=None, api_url=fake.url))
        app = Sanic(f"telegram-test-{uuid.uuid4().hex[:8]}")
        app.blueprint(channel.blueprint(assistant_that_fails), url_prefix="/webhooks/telegram")
        update = {"update_id": uuid.uuid4().int % 10**9, "message": {
            "message_id": 1, "date": 1700000000, "text": text, "chat": {"id": 4242, "type": "private"},
            "from": {"id": 4242, "is_bot": False, "first_name": "Test"}}}
        _, response = app.test_client.post("/webhooks/telegram/webhook", content=json.dumps(update),
                                           headers={"X-Telegram-Bot-Api-Secret-Token": "error-secret"})
        assert response.status == 200  # answered: Telegram does not retry the update for hours
        sent = [str(call.payload.get("text")) for call in fake.calls("sendMessage")]
    assert sent == [channel_texts()["server_error"][lang]], sent
