"""The website widget in a real browser: Debian's headless Chromium driven by Playwright, against the real webapp,
Rasa (socket.io with session persistence, our SocketIOInput) and action servers.

Screenshots go to test-artifacts/ (every run) and, with UPDATE_README_SCREENSHOTS=1 (`make screenshots`),
to docs/img/widget-{fa,tr}.png (the README's pictures).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.servers import ROOT, free_port, start_action_server, start_rasa_server, wait_http

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "test-artifacts"
README_IMAGES = ROOT / "docs" / "img"
PERSIAN = re.compile(r"[\u0600-\u06FF]")
PHONE = {"width": 390, "height": 844}
SOCKETIO_CREDENTIALS = {
    "rest": None,
    "bot.assistant.channels.socketio.SocketIOInput": {"user_message_evt": "user_uttered",
                                                      "bot_message_evt": "bot_uttered", "session_persistence": True},
}
MAX_FORM_TURNS = 5
# A turn is over when no new bot message came for this long (several actions may answer one message).
SETTLE_S = 2.0


@pytest.fixture(scope="module")
def site(rasa_model, tmp_path_factory):
    """webapp + action server + Rasa, wired so that chart URLs point at this webapp."""
    chart_dir = tmp_path_factory.mktemp("charts")
    web_port = free_port()
    web_url = f"http://127.0.0.1:{web_port}"
    env = {"ADVISOR_PUBLIC_URL": web_url, "ADVISOR_CHART_DIR": str(chart_dir)}
    actions = start_action_server(env=env)
    try:
        rasa = start_rasa_server(actions.port, credentials=SOCKETIO_CREDENTIALS, env=env)
    except BaseException:  # a Rasa that does not come up must not leave the action server running
        actions.stop()
        raise
    log = open(ARTIFACTS / "logs" / f"webapp-{web_port}.log", "w")
    webapp = subprocess.Popen([sys.executable, "-m", "bot.website", "--host", "127.0.0.1", "--port", str(web_port)],
                              cwd=ROOT, env={**os.environ, **env, "ADVISOR_SOCKET_URL": rasa.url},
                              stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_http(f"{web_url}/", 30, webapp)
        yield {"url": web_url, "rasa": rasa}
    finally:
        webapp.terminate()
        webapp.wait(10)
        rasa.stop()
        actions.stop()


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (Playwright's own download fails here)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    # bypass_csp: Playwright's wait_for_function evaluates strings, which the page's CSP forbids. It also means
    # the text-not-HTML test proves the widget's rendering safe on its own, without the CSP's help.
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, bypass_csp=True)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.close()
    assert errors == [], errors


def bot_rows(page) -> int:
    return page.locator(".gpa-row--bot").count()


def wait_for_bot(page, before: int, timeout_s: float = 60) -> None:
    """Wait for at least one new bot message, then for the rest of the turn."""
    page.wait_for_function(f"document.querySelectorAll('.gpa-row--bot').length > {before}",
                           timeout=timeout_s * 1000)
    count, stable_since = bot_rows(page), time.monotonic()
    while time.monotonic() - stable_since < SETTLE_S:
        time.sleep(0.25)
        now = bot_rows(page)
        if now != count:
            count, stable_since = now, time.monotonic()


def type_message(page, text: str) -> None:
    before = bot_rows(page)
    page.fill(".gpa-input", text)
    page.keyboard.press("Enter")
    wait_for_bot(page, before)


def click_first_button(page) -> str:
    button = page.locator(".gpa-button:enabled").first
    title = button.inner_text()
    before = bot_rows(page)
    button.click()
    wait_for_bot(page, before)
    return title


def direction(page, locator) -> str:
    return locator.evaluate("el => getComputedStyle(el).direction")


def estimate_until_chart(page, request_text: str) -> None:
    type_message(page, request_text)
    for _ in range(MAX_FORM_TURNS):
        try:  # the chart may still be on its way (rendering it takes a moment on a busy machine)
            page.wait_for_selector(".gpa-image", timeout=5000)
            break
        except PlaywrightTimeout:
            click_first_button(page)  # a remaining form question: take the first offered answer
    chart = page.locator(".gpa-image").last
    chart.scroll_into_view_if_needed()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=chart.element_handle(),
                           timeout=20000)


def save_screenshot(page, name: str) -> None:
    """Test artifact on every run; the README's pictures only on request (`make screenshots`), so a test run
    never changes tracked files."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    if os.environ.get("UPDATE_README_SCREENSHOTS") == "1":
        README_IMAGES.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, README_IMAGES / f"{name}.png")


def history_snapshot(page):
    return page.evaluate("""() => Array.from(document.querySelectorAll('.gpa-bubble')).map(b => ({
        who: b.classList.contains('gpa-bubble--user') ? 'user' : 'bot',
        text: (b.querySelector('.gpa-text') || {}).textContent || '',
        image: !!b.querySelector('.gpa-image')}))""")


def test_persian_estimate_conversation(site, page):
    page.goto(f"{site['url']}/?lang=fa")
    wait_for_bot(page, 0)
    greeting = page.locator(".gpa-row--bot .gpa-text").first
    assert PERSIAN.search(greeting.inner_text())
    assert direction(page, greeting) == "rtl"
    assert page.locator(".gpa-button:enabled").count() >= 1, "the greeting offers quick replies"

    title = click_first_button(page)
    assert page.locator(".gpa-row--user .gpa-text").last.inner_text() == title, "a button shows its title"
    estimate_until_chart(page, "Llama 3.1 8B با QLoRA و طول توالی ۲۰۴۸ توکن، بودجه ۵۰ دلار")

    answers = [t for t in page.locator(".gpa-row--bot .gpa-text").all_inner_texts() if "GB" in t]
    assert answers and PERSIAN.search(answers[-1]), "the estimate answer is Persian and names GB"
    answer = page.locator(".gpa-row--bot .gpa-text", has_text="GB").last
    assert direction(page, answer) == "rtl"
    # Latin names and numbers inside Persian text are isolated runs, so "8B" or "24 GB" keep their order.
    assert answer.locator("bdi").count() >= 1
    save_screenshot(page, "widget-fa")


def test_turkish_conversation_survives_a_reload(site, page):
    page.goto(f"{site['url']}/?lang=tr")
    wait_for_bot(page, 0)
    greeting = page.locator(".gpa-row--bot .gpa-text").first
    assert not PERSIAN.search(greeting.inner_text()) and re.search(r"[ğışçöüİ]", greeting.inner_text())
    assert direction(page, greeting) == "ltr"
    assert page.get_attribute(".gpa", "dir") == "ltr"

    estimate_until_chart(page, "Mistral 7B modelini LoRA ile 4096 token uzunlukla eğitmek istiyorum, bütçem 100 dolar")
    answer = page.locator(".gpa-row--bot .gpa-text", has_text="GB").last
    assert not PERSIAN.search(answer.inner_text()) and direction(page, answer) == "ltr"
    save_screenshot(page, "widget-tr")

    before = history_snapshot(page)
    session_id = page.evaluate("JSON.parse(localStorage.getItem('gpuAdvisor.session'))")
    page.reload()
    page.wait_for_selector(".gpa-bubble")
    assert history_snapshot(page) == before
    assert page.evaluate("JSON.parse(localStorage.getItem('gpuAdvisor.session'))") == session_id
    page.wait_for_selector(".gpa[data-connection='connected']")

    # The same conversation continues after the reload (same session id, same language).
    type_message(page, "Teşekkürler!")
    assert not PERSIAN.search(page.locator(".gpa-row--bot .gpa-text").last.inner_text())
    page.screenshot(path=str(ARTIFACTS / "widget-tr-after-reload.png"))


def test_bot_text_is_rendered_as_text_never_as_html(site, page):
    page.goto(f"{site['url']}/?lang=fa")
    wait_for_bot(page, 0)
    page.wait_for_selector(".gpa[data-connection='connected']")
    session_id = page.evaluate("JSON.parse(localStorage.getItem('gpuAdvisor.session'))")["id"]
    hostile = ('<script>window.__pwned = "script"</script><img src=x onerror="window.__pwned=\'img\'">'
               ' <b>bold</b> <a href="javascript:alert(1)">link</a>')
    # A staff reply pushed through the Rasa HTTP API travels the same socket.io path as any bot message.
    token = site["rasa"].extra["auth_token"]
    request = urllib.request.Request(
        f"{site['rasa'].url}/conversations/{session_id}/tracker/events"
        f"?output_channel=socketio&execute_side_effects=true&token={token}",
        data=json.dumps([{"event": "bot", "text": hostile}]).encode(), headers={"Content-Type": "application/json"})
    before = bot_rows(page)
    with urllib.request.urlopen(request, timeout=30) as resp:
        assert resp.status == 200
    wait_for_bot(page, before)
    bubble = page.locator(".gpa-row--bot .gpa-text").last
    assert bubble.inner_text() == hostile
    assert page.evaluate("window.__pwned") is None
    assert page.locator(".gpa-log script, .gpa-log b, .gpa-log a, .gpa-log img:not(.gpa-image)").count() == 0
    page.screenshot(path=str(ARTIFACTS / "widget-text-not-html.png"))


def test_widget_is_keyboard_and_screen_reader_usable(site, page):
    page.goto(f"{site['url']}/?lang=tr")
    wait_for_bot(page, 0)
    log = page.locator(".gpa-log")
    assert log.get_attribute("role") == "log" and log.get_attribute("aria-live") == "polite"
    field_id = page.get_attribute(".gpa-input", "id")
    assert page.locator(f"label[for='{field_id}']").inner_text().strip()
    # Keyboard only: Tab reaches a quick reply, Enter presses it.
    for _ in range(12):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('gpa-button')"):
            break
    assert page.evaluate("document.activeElement.classList.contains('gpa-button')")
    before = bot_rows(page)
    page.keyboard.press("Enter")
    wait_for_bot(page, before)
    # Usable at phone width: nothing overflows horizontally.
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_embed_needs_one_element_and_one_script_and_runs_under_the_csp(site, browser):
    context = browser.new_context(viewport={"width": 1100, "height": 800})  # CSP enforced here
    page = context.new_page()
    violations = []
    page.on("console", lambda msg: violations.append(msg.text) if "Content Security Policy" in msg.text else None)
    try:
        page.goto(f"{site['url']}/demo.html")
        page.wait_for_selector(".gpa-row--bot .gpa-text", timeout=60000)
        assert page.locator("script[src$='widget.js']").count() == 1
        assert page.locator("#gpu-advisor-chat .gpa-log").count() == 1
        assert violations == []
        page.screenshot(path=str(ARTIFACTS / "widget-embedded-demo.png"))
    finally:
        context.close()


def test_widget_reconnects_and_rejoins_its_conversation(site, page):
    page.goto(f"{site['url']}/?lang=fa")
    wait_for_bot(page, 0)
    page.wait_for_selector(".gpa[data-connection='connected']")
    # Drop the transport under the widget, as a network hiccup or a Rasa restart would.
    page.evaluate("document.getElementById('gpu-advisor-chat').gpuAdvisor.socket.io.engine.close()")
    page.wait_for_selector(".gpa[data-connection='reconnecting']", timeout=10000)
    page.wait_for_selector(".gpa[data-connection='connected']", timeout=30000)
    type_message(page, "ممنون")  # the reply reaches this tab only if it rejoined its session's room
    assert PERSIAN.search(page.locator(".gpa-row--bot .gpa-text").last.inner_text())


def test_webapp_serves_charts_config_and_a_strict_page(site):
    with urllib.request.urlopen(f"{site['url']}/config.json", timeout=10) as resp:
        assert json.loads(resp.read())["socketUrl"] == site["rasa"].url
    with urllib.request.urlopen(f"{site['url']}/", timeout=10) as resp:
        policy = resp.headers["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    for path in ("/charts/..%2F..%2Fpyproject.toml", "/charts/missing.png", "/../pyproject.toml"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{site['url']}{path}", timeout=10)
        assert refused.value.code in (403, 404), path


def test_new_chat_starts_a_fresh_session(site, page):
    page.goto(f"{site['url']}/?lang=tr")
    wait_for_bot(page, 0)
    old_session = page.evaluate("JSON.parse(localStorage.getItem('gpuAdvisor.session'))")
    type_message(page, "Teşekkürler")
    page.click(".gpa-reset")
    wait_for_bot(page, 0)
    assert page.evaluate("JSON.parse(localStorage.getItem('gpuAdvisor.session'))") != old_session
    assert [h["who"] for h in history_snapshot(page)] == ["bot"], "only the new greeting is shown"
    assert page.evaluate("localStorage.getItem('gpuAdvisor.history')") is None


def test_host_page_storage_keeps_no_typed_text_and_the_reload_shows_it_masked(site, page):
    """Security review finding 16: the widget kept 200 messages of what the customer typed, unmasked, in the host
    site's localStorage. Now it keeps only the server-issued session; the server sends the (masked) history."""
    page.goto(f"{site['url']}/?lang=tr")
    wait_for_bot(page, 0)
    page.wait_for_selector(".gpa[data-connection='connected']")
    type_message(page, "telefonum 0532 765 43 21, e-posta rt12@örnek.com.tr")
    stored = page.evaluate("JSON.stringify(Object.assign({}, localStorage))")
    for secret in ("0532", "765 43 21", "örnek", "telefonum"):
        assert secret not in stored, stored
    session = page.evaluate("JSON.parse(localStorage.getItem('gpuAdvisor.session'))")
    assert set(session) == {"id", "token"} and session["id"].startswith("web-")
    page.reload()
    page.wait_for_selector(".gpa-row--user .gpa-text")
    user_lines = page.locator(".gpa-row--user .gpa-text").all_inner_texts()
    assert any("[PHONE]" in line and "[EMAIL]" in line for line in user_lines), user_lines
    assert not any("0532" in line for line in user_lines)


def _page_with_locale(browser, locale: str):
    """A browser whose language is `locale` (navigator.language), as a customer's own browser would be."""
    context = browser.new_context(viewport=PHONE, locale=locale, bypass_csp=True)
    page = context.new_page()
    errors: list = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    return context, page, errors


def _labels(page) -> dict:
    return {"lang": page.get_attribute(".gpa", "lang"), "dir": page.get_attribute(".gpa", "dir"),
            "placeholder": page.get_attribute(".gpa-input", "placeholder"), "send": page.inner_text(".gpa-send"),
            "newChat": page.inner_text(".gpa-reset"), "title": page.inner_text(".gpa-title"),
            "inputLabel": page.locator("label.gpa-sr").inner_text()}


def _expected_labels(page, lang: str) -> dict:
    texts = page.evaluate(f"window.GpuAdvisorWidget.texts.{lang}")
    return {"lang": lang, "dir": "rtl" if lang == "fa" else "ltr", "placeholder": texts["placeholder"],
            "send": texts["send"], "newChat": texts["newChat"], "title": texts["title"],
            "inputLabel": texts["inputLabel"]}


def test_turkish_browser_gets_turkish_labels_and_its_locale_reaches_the_bot(site, browser):
    """Issue 13 #5: on a Turkish browser the chat page (Persian by default) opens in Turkish, and the first message
    carries the browser language as metadata `locale` for the assistant."""
    context, page, errors = _page_with_locale(browser, "tr-TR")
    try:
        page.goto(f"{site['url']}/")  # no ?lang=: only the browser says Turkish
        wait_for_bot(page, 0)
        assert page.evaluate("document.documentElement.lang") == "fa", "the page itself stays Persian"
        assert _labels(page) == _expected_labels(page, "tr")
        texts = page.evaluate("window.GpuAdvisorWidget.texts")
        assert set(texts["fa"]) == set(texts["tr"]), "every label exists in both languages"
        greeting = page.locator(".gpa-row--bot .gpa-text").first.inner_text()
        assert not PERSIAN.search(greeting) and re.search(r"[ğışçöüİ]", greeting), greeting

        session = page.evaluate("JSON.parse(localStorage.getItem('gpuAdvisor.session'))")
        rasa = site["rasa"]
        with urllib.request.urlopen(f"{rasa.url}/conversations/{session['id']}/tracker"
                                    f"?token={rasa.extra['auth_token']}", timeout=30) as resp:
            events = json.loads(resp.read())["events"]
        first_user = next(e for e in events if e["event"] == "user")
        assert (first_user.get("metadata") or {}).get("locale") == "tr-TR", first_user.get("metadata")
        page.screenshot(path=str(ARTIFACTS / "widget-turkish-browser.png"))
        assert errors == [], errors
    finally:
        context.close()


def test_labels_follow_the_conversation_language(site, browser):
    """The widget opens in Persian; when the assistant answers in Turkish the labels switch, and back again."""
    context, page, errors = _page_with_locale(browser, "fa-IR")
    try:
        page.goto(f"{site['url']}/")
        wait_for_bot(page, 0)
        page.wait_for_selector(".gpa[data-connection='connected']")
        assert _labels(page) == _expected_labels(page, "fa")
        assert page.inner_text(".gpa-status") == page.evaluate("window.GpuAdvisorWidget.texts.fa.connected")

        type_message(page, "Merhaba, Qwen2.5 7B'yi QLoRA ile eğitmek istiyorum")
        reply = page.locator(".gpa-row--bot .gpa-text").last.inner_text()
        assert not PERSIAN.search(reply), reply
        assert _labels(page) == _expected_labels(page, "tr")
        assert page.inner_text(".gpa-status") == page.evaluate("window.GpuAdvisorWidget.texts.tr.connected")

        type_message(page, "خیلی ممنون، لطفا فارسی ادامه بدیم")
        assert PERSIAN.search(page.locator(".gpa-row--bot .gpa-text").last.inner_text())
        assert _labels(page) == _expected_labels(page, "fa")

        # Messages in both languages, English-only or without letters leave the interface as it is.
        language = page.evaluate("""() => ['Yalnızca Türkçe ve Farsça; فقط فارسی و ترکی',
            '(I speak Persian and Turkish only.)', '24 GB', 'Önerimiz A40 (48 GB)',
            'پیشنهاد من A40 (48 GB) است'].map(window.GpuAdvisorWidget.messageLanguage)""")
        assert language == [None, None, None, "tr", "fa"]
        assert errors == [], errors
    finally:
        context.close()


def test_chat_page_cannot_be_framed_by_another_site(site, browser):
    """Security review finding 16: `frame-ancestors *` let any site frame the chat page (clickjacking). A page on
    another origin now gets an empty frame; the website's own pages may still frame it."""
    import http.server
    import threading

    evil_page = (f'<!doctype html><iframe id="chat" src="{site["url"]}/?lang=tr" width="400" height="600">'
                 '</iframe>').encode()

    class Evil(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(evil_page)

        def log_message(self, *args):
            pass

    evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Evil)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"http://localhost:{evil.server_port}/")  # another origin than 127.0.0.1:<site port>
        page.wait_for_timeout(3000)
        frame = page.frame_locator("#chat")
        assert frame.locator("#gpu-advisor-chat").count() == 0, "the chat page loaded inside a foreign frame"
        with urllib.request.urlopen(f"{site['url']}/", timeout=10) as resp:
            assert "frame-ancestors 'self'" in resp.headers["Content-Security-Policy"]
            assert resp.headers["X-Frame-Options"] == "SAMEORIGIN"
    finally:
        context.close()
        evil.shutdown()
