"""patches.in_process_actions: the validation actions run inside Rasa and answer exactly as the action server
does; nothing of them goes over HTTP; rejections and errors keep the meaning of the action server's 400 and 500; the
action works on its own copies of the tracker.

The equivalence test runs the real action server (bot.assistant.action_server) and compares its answers with the
in-process ones on Persian and Turkish messages, in and out of the estimate form.
"""
from __future__ import annotations

import subprocess
import sys
from typing import Any, Dict, List, Optional

import pytest

import bot.assistant  # noqa: F401  installs the patches, as in every Rasa process of the project
import rasa.core.processor  # noqa: F401  loading it installs the timeout patch on top
from bot.assistant.patches import action_timeout, in_process_actions
from rasa.core.actions.action import ActionExecutionRejection, ActionExtractSlots, RemoteAction
from rasa.core.channels.channel import CollectingOutputChannel
from rasa.core.nlg import TemplatedNaturalLanguageGenerator
from rasa.shared.core.domain import Domain
from rasa.shared.core.events import ActionExecuted, ActiveLoop, BotUttered, SlotSet, UserUttered
from rasa.shared.core.trackers import DialogueStateTracker
from rasa.shared.exceptions import RasaException
from rasa.utils.endpoints import EndpointConfig
from tests.servers import ROOT, action_endpoint, start_action_server
from tests.test_rasa_patches import VALID, action_server_answering

DOMAIN = Domain.load(str(ROOT / "domain"))

# (text, intent, detected language, requested slot of the active estimate form or None): messages as customers type
# them, written for this test (not in data/ or tests/heldout).
MESSAGES = [
    ("سلام، یه مدل ۱۴ میلیاردی دارم میخوام با LoRA آموزشش بدم", "estimate", "fa", None),
    ("مدلمون mistral small 24b هست", "inform", "fa", "model"),
    ("کیولورا", "inform", "fa", "method"),
    ("حدود ۸ هزار توکن", "inform", "fa", "seq_len"),
    ("نهایتا ۳۰۰ دلار خرج کنیم", "inform", "fa", "budget"),
    ("فرقی نمیکنه", "dont_know", "fa", "budget"),
    ("قیمتا با مالیاته؟ ضمنا مدلم gemma 3 12b ـه", "faq_prices", "fa", None),
    ("Phi-4'ü QLoRA ile 2048 token eğitmek istiyorum", "estimate", "tr", None),
    ("yöntem olarak full fine-tuning", "inform", "tr", "method"),
    ("saatte en fazla 2 dolar", "inform", "tr", "budget"),
    ("bilmiyorum, sen seç", "dont_know", "tr", "seq_len"),
    ("KVKK açısından verilerim nerede duruyor? bu arada model qwen3 32b", "faq_kvkk", "tr", None),
    ("Türkçe devam edelim lütfen", "switch_language", "fa", None),
    ("asdkjh 99999999999999999999999999999999", "nlu_fallback", None, "seq_len"),
]


def _tracker(text: str, intent: str, language: Optional[str], requested: Optional[str]) -> DialogueStateTracker:
    """A conversation with an earlier turn, then `text`; in the estimate form asking `requested` when given."""
    tracker = DialogueStateTracker("in-process", slots=DOMAIN.slots)
    tracker.update_with_events([
        ActionExecuted("action_session_start"), SlotSet("language", language or "fa"), ActionExecuted("action_listen"),
        UserUttered("سلام", {"name": "greet", "confidence": 0.95}), ActionExecuted("action_greet"),
        BotUttered("سلام!", metadata={"utter_action": "utter_greet"})], DOMAIN)
    if requested:
        tracker.update_with_events([ActiveLoop("estimate_form"), SlotSet("requested_slot", requested)], DOMAIN)
    parse: Dict[str, Any] = {"text": text, "intent": {"name": intent, "confidence": 0.9}, "entities": []}
    if language:
        parse["detected_language"] = language
    tracker.update_with_events([ActionExecuted("action_listen"),
                                UserUttered(text, parse["intent"], parse_data=parse, message_id="m")], DOMAIN)
    return tracker


async def _run(name: str, url: str, tracker: DialogueStateTracker) -> List[Any]:
    return await RemoteAction(name, EndpointConfig.from_dict(action_endpoint(url))).run(
        CollectingOutputChannel(), TemplatedNaturalLanguageGenerator(DOMAIN.responses), tracker, DOMAIN)


def test_patch_is_installed_under_the_timeout_patch():
    assert in_process_actions.is_installed() and action_timeout.is_installed()
    assert set(in_process_actions.IN_PROCESS_ACTIONS) == {"action_validate_slot_mappings", "validate_estimate_form"}


def test_in_process_actions_are_the_named_classes_and_do_no_io_of_their_own():
    executor = in_process_actions.executor()
    assert set(executor.actions) == set(in_process_actions.IN_PROCESS_ACTIONS)
    # Importing them loads neither the ticket store, the charts, a database driver nor an HTTP client of ours.
    code = ("import sys, actions.language, actions.forms\n"
            "bad = [m for m in sys.modules if m.startswith(('bot.tickets', 'bot.presentation.chart', 'sqlalchemy',"
            " 'psycopg2', 'redis', 'requests', 'matplotlib'))]\n"
            "print(bad)\n")
    loaded = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]", loaded.stdout
    for module in ("language", "forms"):
        source = (ROOT / "actions" / f"{module}.py").read_text()
        assert "open(" not in source and "environ" not in source, module


async def test_nothing_of_the_validation_actions_goes_over_http():
    requests: List[dict] = []
    tracker = _tracker(*MESSAGES[1])
    with action_server_answering(VALID, requests=requests) as url:
        await _run("action_validate_slot_mappings", url, tracker)
        form = await _run("validate_estimate_form", url, tracker)
        assert requests == []
        assert SlotSet("model_size_b", 24.0) in form, form
        await _run("action_estimate", url, tracker)
    assert [request["next_action"] for request in requests] == ["action_estimate"]


@pytest.fixture(scope="module")
def real_action_server():
    server = start_action_server()
    yield f"{server.url}/webhook"
    server.stop()


@pytest.mark.parametrize("name", ["action_validate_slot_mappings", "validate_estimate_form"])
async def test_in_process_answers_are_the_action_servers(real_action_server, monkeypatch, name):
    in_process: List[List[Any]] = []
    for message in MESSAGES:
        in_process.append(await _run(name, real_action_server, _tracker(*message)))
    monkeypatch.setattr(in_process_actions, "IN_PROCESS_ACTIONS", {})
    over_http: List[List[Any]] = []
    for message in MESSAGES:
        over_http.append(await _run(name, real_action_server, _tracker(*message)))
    assert in_process == over_http
    assert sum(1 for events in in_process if events) >= len(MESSAGES) // 2, in_process  # not a vacuous comparison
    languages = [event.value for events in in_process for event in events
                 if isinstance(event, SlotSet) and event.key == "language"]
    if name == "action_validate_slot_mappings":
        assert "tr" in languages, in_process


def _fake_action(behaviour: str) -> type:
    """An in-process action standing in for action_validate_slot_mappings: rejects, fails, or answers after changing
    its own copy of the tracker."""
    from rasa_sdk import Action
    from rasa_sdk.events import SlotSet as SdkSlotSet
    from rasa_sdk.interfaces import ActionExecutionRejection as SdkRejection

    class Fake(Action):
        def name(self) -> str:
            return "action_validate_slot_mappings"

        async def run(self, dispatcher, tracker, domain):
            if behaviour == "reject":
                raise SdkRejection(self.name(), "not for me")
            if behaviour == "fail":
                raise ValueError("a bug")
            tracker.slots["gpu_count"] = 999  # changes its own copy only
            tracker.latest_message["text"] = "changed"
            dispatcher.utter_message(response="utter_greet")
            return [SdkSlotSet("language", "tr")]

    return Fake


@pytest.fixture
def fake_action(monkeypatch):
    from rasa_sdk.executor import ActionExecutor

    def install(behaviour: str) -> None:
        executor = ActionExecutor()
        executor.register_action(_fake_action(behaviour))
        monkeypatch.setattr(in_process_actions, "_executor", executor)

    return install


async def test_the_action_works_on_copies_and_its_answer_is_handled_as_rasa_handles_http(fake_action):
    fake_action("answer")
    tracker = _tracker(*MESSAGES[0])
    before = tracker.current_state()
    events = await _run("action_validate_slot_mappings", "http://127.0.0.1:1/webhook", tracker)
    assert tracker.current_state() == before
    assert SlotSet("language", "tr") in events
    uttered = [event for event in events if isinstance(event, BotUttered)]
    assert len(uttered) == 1 and uttered[0].metadata.get("utter_action") == "utter_greet" and uttered[0].text


@pytest.mark.parametrize("behaviour, error", [("reject", ActionExecutionRejection), ("fail", RasaException)])
async def test_rejection_and_errors_mean_what_the_action_servers_400_and_500_mean(fake_action, behaviour, error):
    fake_action(behaviour)
    tracker = _tracker(*MESSAGES[0])
    with pytest.raises(error):
        await _run("action_validate_slot_mappings", "http://127.0.0.1:1/webhook", tracker)
    if behaviour == "fail":  # Rasa's slot extraction goes on without the validation, as with a 500
        extracted = await ActionExtractSlots(EndpointConfig("http://127.0.0.1:1/webhook")).run(
            CollectingOutputChannel(), TemplatedNaturalLanguageGenerator(DOMAIN.responses), tracker, DOMAIN)
        assert extracted == []


def test_rasa_run_loads_the_in_process_actions_before_it_serves(monkeypatch):
    """bot.assistant.rasa_server's start-up listener builds the executor and loads the parser's tables, so they are
    frozen with the start-up objects and the first customer does not wait for them."""
    import gc

    from bot.assistant import rasa_server

    monkeypatch.setattr(in_process_actions, "_executor", None)
    later: List[Any] = []

    class Loop:
        def call_later(self, delay, callback):
            later.append((delay, callback))

    try:
        rasa_server._settle_memory(None, Loop())
    finally:
        gc.unfreeze()
    assert in_process_actions._executor is not None
    assert set(in_process_actions._executor.actions) == set(in_process_actions.IN_PROCESS_ACTIONS)
    assert "bot.text.parse" in sys.modules and later and later[0][0] == rasa_server.TRIM_INTERVAL_S
