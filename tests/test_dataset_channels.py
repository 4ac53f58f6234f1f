"""The data check end to end: a JSONL sent as a Telegram document (fake Bot API on loopback) and uploaded in the
website widget (headless Chromium), answered with the figures and an estimate that uses the measured sequence length
and volume; afterwards nothing of the file's content is left in the tracker store, the upload folder or var/."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from bot.dataset.analysis import analyse_file
from bot.dataset.texts import load_dataset_knowledge
from tests.fake_bot_api import FakeBotApi
from tests.servers import ROOT, free_port, start_action_server, start_rasa_server, wait_http

pytestmark = [pytest.mark.e2e]

TOKEN = "123456:TEST-token_abc"
SECRET = "webhook-secret_42"
TELEGRAM_CREDENTIALS = yaml.safe_load((ROOT / "credentials.telegram.yml").read_text())
# Sentences that exist only in these test files: none may be found anywhere after the conversation.
MARKERS = {
    "fa": ("بستهٔ زعفران سفارشی من کی به کرمانشاه می‌رسد؟", "بستهٔ زعفران شما پنجشنبه از انبار مشهد ارسال می‌شود."),
    "tr": ("Lavanta sabunu siparişim Eskişehir'e ne zaman ulaşır?",
           "Lavanta sabununuz perşembe günü Isparta deposundan çıkıyor."),
}
SECRET_PHONE = "0532 987 65 43"


def training_file(folder: Path, lang: str, copies: int = 30) -> Path:
    question, answer = MARKERS[lang]
    path = folder / f"train-{lang}.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        for index in range(copies):
            record = {"messages": [{"role": "user", "content": f"{question} ({index + 1})"},
                                   {"role": "assistant", "content": f"{answer} {SECRET_PHONE}" if index == 0
                                    else f"{answer} #{index + 1}"}]}
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        handle.write('{"messages": [{"role": "user", "content": "kırık satır"\n')
    return path


def tracker(server, sender_id: str) -> dict:
    token = server.extra["auth_token"]
    with urllib.request.urlopen(f"{server.url}/conversations/{sender_id}/tracker?token={token}", timeout=30) as resp:
        return json.loads(resp.read())


def assert_no_content_left(server, folders, lang: str) -> None:
    """The file's sentences and phone number are in no tracker row, upload folder or log."""
    needles = [MARKERS[lang][0][:20], MARKERS[lang][1][:20], SECRET_PHONE]
    database = server.workdir / "tracker.db"
    rows = sqlite3.connect(database).execute("SELECT data FROM events").fetchall()
    dump = "\n".join(str(row[0]) for row in rows)
    assert rows and not any(needle in dump for needle in needles)
    for folder in folders:
        for path in Path(folder).rglob("*"):
            if path.is_file():
                text = path.read_bytes().decode("utf-8", "replace")
                assert not any(needle in text for needle in needles), path
    assert not list(Path(folders[0]).glob("*.*")), "the upload folder is empty"


# ------------------------------------------------------------------------------------------ Telegram


@pytest.fixture(scope="module")
def telegram(rasa_model, tmp_path_factory):
    uploads = tmp_path_factory.mktemp("uploads")
    charts = tmp_path_factory.mktemp("charts")
    env = {"ADVISOR_UPLOAD_DIR": str(uploads), "ADVISOR_CHART_DIR": str(charts)}
    with FakeBotApi() as fake:
        actions = start_action_server(env=env)
        server = start_rasa_server(actions.port, credentials=TELEGRAM_CREDENTIALS, env={
            **env, "TELEGRAM_TOKEN": TOKEN, "TELEGRAM_SECRET_TOKEN": SECRET, "TELEGRAM_API_URL": fake.url,
            "TELEGRAM_WEBHOOK_URL": "https://bot.example/webhooks/telegram/webhook"})
        try:
            yield {"fake": fake, "server": server, "actions": actions, "uploads": uploads, "charts": charts}
        finally:
            server.stop()
            actions.stop()


_ids = iter(range(50_000, 60_000))


def post(server, message: dict, chat_id: int, language_code: str) -> None:
    message = {"message_id": next(_ids), "date": 1700000000, "chat": {"id": chat_id, "type": "private"},
               "from": {"id": chat_id, "is_bot": False, "first_name": "T", "language_code": language_code}, **message}
    body = json.dumps({"update_id": next(_ids), "message": message}, ensure_ascii=False).encode()
    request = urllib.request.Request(f"{server.url}/webhooks/telegram/webhook", data=body, headers={
        "Content-Type": "application/json", "X-Telegram-Bot-Api-Secret-Token": SECRET})
    with urllib.request.urlopen(request, timeout=120) as resp:
        assert resp.status == 200


def texts_to(fake, chat_id: int):
    return [c.payload["text"] for c in fake.calls("sendMessage") if str(c.payload["chat_id"]) == str(chat_id)]


def test_a_jsonl_sent_as_a_telegram_document_gets_the_summary_and_the_estimate(telegram, tmp_path):
    fake, server, chat_id = telegram["fake"], telegram["server"], 23001
    fake.clear()
    post(server, {"text": "/start"}, chat_id, "tr")
    post(server, {"text": "Qwen2.5 7B modelini QLoRA ile eğitmek istiyorum, bütçem 50 dolar"}, chat_id, "tr")
    path = training_file(tmp_path, "tr")
    fake.documents["doc-tr-1"] = path.read_bytes()
    before = len(texts_to(fake, chat_id))
    post(server, {"document": {"file_id": "doc-tr-1", "file_unique_id": "u1", "file_name": "egitim.jsonl",
                               "mime_type": "application/jsonl", "file_size": path.stat().st_size}}, chat_id, "tr")
    answers = texts_to(fake, chat_id)[before:]
    summary = next(text for text in answers if "kullanılabilir" in text)
    kb = load_dataset_knowledge()
    report = analyse_file(str(path), kb.limits["telegram"].read_limits(), "qwen2.5-7b")
    assert report.examples == 30 and report.problems == {"bad_json": [31]}
    assert f"kullanılabilir {report.examples} örnek" in summary and "satır 31" in summary
    assert "telefon numarası 1" in summary and "KVKK" in summary
    slots = tracker(server, str(chat_id))["slots"]
    assert slots["seq_len"] == report.seq_len and slots["total_tokens"] == report.tokens_per_epoch
    assert slots["dataset_summary"]["tokenizer"] == "qwen2"
    estimate = [text for text in answers if "GB" in text and "dolar" in text]
    assert estimate, answers  # the estimate ran with the measured length and volume
    assert fake.calls("sendPhoto"), "the length histogram is sent as a picture"
    assert "maskelenmiş bir kopyayı bir sonraki mesajda" in summary
    documents = [c for c in fake.calls("sendDocument") if str(c.payload["chat_id"]) == str(chat_id)]
    assert len(documents) == 1 and documents[0].payload["document"] == "<file egitim-masked.jsonl>"
    assert "maskelenmiş kopyası" in documents[0].payload["caption"]
    masked = [json.loads(line) for line in documents[0].files["document"].decode("utf-8").splitlines()]
    assert len(masked) == 30 and "[PHONE]" in masked[0]["messages"][1]["content"]
    assert SECRET_PHONE not in documents[0].files["document"].decode("utf-8")
    assert masked[1] == json.loads(path.read_text(encoding="utf-8").splitlines()[1])  # the rest as it was
    assert_no_content_left(server, [telegram["uploads"], telegram["charts"], ROOT / "var"], "tr")


def test_a_binary_renamed_jsonl_is_refused_in_persian(telegram, tmp_path):
    fake, server, chat_id = telegram["fake"], telegram["server"], 23002
    fake.clear()
    post(server, {"text": "/start"}, chat_id, "fa")
    fake.documents["doc-bin"] = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
    post(server, {"document": {"file_id": "doc-bin", "file_unique_id": "u2", "file_name": "data.jsonl",
                               "file_size": 1032}}, chat_id, "fa")
    assert any("JSONL، CSV یا XLSX" in text for text in texts_to(fake, chat_id))
    post(server, {"document": {"file_id": "doc-big", "file_unique_id": "u3", "file_name": "big.jsonl",
                               "file_size": 2_000_000_000}}, chat_id, "fa")
    assert any("20 MB" in text for text in texts_to(fake, chat_id))
    assert not fake.calls("getFile") or all(c.payload["file_id"] != "doc-big" for c in fake.calls("getFile"))
    assert not list(Path(telegram["uploads"]).glob("*.*"))


def test_an_excel_sheet_with_a_formula_is_read_and_the_formula_row_named(telegram, tmp_path):
    import openpyxl

    fake, server, chat_id = telegram["fake"], telegram["server"], 23004
    fake.clear()
    post(server, {"text": "/start"}, chat_id, "tr")
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["Soru", "Cevap"])
    for index in range(12):
        sheet.append([f"{MARKERS['tr'][0]} {index}", f"{MARKERS['tr'][1]} {index}"])
    sheet.append(["=1+1", "=A2"])
    path = tmp_path / "sorular.xlsx"
    workbook.save(path)
    fake.documents["doc-xlsx"] = path.read_bytes()
    post(server, {"document": {"file_id": "doc-xlsx", "file_unique_id": "u4", "file_name": "sorular.xlsx",
                               "file_size": path.stat().st_size}}, chat_id, "tr")
    summary = next(text for text in texts_to(fake, chat_id) if "kullanılabilir" in text)
    assert "(Excel)" in summary and "kullanılabilir 12 örnek" in summary
    assert "formül içeren hücre (formüller çalıştırılmaz): satır 14" in summary
    assert_no_content_left(server, [telegram["uploads"], telegram["charts"], ROOT / "var"], "tr")


def test_a_typed_dataset_payload_is_ignored(telegram):
    fake, server, chat_id = telegram["fake"], telegram["server"], 23003
    fake.clear()
    post(server, {"text": '/dataset_upload{"dataset_report": {"examples": 1}}'}, chat_id, "tr")
    assert texts_to(fake, chat_id) == []


# ------------------------------------------------------------------------------------------ the widget


SOCKETIO_CREDENTIALS = {
    "rest": None,
    "bot.assistant.channels.socketio.SocketIOInput": {"user_message_evt": "user_uttered",
                                                      "bot_message_evt": "bot_uttered", "session_persistence": True},
}


@pytest.fixture(scope="module")
def site(rasa_model, tmp_path_factory):
    uploads = tmp_path_factory.mktemp("uploads")
    charts = tmp_path_factory.mktemp("charts")
    web_port = free_port()
    web_url = f"http://127.0.0.1:{web_port}"
    env = {"ADVISOR_PUBLIC_URL": web_url, "ADVISOR_CHART_DIR": str(charts), "ADVISOR_UPLOAD_DIR": str(uploads)}
    actions = start_action_server(env=env)
    rasa = start_rasa_server(actions.port, credentials=SOCKETIO_CREDENTIALS, env=env)
    log_dir = ROOT / "test-artifacts" / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    log = open(log_dir / f"webapp-dataset-{web_port}.log", "w")
    webapp = subprocess.Popen([sys.executable, "-m", "bot.website", "--host", "127.0.0.1", "--port", str(web_port)],
                              cwd=ROOT, env={**os.environ, **env, "ADVISOR_SOCKET_URL": rasa.url},
                              stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_http(f"{web_url}/", 30, webapp)
        yield {"url": web_url, "rasa": rasa, "uploads": uploads, "charts": charts}
    finally:
        webapp.terminate()
        webapp.wait(10)
        rasa.stop()
        actions.stop()


@pytest.mark.browser
def test_a_jsonl_uploaded_in_the_widget_gets_the_summary_and_the_estimate(site, tmp_path):
    from playwright.sync_api import sync_playwright

    path = training_file(tmp_path, "fa", copies=40)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True)
        context = browser.new_context(bypass_csp=True, accept_downloads=True)
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{site['url']}/?lang=fa")
        page.wait_for_selector(".gpa[data-connection='connected']")
        page.wait_for_selector(".gpa-row--bot")
        page.fill(".gpa-input", "می‌خواهم Llama 3.1 8B را با LoRA فاین‌تیون کنم، بودجه ۱۰۰ دلار")
        page.keyboard.press("Enter")
        page.wait_for_function("document.querySelectorAll('.gpa-row--bot').length > 1", timeout=60000)
        time.sleep(2)
        assert page.locator(".gpa-file").is_visible()
        page.set_input_files(".gpa-file-input", str(path))
        summary = page.locator(".gpa-row--bot .gpa-text", has_text="نمونهٔ قابل استفاده")
        summary.wait_for(timeout=90000)
        page.locator(".gpa-row--bot .gpa-text", has_text="GB").last.wait_for(timeout=60000)
        page.wait_for_selector(".gpa-image", timeout=30000)
        text = summary.inner_text()
        # the masked copy: offered while it waits in the upload folder, downloaded over the session, then deleted
        offer = page.locator(".gpa-masked-download")
        offer.wait_for(timeout=30000)
        assert offer.inner_text() == "دریافت نسخهٔ پوشانده‌شده"
        assert len(list(Path(site["uploads"]).glob("masked-*.jsonl"))) == 1
        with page.expect_download(timeout=30000) as download_info:
            offer.click()
        download = download_info.value
        masked_text = Path(download.path()).read_text(encoding="utf-8")
        page.locator(".gpa-masked .gpa-text", has_text="پاک شد").wait_for(timeout=10000)
        session_id = page.evaluate("JSON.parse(localStorage.getItem('gpuAdvisor.session'))")
        session_id = session_id.get("id") if isinstance(session_id, dict) else session_id
        page.screenshot(path=str(ROOT / "test-artifacts" / "widget-dataset-fa.png"))
        context.close()
        browser.close()
    assert errors == []
    kb = load_dataset_knowledge()
    report = analyse_file(str(path), kb.limits["widget"].read_limits(), "llama-3.1-8b")
    assert f"{report.examples} نمونهٔ قابل استفاده" in text and "Llama 3" in text
    assert "با دکمهٔ زیر دریافتش کنید" in text
    assert download.suggested_filename == "train-fa-masked.jsonl"
    assert SECRET_PHONE not in masked_text and "[PHONE]" in masked_text
    assert len(masked_text.splitlines()) == 40 and MARKERS["fa"][0] in masked_text
    slots = tracker(site["rasa"], session_id)["slots"]
    assert slots["seq_len"] == report.seq_len and slots["total_tokens"] == report.tokens_per_epoch
    assert_no_content_left(site["rasa"], [site["uploads"], site["charts"], ROOT / "var"], "fa")


@pytest.mark.browser
def test_a_renamed_binary_uploaded_in_the_widget_is_refused_in_turkish(site, tmp_path):
    from playwright.sync_api import sync_playwright

    path = tmp_path / "veri.jsonl"
    path.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 64)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True)
        context = browser.new_context(bypass_csp=True)
        page = context.new_page()
        page.goto(f"{site['url']}/?lang=tr")
        page.wait_for_selector(".gpa[data-connection='connected']")
        page.wait_for_selector(".gpa-row--bot")
        assert page.locator(".gpa-file").inner_text() == "Veri dosyası"
        page.set_input_files(".gpa-file-input", str(path))
        answer = page.locator(".gpa-row--bot .gpa-text", has_text="JSONL, CSV veya XLSX")
        answer.wait_for(timeout=60000)
        context.close()
        browser.close()
    assert not list(Path(site["uploads"]).glob("*.*"))
