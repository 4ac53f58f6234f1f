"""Session fixtures shared by every end-to-end test: one trained model, one action server, one Rasa server.

Tests that need a differently configured Rasa server (Telegram, PostgreSQL) start their own with
tests.servers.start_rasa_server, reusing the session's action server.
"""
from __future__ import annotations

import json
import os
import sys
import signal
import urllib.request
import uuid
from typing import Any, Dict, List, Optional

import pytest

from tests.servers import Server, ensure_model, start_action_server, start_rasa_server


# The product's long-lived worker pools (a server keeps them for its life): tests that ran the actions or the data
# check in this process started them, and they end with the session like any fixture's server.
WORKER_POOLS = (("actions.estimate", "_chart_pool"), ("bot.dataset.channel_check", "_POOL"))


def _shut_down_worker_pools() -> None:
    for module_name, attribute in WORKER_POOLS:
        pool = getattr(sys.modules.get(module_name), attribute, None)
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
            setattr(sys.modules[module_name], attribute, None)


def pytest_sessionfinish(session, exitstatus):
    """Every process the tests started is stopped by the end of the session (issue 20, finding 8: `make test` left
    an action server running). Checked after every fixture's teardown; what is left is stopped and fails the run."""
    from tests.servers import running_children

    _shut_down_worker_pools()
    left = running_children()
    if not left:
        return
    for line in left:  # stopped now, so that nothing outlives the run
        try:
            os.kill(int(line.split()[1].rstrip(":")), signal.SIGTERM)
        except ProcessLookupError:
            pass
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    message = "processes started by the tests were still running at the end of the session:\n" + "\n".join(left)
    if reporter is not None:
        reporter.write_line(message, red=True)
    else:
        print(message)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


# The fixtures that train or load the model or start a server. A test that uses one, itself or through another
# fixture, is an end-to-end test whatever its file says (issue 24: three files without the mark made `make check`
# train the model and start Rasa servers, 5 of its 14 minutes); `make test` still runs it.
SERVER_FIXTURES = frozenset({"rasa_model", "action_server", "rasa_server", "conversation"})


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config, items):
    for item in items:
        if SERVER_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def rasa_model():
    return ensure_model()


@pytest.fixture(scope="session")
def action_server() -> Server:
    server = start_action_server()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def rasa_server(rasa_model, action_server) -> Server:
    server = start_rasa_server(action_server.port)
    yield server
    server.stop()


def post_json(url: str, payload: dict, headers: dict | None = None, timeout: float = 30):
    data = json.dumps(payload).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json", **(headers or {})})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return resp.status, json.loads(resp.read() or b"null")


class Conversation:
    """One user talking to the bot over the REST channel."""

    def __init__(self, server: Server, sender: str | None = None):
        self.server = server
        self.sender = sender or f"test-{uuid.uuid4().hex[:10]}"

    def say(self, text: str, metadata: dict | None = None) -> List[dict]:
        payload = {"sender": self.sender, "message": text}
        if metadata is not None:
            payload["metadata"] = metadata  # what a channel adds: the widget's browser locale, Telegram's language
        _, replies = post_json(f"{self.server.url}/webhooks/rest/webhook", payload)
        return replies

    def say_text(self, text: str) -> str:
        """All reply texts of one turn, joined by newlines."""
        return "\n".join(r.get("text", "") for r in self.say(text) if r.get("text"))


@pytest.fixture
def conversation(rasa_server):
    return lambda sender=None: Conversation(rasa_server, sender)


def handoff_tracker(text: str, intent: str, requested: str, slots: Optional[Dict[str, Any]] = None) -> Any:
    """A rasa_sdk Tracker inside the handoff form: the form asked for `requested`, the customer wrote `text`."""
    from rasa_sdk import Tracker

    latest = {"text": text, "intent": {"name": intent, "confidence": 0.9}, "entities": []}
    events = [{"event": "action", "name": "utter_handoff_intro"}, {"event": "action", "name": "handoff_form"},
              {"event": "action", "name": "action_listen"}, {"event": "user", "text": text, "parse_data": latest},
              {"event": "action", "name": "handoff_form"}]
    return Tracker("tester", {"language": "tr", "requested_slot": requested, **(slots or {})}, latest, events,
                   False, None, {"name": "handoff_form"}, "handoff_form")
