"""Telegram channel: real Update JSON posted to a running Rasa server, replies recorded by a fake Bot API.

The Rasa server runs our channel (bot.assistant.channels.telegram.TelegramInput) with TELEGRAM_API_URL pointing at
tests/fake_bot_api.py, so every sendMessage / sendPhoto / answerCallbackQuery the bot makes is asserted on.
"""
from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request

import pytest
import yaml

from bot.telegram_api import (
    MAX_CALLBACK_BYTES,
    MAX_MESSAGE_UTF16,
    CallbackPayloads,
    TelegramConfigError,
    TelegramSettings,
    split_message,
    utf16_len,
)
from tests.fake_bot_api import FakeBotApi
from tests.servers import ROOT, start_rasa_server

TOKEN = "123456:TEST-token_abc"
SECRET = "webhook-secret_42"
PERSIAN = re.compile(r"[\u0600-\u06FF]")
TURKISH_ONLY = re.compile(r"[çğışöüÇĞİŞÖÜ]")
# The file `make run` uses when TELEGRAM_TOKEN is set (REST + socket.io + our Telegram channel).
TELEGRAM_CREDENTIALS = yaml.safe_load((ROOT / "credentials.telegram.yml").read_text())
_update_ids = itertools.count(10_000)


# ----------------------------------------------------------------------------------------------------------------
# Pure helpers
# ----------------------------------------------------------------------------------------------------------------
def test_long_answer_is_split_under_the_limit_on_word_boundaries():
    words = "پاسخ طولانی با RTX 4090 و ۲۴ GB — uzun yanıt, çok güzel şğüİ".split()
    text = " ".join(itertools.islice(itertools.cycle(words), 2500))
    parts = split_message(text)
    assert len(parts) >= 2
    assert all(0 < utf16_len(p) <= MAX_MESSAGE_UTF16 for p in parts)
    # No word is cut, nothing is lost, and Persian/Turkish characters come out unchanged.
    assert " ".join(parts).split() == text.split()


def test_split_prefers_paragraphs_and_keeps_short_text_whole():
    paragraph = "کارت مناسب: RTX 4090. " * 150
    text = paragraph.strip() + "\n\n" + "Türkçe paragraf. " * 150
    parts = split_message(text, limit_utf16=4096)
    assert parts == [paragraph.strip(), ("Türkçe paragraf. " * 150).strip()]
    assert split_message("سلام\n\nMerhaba") == ["سلام\n\nMerhaba"]


def test_split_cuts_a_word_only_when_it_is_longer_than_a_message():
    parts = split_message("a" * 5000 + " end", limit_utf16=4096)
    assert parts == ["a" * 4096, "a" * 904 + " end"]


def test_callback_data_is_ascii_and_at_most_64_bytes():
    payloads = CallbackPayloads()
    short = '/inform{"method":"qlora"}'
    assert payloads.pack(short) == short
    for long_payload in ['/request_quote{"note":"' + "x" * 80 + '"}', '/inform{"model":"لاما ۸ میلیارد"}']:
        data = payloads.pack(long_payload)
        assert data.isascii() and len(data.encode()) <= MAX_CALLBACK_BYTES
        assert payloads.unpack(data) == long_payload
    assert payloads.unpack("cb:unknown") is None


def test_settings_come_from_the_environment_and_refuse_a_missing_secret():
    env = {"TELEGRAM_TOKEN": TOKEN, "TELEGRAM_SECRET_TOKEN": SECRET,
           "TELEGRAM_WEBHOOK_URL": "https://bot.example/webhooks/telegram/webhook"}
    settings = TelegramSettings.from_env(environ=env)
    assert (settings.token, settings.secret_token, settings.api_url) == (TOKEN, SECRET, "https://api.telegram.org")
    assert TelegramSettings.from_env(environ={**env, "TELEGRAM_API_URL": "http://127.0.0.1:9/"}).api_url \
        == "http://127.0.0.1:9"
    with pytest.raises(TelegramConfigError, match="TELEGRAM_SECRET_TOKEN"):
        TelegramSettings.from_env(environ={"TELEGRAM_TOKEN": TOKEN})
    with pytest.raises(TelegramConfigError, match="TELEGRAM_TOKEN"):
        TelegramSettings.from_env(environ={"TELEGRAM_SECRET_TOKEN": SECRET})


# ----------------------------------------------------------------------------------------------------------------
# Output channel against the fake Bot API (no Rasa server)
# ----------------------------------------------------------------------------------------------------------------
@pytest.fixture
def fake_api():
    with FakeBotApi() as fake:
        yield fake


def _output(fake: FakeBotApi):
    from bot.assistant.channels.telegram import TelegramInput

    return TelegramInput(TelegramSettings(TOKEN, SECRET, None, fake.url)).get_output_channel()


async def test_buttons_become_an_inline_keyboard_with_short_callback_data(fake_api):
    out = _output(fake_api)
    buttons = [{"title": "QLoRA", "payload": '/inform{"method":"qlora"}'},
               {"title": "درخواست پیش‌فاکتور", "payload": '/request_quote{"note":"' + "z" * 70 + '"}'}]
    await out.send_response("42", {"text": "روش را انتخاب کنید", "buttons": buttons})
    (call,) = fake_api.calls("sendMessage")
    assert call.token == TOKEN and call.payload["chat_id"] == "42"
    assert call.payload["text"] == "روش را انتخاب کنید"
    keys = [key for row in call.payload["reply_markup"]["inline_keyboard"] for key in row]
    assert [k["text"] for k in keys] == ["QLoRA", "درخواست پیش‌فاکتور"]
    assert keys[0]["callback_data"] == '/inform{"method":"qlora"}'
    assert all(k["callback_data"].isascii() and len(k["callback_data"].encode()) <= 64 for k in keys)


async def test_chart_in_our_folder_is_uploaded_and_other_images_are_linked(fake_api, tmp_path, monkeypatch):
    monkeypatch.setenv("ADVISOR_CHART_DIR", str(tmp_path))
    monkeypatch.setenv("ADVISOR_PUBLIC_URL", "https://advisor.example")
    png = b"\x89PNG\r\n\x1a\n" + b"0" * 64
    (tmp_path / "mem-abc.png").write_bytes(png)
    out = _output(fake_api)
    await out.send_image_url("42", "https://advisor.example/charts/mem-abc.png")
    await out.send_image_url("42", "https://advisor.example/charts/..%2Fsecret.png")
    await out.send_image_url("42", "https://elsewhere.example/pic.png")
    uploaded, missing, linked = fake_api.calls("sendPhoto")
    assert uploaded.files["photo"] == png and uploaded.payload["chat_id"] == "42"
    assert missing.files == {} and missing.payload["photo"].startswith("https://advisor.example/charts/")
    assert linked.payload == {"chat_id": "42", "photo": "https://elsewhere.example/pic.png"}


async def test_long_text_goes_out_as_several_messages(fake_api):
    out = _output(fake_api)
    text = ("Llama 3.1 8B için QLoRA ile yaklaşık 18,4 GB VRAM gerekir. " * 120).strip()
    await out.send_text_message("7", text)
    sent = [c.payload["text"] for c in fake_api.calls("sendMessage")]
    assert len(sent) == 2 and all(utf16_len(t) <= MAX_MESSAGE_UTF16 for t in sent)
    assert " ".join(sent).split() == text.split()


# ----------------------------------------------------------------------------------------------------------------
# set-webhook command
# ----------------------------------------------------------------------------------------------------------------
def test_set_webhook_command_sends_secret_and_allowed_updates(fake_api):
    env = {**os.environ, "TELEGRAM_TOKEN": TOKEN, "TELEGRAM_SECRET_TOKEN": SECRET, "TELEGRAM_API_URL": fake_api.url,
           "TELEGRAM_WEBHOOK_URL": "https://bot.example/webhooks/telegram/webhook"}
    result = subprocess.run([sys.executable, "-m", "bot.cli", "telegram", "set-webhook"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    (call,) = fake_api.calls("setWebhook")
    assert call.token == TOKEN
    assert call.payload["url"] == "https://bot.example/webhooks/telegram/webhook"
    assert call.payload["secret_token"] == SECRET
    assert call.payload["allowed_updates"] == ["message", "edited_message", "callback_query"]


def test_set_webhook_command_refuses_without_secret(fake_api):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TELEGRAM_")}
    env.update({"TELEGRAM_TOKEN": TOKEN, "TELEGRAM_API_URL": fake_api.url,
                "TELEGRAM_WEBHOOK_URL": "https://bot.example/webhooks/telegram/webhook"})
    result = subprocess.run([sys.executable, "-m", "bot.cli", "telegram", "set-webhook"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "TELEGRAM_SECRET_TOKEN" in result.stderr
    assert fake_api.calls() == []


# ----------------------------------------------------------------------------------------------------------------
# The running Rasa server
# ----------------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def telegram_fake():
    with FakeBotApi() as fake:
        yield fake


@pytest.fixture(scope="module")
def telegram_server(rasa_model, action_server, telegram_fake):
    env = {"TELEGRAM_TOKEN": TOKEN, "TELEGRAM_SECRET_TOKEN": SECRET, "TELEGRAM_API_URL": telegram_fake.url,
           "TELEGRAM_WEBHOOK_URL": "https://bot.example/webhooks/telegram/webhook"}
    server = start_rasa_server(action_server.port, credentials=TELEGRAM_CREDENTIALS, env=env)
    yield server
    server.stop()


@pytest.fixture
def fake(telegram_fake):
    telegram_fake.clear()
    return telegram_fake


def post_update(server, body, secret=SECRET):
    data = body if isinstance(body, bytes) else json.dumps(body, ensure_ascii=False).encode()
    headers = {"Content-Type": "application/json"}
    if secret is not None:
        headers["X-Telegram-Bot-Api-Secret-Token"] = secret
    request = urllib.request.Request(f"{server.url}/webhooks/telegram/webhook", data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def user(user_id=501, language_code="fa"):
    return {"id": user_id, "is_bot": False, "first_name": "Test", "language_code": language_code}


def message_update(text, chat_id=501, chat_type="private", language_code="fa", kind="message", **extra):
    chat = {"id": chat_id, "type": chat_type}
    if chat_type == "private":
        chat["first_name"] = "Test"
    else:
        chat["title"] = "GPU group"
    message = {"message_id": next(_update_ids), "date": 1700000000, "chat": chat,
               "from": user(abs(chat_id) if chat_type == "private" else 777, language_code), **extra}
    if text is not None:
        message["text"] = text
    if kind == "edited_message":
        message["edit_date"] = 1700000100
    return {"update_id": next(_update_ids), kind: message}


def texts_to(fake, chat_id):
    return [c.payload["text"] for c in fake.calls("sendMessage") if str(c.payload["chat_id"]) == str(chat_id)]




@pytest.mark.e2e
def test_updates_without_the_right_secret_are_refused(telegram_server, fake):
    for secret in (None, "", "wrong-secret", SECRET + "x"):
        status, _ = post_update(telegram_server, message_update("سلام", chat_id=900), secret=secret)
        assert status == 403
    assert fake.calls() == []


@pytest.mark.e2e
@pytest.mark.parametrize("language_code, chat_id", [("fa", 601), ("tr", 602), ("fa-IR", 603), ("tr-TR", 604)])
def test_start_greets_in_the_language_of_the_telegram_client(telegram_server, fake, language_code, chat_id):
    status, _ = post_update(telegram_server, message_update("/start", chat_id=chat_id, language_code=language_code))
    assert status == 200
    greeting = "\n".join(texts_to(fake, chat_id))
    assert greeting, fake.calls()
    if language_code.startswith("fa"):
        assert PERSIAN.search(greeting), greeting
    else:
        assert not PERSIAN.search(greeting) and TURKISH_ONLY.search(greeting), greeting


@pytest.mark.e2e
def test_after_start_the_bot_follows_the_language_the_user_types(telegram_server, fake):
    post_update(telegram_server, message_update("/start", chat_id=610, language_code="fa"))
    fake.clear()
    post_update(telegram_server, message_update("Merhaba, hangi GPU kartları var?", chat_id=610, language_code="fa"))
    reply = "\n".join(texts_to(fake, 610))
    assert reply and not PERSIAN.search(reply), reply


@pytest.mark.e2e
def test_group_message_with_bot_mention_is_answered_in_the_group(telegram_server, fake):
    status, _ = post_update(telegram_server,
                            message_update("/start@CloudRuxAdvisorBot", chat_id=-100123, chat_type="supergroup",
                                           language_code="tr"))
    assert status == 200
    assert texts_to(fake, -100123), fake.calls()


@pytest.mark.e2e
def test_edited_message_is_answered(telegram_server, fake):
    status, _ = post_update(telegram_server, message_update("سلام، وقت بخیر", chat_id=620, kind="edited_message"))
    assert status == 200
    assert PERSIAN.search("\n".join(texts_to(fake, 620)))


@pytest.mark.e2e
def test_button_press_answers_the_callback_and_continues(telegram_server, fake):
    post_update(telegram_server, message_update("/start", chat_id=630, language_code="fa"))
    with_keyboard = [c for c in fake.calls("sendMessage") if "reply_markup" in c.payload]
    assert with_keyboard, "the greeting offers buttons"
    keyboard = with_keyboard[-1].payload["reply_markup"]
    key = keyboard["inline_keyboard"][0][0]
    assert key["callback_data"].isascii() and len(key["callback_data"].encode()) <= 64
    fake.clear()
    original = with_keyboard[-1].payload
    update = {"update_id": next(_update_ids), "callback_query": {
        "id": "cbq-630-1", "from": user(630, "fa"), "chat_instance": "ci-630", "data": key["callback_data"],
        "message": {"message_id": 55, "date": 1700000000, "chat": {"id": 630, "type": "private"},
                    "text": original["text"], "reply_markup": keyboard}}}
    status, _ = post_update(telegram_server, update)
    assert status == 200
    (answer,) = fake.calls("answerCallbackQuery")
    assert answer.payload == {"callback_query_id": "cbq-630-1"}
    assert texts_to(fake, 630), "the press moves the conversation on"
    assert fake.calls()[0].method == "answerCallbackQuery", "the spinner stops before the bot thinks"


@pytest.mark.e2e
@pytest.mark.parametrize("name, body", [
    ("sticker", message_update(None, chat_id=640, sticker={"file_id": "CAACAgIAAx", "file_unique_id": "AgAD",
                                                           "width": 512, "height": 512, "is_animated": False,
                                                           "is_video": False, "type": "regular"})),
    ("photo without caption", message_update(None, chat_id=641, photo=[{"file_id": "AgACAgIAAx",
                                                                        "file_unique_id": "AQAD", "width": 90,
                                                                        "height": 90}])),
    ("member joined", message_update(None, chat_id=-100642, chat_type="group",
                                     new_chat_members=[{"id": 9, "is_bot": False, "first_name": "N"}])),
    ("channel post", {"update_id": 990001, "channel_post": {"message_id": 3, "date": 1700000000, "text": "خبر",
                                                            "chat": {"id": -100643, "type": "channel",
                                                                     "title": "News"}}}),
    ("my_chat_member", {"update_id": 990002, "my_chat_member": {"chat": {"id": 644, "type": "private"},
                                                                "from": user(644), "date": 1700000000}}),
    ("malformed JSON", b'{"update_id": 5, "message": {'),
    ("JSON that is no update", b'["not", "an", "update"]'),
    ("empty body", b""),
])
def test_everything_else_is_acknowledged_with_200_and_ignored(telegram_server, fake, name, body):
    status, answer = post_update(telegram_server, body)
    assert status == 200, (name, answer)
    assert fake.calls("sendMessage") == [] and fake.calls("sendPhoto") == []


@pytest.mark.e2e
def test_a_retried_update_is_processed_once(telegram_server, fake):
    update = message_update("سلام", chat_id=650)
    assert post_update(telegram_server, update)[0] == 200
    first = texts_to(fake, 650)
    assert first
    status, answer = post_update(telegram_server, update)
    assert status == 200 and answer["reason"] == "duplicate"
    assert texts_to(fake, 650) == first


@pytest.mark.e2e
def test_estimate_sends_the_chart_as_an_uploaded_photo(telegram_server, fake):
    chat_id = 660
    post_update(telegram_server, message_update("/start", chat_id=chat_id, language_code="fa"))
    post_update(telegram_server, message_update(
        "می‌خواهم Llama 3.1 8B را با QLoRA و طول توالی ۲۰۴۸ توکن فاین‌تیون کنم، بودجه ۵۰ دلار", chat_id=chat_id))
    for _ in range(4):  # answer any remaining form question with its first button
        if fake.calls("sendPhoto"):
            break
        keyboards = [c for c in fake.calls("sendMessage") if "reply_markup" in c.payload]
        assert keyboards, texts_to(fake, chat_id)
        key = keyboards[-1].payload["reply_markup"]["inline_keyboard"][0][0]
        fake.clear()
        post_update(telegram_server, {"update_id": next(_update_ids), "callback_query": {
            "id": f"cbq-{next(_update_ids)}", "from": user(chat_id), "chat_instance": "x", "data": key["callback_data"],
            "message": {"message_id": 1, "date": 1700000000, "chat": {"id": chat_id, "type": "private"}}}})
    (photo,) = fake.calls("sendPhoto")
    assert photo.files["photo"].startswith(b"\x89PNG"), "the chart is uploaded, not linked to localhost"
    assert all(utf16_len(t) <= MAX_MESSAGE_UTF16 for t in texts_to(fake, chat_id))
    assert any("GB" in t and PERSIAN.search(t) for t in texts_to(fake, chat_id))


@pytest.mark.e2e
def test_staff_push_through_the_http_api_reaches_telegram(telegram_server, fake):
    """Handoff replies use the Rasa HTTP API with output_channel=telegram inside the running server (§0.3)."""
    post_update(telegram_server, message_update("سلام", chat_id=670))
    fake.clear()
    token = telegram_server.extra["auth_token"]
    body = json.dumps({"name": "utter_greet"}).encode()
    request = urllib.request.Request(
        f"{telegram_server.url}/conversations/670/execute?output_channel=telegram&token={token}", data=body,
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as resp:
        assert resp.status == 200
    assert PERSIAN.search("\n".join(texts_to(fake, 670)))


@pytest.mark.e2e
def test_typing_action_comes_before_the_answer(telegram_server, fake):
    post_update(telegram_server, message_update("سلام", chat_id=680))
    methods = [c.method for c in fake.calls() if str(c.payload.get("chat_id")) == "680"]
    assert methods[0] == "sendChatAction" and "sendMessage" in methods
    assert fake.calls("sendChatAction")[0].payload["action"] == "typing"


@pytest.mark.e2e
def test_a_button_token_from_before_a_restart_falls_back_to_the_button_title(telegram_server, fake):
    """Tokens for long payloads live in memory; after a restart the pressed button's title is sent instead."""
    keyboard = {"inline_keyboard": [[{"text": "سلام", "callback_data": "cb:0123456789abcdef01234567"}]]}
    update = {"update_id": next(_update_ids), "callback_query": {
        "id": "cbq-690", "from": user(690, "fa"), "chat_instance": "ci-690", "data": "cb:0123456789abcdef01234567",
        "message": {"message_id": 56, "date": 1700000000, "chat": {"id": 690, "type": "private"}, "text": "…",
                    "reply_markup": keyboard}}}
    assert post_update(telegram_server, update)[0] == 200
    assert fake.calls("answerCallbackQuery")[0].payload == {"callback_query_id": "cbq-690"}
    assert PERSIAN.search("\n".join(texts_to(fake, 690))), "the title 'سلام' was understood as a greeting"


@pytest.mark.e2e
def test_a_message_over_the_length_limit_is_answered_and_not_stored(telegram_server, fake):
    """Security review finding 6: the same 4,000-character limit as REST and socket.io, answered in the language
    of the message; the text never reaches the tracker."""
    long_text = "Merhaba, bütçem hakkında bir sorum var. " * 110  # 4,400 characters of Turkish
    status, _ = post_update(telegram_server, message_update(long_text, chat_id=4001, language_code="fa"))
    assert status == 200
    reply = "\n".join(texts_to(fake, 4001))
    assert "4000" in reply and "karakter" in reply and not PERSIAN.search(reply), reply
    token = telegram_server.extra["auth_token"]
    with urllib.request.urlopen(f"{telegram_server.url}/conversations/4001/tracker?token={token}", timeout=30) as resp:
        events = json.loads(resp.read())["events"]
    assert not any(e.get("event") == "user" for e in events), events
