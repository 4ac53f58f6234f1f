"""The patches to Rasa (bot/assistant/patches/) keep Rasa's behaviour where they claim to: each is compared with
Rasa's LIVE function it replaced (import_hooks.rasa_original hands back the function object Rasa shipped, checked to
be Rasa's own code), on the same inputs; the table in bot/assistant/patches/__init__.py lists every attribute
replaced; the off switch and the version guard leave Rasa as shipped; kept-alive action-server connections survive a
server that closes them idle.

The unit tests run Rasa's real RemoteAction.run against a small HTTP action server that answers with a chosen
JSON body; the end-to-end test starts `rasa run` with the trained model against such a server and reads its log.
"""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import uuid
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Iterator, List, Optional, Tuple

import jsonschema
import pytest

import bot.assistant  # noqa: F401  installs the patches, as in every Rasa process of the project
from bot.assistant import patches
from bot.assistant.patches import fast_validation
from bot.assistant.patches.import_hooks import rasa_original
from rasa.core.actions.action import RemoteAction
from rasa.core.channels.channel import CollectingOutputChannel
from rasa.core.nlg import TemplatedNaturalLanguageGenerator
from rasa.shared.core.domain import Domain
from rasa.shared.core.events import BotUttered, SlotSet
from rasa.shared.core.trackers import DialogueStateTracker
from rasa.utils.endpoints import EndpointConfig
from tests.conftest import post_json
from tests.servers import ROOT, ensure_model, start_rasa_server

VALID = {"events": [{"event": "slot", "timestamp": None, "name": "language", "value": "tr"},
                    {"event": "active_loop", "name": None}, {"event": "followup", "name": "utter_greet"}],
         "responses": [{"text": "Merhaba", "buttons": [{"title": "evet", "payload": "/affirm"}]}]}

MALFORMED = {
    "unknown event type": {"events": [{"event": "no_such_event"}]},
    "event without its type": {"events": [{"timestamp": 1.0, "name": "language"}]},
    "events not a list": {"events": "slot language=tr"},
    "timestamp not a number": {"events": [{"event": "slot", "name": "language", "value": "tr",
                                           "timestamp": "yesterday"}]},
    "response not an object": {"responses": ["Merhaba"]},
}


@contextmanager
def action_server_answering(body: Any, clients: Optional[List[Any]] = None,
                            requests: Optional[List[dict]] = None) -> Iterator[str]:
    """An HTTP/1.1 action server on a free port that answers every POST with `body` (JSON) and notes each
    request's client address in `clients` and its JSON in `requests`; yields its webhook URL."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 (http.server API)
            if clients is not None:
                clients.append(self.client_address)
            request = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if requests is not None:
                requests.append(json.loads(request))
            payload = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/webhook"
    finally:
        server.shutdown()
        server.server_close()


async def run_remote_action(body: Any) -> list:
    """Rasa's RemoteAction.run, unchanged except for the patched validation, against an action server."""
    domain = Domain.empty()
    with action_server_answering(body) as url:
        action = RemoteAction("action_under_test", EndpointConfig(url))
        return await action.run(CollectingOutputChannel(), TemplatedNaturalLanguageGenerator(domain.responses),
                                DialogueStateTracker("tester", slots=[]), domain)


@pytest.fixture
def remote_only(monkeypatch):
    """Every custom action goes to the (stub) action server, the validation actions too: the tests of what an HTTP
    call carries (bot/assistant/patches/in_process_actions.py runs the validation actions in Rasa and is tested in
    tests/test_in_process_actions.py)."""
    from bot.assistant.patches import in_process_actions

    monkeypatch.setattr(in_process_actions, "IN_PROCESS_ACTIONS", {})


def rasas(owner: Any, name: str) -> Any:
    """Rasa's own function that a patch replaced at owner.name, checked to be code from the installed rasa package."""
    import inspect
    from pathlib import Path

    import rasa

    function = rasa_original(owner, name)
    assert not any(attr.startswith("_advisor") or attr in (fast_validation.PATCH_MARKER,)
                   for attr in getattr(function, "__dict__", {})), (owner, name)
    source = Path(inspect.getsourcefile(function)).resolve()
    assert Path(rasa.__file__).resolve().parent in source.parents, source
    return function


def test_patch_is_installed_in_this_process():
    assert fast_validation.is_installed()
    assert getattr(RemoteAction._validate_action_result, fast_validation.PATCH_MARKER, False)


def test_importing_bot_assistant_before_rasa_patches_rasa_when_it_loads():
    """Rasa imports the project's classes after its action module; the Telegram CLI imports bot.assistant without
    Rasa. Both orders end with the patch in effect, and bot.assistant alone does not import Rasa."""
    script = ("import sys, bot.assistant\n"
              "from bot.assistant.patches import fast_validation as f\n"
              "assert 'rasa.core.actions.action' not in sys.modules\n"
              "import rasa.core.actions.action\n"
              "assert f.is_installed()\n"
              "print('installed')\n")
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "installed" in result.stdout


async def test_valid_action_response_passes():
    events = await run_remote_action(VALID)
    assert isinstance(events[0], BotUttered) and events[0].text == "Merhaba"
    assert SlotSet("language", "tr") in events


@pytest.mark.parametrize("body", MALFORMED.values(), ids=MALFORMED.keys())
async def test_malformed_action_response_is_rejected_with_rasas_error(body):
    """The same error `jsonschema.validate` gives (best match), with the sentence Rasa appends."""
    with pytest.raises(jsonschema.ValidationError) as expected:
        jsonschema.validate(body, RemoteAction.action_response_format_spec())
    with pytest.raises(jsonschema.ValidationError) as raised:
        await run_remote_action(body)
    assert raised.value.message.startswith(expected.value.message)
    assert "Failed to validate Action server response from API" in raised.value.message
    assert list(raised.value.absolute_path) == list(expected.value.absolute_path)
    with pytest.raises(jsonschema.ValidationError) as by_rasa:
        rasas(RemoteAction, "_validate_action_result")(RemoteAction("a", None), body)
    assert raised.value.message == by_rasa.value.message


def test_valid_responses_pass_as_rasas_own_check_passes_them():
    """fast_validation against Rasa's live _validate_action_result on every response of the corpus: the same
    verdict, and for a fault the same error message."""
    action = RemoteAction("action_under_test", None)
    live = rasas(RemoteAction, "_validate_action_result")
    corpus = _response_corpus()
    # Rasa's own check costs ~15 ms a call: every broken top level and malformed case, and a fixed sample of the
    # per-event cases (test_short_road_decides_like_the_full_validator covers them all against jsonschema).
    for response in corpus[:20] + corpus[20::12]:
        outcomes = []
        for check in (live, RemoteAction._validate_action_result):
            try:
                outcomes.append(check(action, response))
            except jsonschema.ValidationError as error:
                outcomes.append(error.message)
        assert outcomes[0] == outcomes[1], response


@pytest.mark.e2e
def test_running_rasa_server_validates_with_the_patch():
    """The Rasa server as the product starts it, with the trained model: a malformed action response is refused by
    the patched validation (its traceback in the log), while the user still gets an answer over REST."""
    ensure_model()
    with action_server_answering(MALFORMED["unknown event type"]) as url:
        rasa = start_rasa_server(0, endpoints={"action_endpoint": {"url": url}})
        try:
            status, replies = post_json(f"{rasa.url}/webhooks/rest/webhook",
                                        {"sender": f"fv-{uuid.uuid4().hex[:8]}", "message": "Merhaba"})
            log = rasa.log()
        finally:
            rasa.stop()
    assert status == 200 and isinstance(replies, list)
    # Rasa logs the refused response with its traceback: the check ran in the patched method.
    assert "Failed to validate Action server response from API" in log
    assert 'bot/assistant/patches/fast_validation.py", line' in log and "in _validate_action_result" in log


def test_event_classes_by_name_are_the_ones_rasa_finds():
    """patches.fast_events: the table gives the class Rasa's own search gives, for every event name, and
    unknown names still end in Rasa's fallbacks."""
    from rasa.shared.core import events
    from rasa.shared.utils.common import all_subclasses

    from bot.assistant.patches import fast_events

    assert fast_events.is_installed()
    names = {cls.type_name for cls in all_subclasses(events.Event)}
    assert {"user", "bot", "action", "slot", "active_loop", "session_started", "restart"} <= names
    live = rasas(events.Event, "resolve_by_type")
    for name in names:
        assert events.Event.resolve_by_type(name) is live(name)
    assert events.Event.resolve_by_type("topic") is None is live("topic")
    assert events.Event.resolve_by_type("no_such_event", events.BotUttered) is events.BotUttered
    with pytest.raises(ValueError):
        events.Event.resolve_by_type("no_such_event")
    assert events.deserialise_events([{"event": "slot", "name": "language", "value": "tr"}]) == [
        events.SlotSet("language", "tr")]


async def test_action_server_calls_reuse_one_connection():
    """patches.action_keepalive: three custom-action calls of one endpoint, one TCP connection."""
    from bot.assistant.patches import action_keepalive

    assert action_keepalive.is_installed()
    clients: List[Any] = []
    domain = Domain.empty()
    with action_server_answering(VALID, clients) as url:
        action = RemoteAction("action_under_test", EndpointConfig(url))
        for _ in range(3):
            events = await action.run(CollectingOutputChannel(), TemplatedNaturalLanguageGenerator(domain.responses),
                                      DialogueStateTracker("tester", slots=[]), domain)
            assert SlotSet("language", "tr") in events
    assert len(clients) == 3 and len(set(clients)) == 1


async def test_actions_get_the_domain_without_responses_unless_they_read_them(remote_only):
    """patches.action_payload: 76 of the domain's 80 KB are responses; only the replay action reads them."""
    from bot.assistant.patches import action_payload

    assert action_payload.is_installed()
    domain = Domain.load(str(ROOT / "domain"))
    requests: List[dict] = []
    with action_server_answering(VALID, requests=requests) as url:
        for name in ("validate_estimate_form", "action_repeat_last_answer", "action_estimate"):
            await RemoteAction(name, EndpointConfig(url)).run(
                CollectingOutputChannel(), TemplatedNaturalLanguageGenerator(domain.responses),
                DialogueStateTracker("tester", slots=domain.slots), domain)
    form, replay, estimate = (request["domain"] for request in requests)
    assert replay == domain.as_dict() and replay["responses"]
    for trimmed in (form, estimate):
        assert trimmed["responses"] == {}
        assert {key: value for key, value in trimmed.items() if key != "responses"} == {
            key: value for key, value in replay.items() if key != "responses"}
    # What rasa_sdk's form validation reads is there.
    assert form["forms"]["estimate_form"] and "language" in form["slots"]


def _conversation(domain: Domain, turns: int) -> DialogueStateTracker:
    """A tracker as the store loads it: checkpoint slots, then `turns` user turns with their actions and answers."""
    from rasa.shared.core.events import ActionExecuted, SessionStarted, UserUttered

    tracker = DialogueStateTracker("tester", slots=domain.slots)
    tracker.update_with_events([ActionExecuted("action_session_start"), SessionStarted(), SlotSet("language", "fa"),
                                SlotSet("model", "Qwen3 8B")], domain)
    for number in range(turns):
        tracker.update_with_events([
            ActionExecuted("action_listen"),
            UserUttered(f"پیام {number}", {"name": "inform", "confidence": 0.9}),
            SlotSet("last_answer_key", f"answer_{number}"),
            ActionExecuted("action_answer_faq"), BotUttered(f"جواب {number}", metadata={"utter_action": "utter_x"})],
            domain)
    return tracker


async def test_actions_get_the_previous_turn_and_the_one_in_progress_unless_they_read_further(remote_only):
    """patches.action_payload: every action gets all slots, the latest message and the events from the
    previous user turn on; the replay of the last answer gets every event held, the ticket the session's history."""
    from rasa.shared.core.trackers import EventVerbosity

    from bot.assistant.patches.action_payload import HELD_EVENT_READERS, recent_events

    domain = Domain.load(str(ROOT / "domain"))
    tracker = _conversation(domain, turns=4)
    requests: List[dict] = []
    with action_server_answering(VALID, requests=requests) as url:
        for name in ("action_validate_slot_mappings", "action_repeat_last_answer"):
            await RemoteAction(name, EndpointConfig(url)).run(
                CollectingOutputChannel(), TemplatedNaturalLanguageGenerator(domain.responses), tracker, domain)
    recent, held = (request["tracker"] for request in requests)
    everything = tracker.current_state(EventVerbosity.ALL)
    assert held == json.loads(json.dumps(everything))
    assert {key: value for key, value in recent.items() if key != "events"} == {
        key: value for key, value in held.items() if key != "events"}
    texts = [event.get("text") for event in recent["events"] if event["event"] in ("user", "bot")]
    assert texts == ["پیام 2", "جواب 2", "پیام 3", "جواب 3"]
    assert recent["events"] == held["events"][-10:]
    assert recent["slots"]["model"] == "Qwen3 8B" and recent["latest_message"]["text"] == "پیام 3"
    assert {"action_repeat_last_answer", "action_open_ticket"} <= HELD_EVENT_READERS
    # Fewer user turns than the window: every event; the window starts at the user message when no listen precedes.
    short = _conversation(domain, turns=1)
    assert recent_events(short.events) == list(short.events)
    no_listen = [event for event in tracker.events if getattr(event, "action_name", None) != "action_listen"]
    assert [getattr(e, "text", None) for e in recent_events(no_listen)][0] == "پیام 2"


def test_actions_that_look_back_read_no_further_than_the_previous_turn():
    """What the per-turn actions read from tracker.events: the helpers in actions/common.py and language.py look at
    the previous turn and the one in progress; those that walk further back are the listed readers' own code."""
    import re

    allowed = {"repeat.py", "handoff.py", "common.py", "language.py", "forms.py"}
    readers = sorted(path.name for path in (ROOT / "actions").glob("*.py")
                     if re.search(r"tracker\.events", path.read_text()))
    assert set(readers) <= allowed, "a new reader of tracker.events: does patches/action_payload.py send enough?"


async def test_slot_mapping_validation_is_asked_once_per_message_unless_slots_changed(remote_only):
    """patches.validation_once: the second action_extract_slots of a message (a form being activated) does
    not call the action server when the slots are as the first call left them; it does once a slot changed."""
    from rasa.core.actions.action import ActionExtractSlots
    from rasa.shared.core.events import ActiveLoop

    from bot.assistant.patches import validation_once

    assert validation_once.is_installed()
    domain = Domain.load(str(ROOT / "domain"))
    tracker = _conversation(domain, turns=2)
    nlg = TemplatedNaturalLanguageGenerator(domain.responses)
    requests: List[dict] = []
    with action_server_answering(VALID, requests=requests) as url:
        extract = ActionExtractSlots(EndpointConfig(url))
        first = await extract.run(CollectingOutputChannel(), nlg, tracker, domain)
        tracker.update_with_events(first, domain)
        assert len(requests) == 1 and SlotSet("language", "tr") in first
        tracker.update_with_events([ActiveLoop("estimate_form")], domain)  # the form activation's own run
        assert await extract.run(CollectingOutputChannel(), nlg, tracker, domain) == []
        assert len(requests) == 1
        tracker.update_with_events([SlotSet("failed_turns", 1.0)], domain)  # an action changed a slot in between
        await extract.run(CollectingOutputChannel(), nlg, tracker, domain)
        assert len(requests) == 2


async def test_slot_mapping_validation_answers_a_repeat_with_no_change():
    """What validation_once relies on: ValidateSlotMappings (actions/language.py) asked again about the same message,
    with its first answer applied, changes no slot, whether or not the estimate form has become active meanwhile."""
    from rasa_sdk import Tracker
    from rasa_sdk.executor import CollectingDispatcher

    from actions.language import ValidateSlotMappings
    from rasa.shared.core.events import ActiveLoop, ActionExecuted, UserUttered
    from rasa.shared.core.trackers import EventVerbosity

    domain = Domain.load(str(ROOT / "domain"))
    messages = [("سلام، میخوام qwen3 8b رو با qlora فاین تیون کنم", "estimate", "fa"),
                ("gpt-oss-20b'yi LoRA ile eğitsem hangi GPU yeter? bütçem 50 dolar", "estimate", "tr"),
                ("KVKK'ya uygun mu? modelim llama 3.1 8b", "faq_kvkk", "tr"),
                ("Farsça anlatır mısın?", "switch_language", "tr"),
                ("asdf qwe 4096", "nlu_fallback", None),
                ("/set_language{\"language\": \"tr\"}", "set_language", None)]
    answered: List[bool] = []
    for text, intent, language in messages:
        for form_in_between in (False, True):
            tracker = _conversation(domain, turns=2)
            parse = {"intent": {"name": intent, "confidence": 0.9}, "entities": [], "text": text}
            if language:
                parse["detected_language"] = language
            tracker.update_with_events([ActionExecuted("action_listen"),
                                        UserUttered(text, parse["intent"], parse_data=parse)], domain)

            async def ask() -> list:
                state = tracker.current_state(EventVerbosity.ALL)
                return await ValidateSlotMappings().run(CollectingDispatcher(), Tracker.from_dict(state),
                                                        domain.as_dict())

            first = await ask()
            answered.append(bool(first))
            tracker.update_with_events([SlotSet(e["name"], e["value"]) for e in first], domain)
            before = tracker.current_slot_values()
            if form_in_between:
                tracker.update_with_events([ActionExecuted("utter_estimate_intro"), ActiveLoop("estimate_form")],
                                           domain)
            again = await ask()
            assert {e["name"]: e["value"] for e in again if before.get(e["name"]) != e["value"]} == {}, (
                text, form_in_between)
    assert answered.count(True) >= 10, answered  # first answers that set something: not a vacuous check


def test_only_the_listed_actions_read_the_domain_responses():
    from bot.assistant.patches.action_payload import RESPONSE_READERS
    from actions.repeat import ActionRepeatLastAnswer

    readers = sorted(path.name for path in (ROOT / "actions").glob("*.py") if '"responses"' in path.read_text())
    assert readers == ["repeat.py"]
    assert RESPONSE_READERS == {ActionRepeatLastAnswer().name()}


def test_minimal_graph_schema_is_worked_out_once_and_equals_rasas():
    """patches.fast_model: the same sub-graph as Rasa's own walk, computed once per schema and targets; a deep
    copy (what training prunes in place) does not share the memo."""
    import copy

    from rasa.engine.graph import GraphSchema, SchemaNode

    from bot.assistant.patches import fast_model

    assert fast_model.is_installed()

    def node(**needs: str) -> SchemaNode:
        return SchemaNode(needs=needs, uses=object, constructor_name="create", fn="run", config={})

    schema = GraphSchema({"tokens": node(), "features": node(a="tokens"), "intent": node(a="features", b="tokens"),
                          "policy": node(a="intent"), "unused": node(a="tokens")})
    first = schema.minimal_graph_schema(["policy"])
    assert schema.minimal_graph_schema(["policy"]) is first
    assert set(first.nodes) == {"tokens", "features", "intent", "policy"}
    assert first == rasas(GraphSchema, "minimal_graph_schema")(schema, ["policy"])
    copied = copy.deepcopy(schema)
    copied.nodes["policy"].needs = {}
    assert set(copied.minimal_graph_schema(["policy"]).nodes) == {"policy"}


def test_classifier_weights_in_fortran_order_give_the_same_probabilities():
    """bot/assistant/intent_classifier.py: a loaded classifier scores with coef_ in Fortran order."""
    import numpy as np
    from scipy.sparse import random as sparse_random
    from sklearn.linear_model import LogisticRegression

    from bot.assistant.intent_classifier import weights_for_scoring

    rng = np.random.default_rng(7)
    X = sparse_random(60, 500, density=0.05, format="csr", random_state=7)
    y = rng.integers(0, 6, 60)
    model = LogisticRegression(max_iter=300).fit(X, y)
    message = sparse_random(1, 500, density=0.05, format="csr", random_state=8)
    expected = model.predict_proba(message)

    class Loaded:
        clf = model

    weights_for_scoring(Loaded())
    assert model.coef_.flags["F_CONTIGUOUS"] and model.coef_.T.flags["C_CONTIGUOUS"]
    assert np.array_equal(model.predict_proba(message), expected)


def _response_corpus() -> List[Any]:
    """Valid and broken action responses: every event type, each of its typed properties given a wrong type, and
    broken top levels."""
    schema = RemoteAction.action_response_format_spec()
    wrong = {"string": 5, "number": "five", "integer": 1.5, "object": [], "array": {}, "boolean": "yes", "null": 0}
    corpus: List[Any] = [VALID, {}, {"events": []}, {"responses": []}, [], "text", None, {"events": None},
                         {"events": [None]}, {"events": [["slot"]]}, {"events": [{"event": ["slot"]}]},
                         {"events": [{"event": None}]}, {"events": [{}]}, *MALFORMED.values()]
    for alternative in schema["properties"]["events"]["items"]["oneOf"]:
        name = alternative["properties"]["event"]["const"]
        corpus += [{"events": [{"event": name}]}, {"events": [{"event": name, "timestamp": "now"}]},
                   {"events": [{"event": name, "metadata": "x"}]}, {"events": [VALID["events"][0], {"event": name}]}]
        for key, rule in alternative["properties"].items():
            types = rule.get("type") if isinstance(rule, dict) else None
            for kind in ([types] if isinstance(types, str) else types or []):
                corpus.append({"events": [{"event": name, key: wrong[kind]}]})
    return corpus


def test_short_road_decides_like_the_full_validator():
    """fast_validation.EventTypeValidator accepts exactly what Rasa's schema accepts (errors come from the full one)."""
    from jsonschema.validators import validator_for

    from bot.assistant.patches.fast_validation import EventTypeValidator

    schema = RemoteAction.action_response_format_spec()
    full, short = validator_for(schema)(schema), EventTypeValidator.build(schema)
    assert short is not None
    corpus = _response_corpus()
    verdicts = [(short.is_valid(response), full.is_valid(response)) for response in corpus]
    assert all(fast == slow for fast, slow in verdicts), [r for r, v in zip(corpus, verdicts) if v[0] != v[1]]
    assert 20 < sum(slow for _, slow in verdicts) < len(corpus) - 50  # both kinds, many of each


def test_graph_runs_in_order_with_dask_results():
    """patches.fast_model.run_in_order gives dask.get's results for graphs shaped like Rasa's: node tasks whose
    arguments are other keys, input tuples with any value, a key nobody provides (passed on as its name), lists."""
    import dask

    from bot.assistant.patches.fast_model import run_in_order

    calls: List[str] = []

    def node(name: str):
        def run(*inputs: Any) -> Tuple[str, Any]:
            calls.append(name)
            return name, [item[1] if isinstance(item, tuple) else f"unresolved:{item}" for item in inputs]
        return run

    graph = {"message": ("message", {"text": "LoRA olursa?"}), "tokens": (node("tokens"), "message"),
             "features": (node("features"), "tokens", "message"), "intent": (node("intent"), "features", "missing"),
             "policy": (node("policy"), "intent", "tokens"), "both": (node("both"), ["intent", "policy"]),
             "unused": (node("unused"), "tokens")}
    for targets in (["policy"], ["intent", "policy"], ["both"], ["message"]):
        expected = dask.get(graph, targets)
        calls.clear()
        assert run_in_order(graph, targets) == expected
        assert "unused" not in calls and len(calls) == len(set(calls))  # each needed node once

    def failing(*_: Any) -> None:
        raise ValueError("component failed")

    with pytest.raises(ValueError, match="component failed"):
        run_in_order({"a": (failing,)}, ["a"])


def test_rule_lookup_stops_at_the_longest_rule_and_finds_rasas_keys():
    """patches.fast_rules: the rule keys that apply are the ones Rasa's full walk over the conversation finds,
    for random rule sets (1-4 states, slots that must or must not be set, loops, conversation starts) against
    random conversations up to 60 states, some ending with a rule's own states."""
    import random

    from bot.assistant.patches import fast_rules
    from rasa.core.policies.rule_policy import RulePolicy
    from rasa.shared.core.constants import SHOULD_NOT_BE_SET

    assert fast_rules.is_installed()
    original = RulePolicy.__dict__["_get_possible_keys"]
    assert getattr(original, fast_rules.PATCH_MARKER)
    rng = random.Random(10)
    intents, actions, slots = ["greet", "estimate", "faq", "goodbye"], ["action_listen", "utter_x", "form_a"], \
        ["language", "model", "budget"]

    def state(start: bool = False) -> dict:
        s: dict = {}
        if not start:
            s["prev_action"] = {"action_name": rng.choice(actions)}
        if rng.random() < 0.7:
            s["user"] = {"intent": rng.choice(intents)}
        if rng.random() < 0.5:
            s["slots"] = {rng.choice(slots): rng.choice([(1.0,), SHOULD_NOT_BE_SET])}
        if rng.random() < 0.3:
            s["active_loop"] = {"name": rng.choice(["form_a", SHOULD_NOT_BE_SET])}
        return s

    def conversation_state(s: dict) -> dict:  # what tracker states hold: values, never SHOULD_NOT_BE_SET
        out = {k: {kk: vv for kk, vv in v.items() if vv != SHOULD_NOT_BE_SET} for k, v in s.items()}
        return {k: v for k, v in out.items() if v}

    policy = RulePolicy.__new__(RulePolicy)  # the lookup methods use no model state
    live = rasas(RulePolicy, "_get_possible_keys")

    def rasa_walk(lookup: dict, states: list) -> set:
        return live(policy, lookup, states)

    found_some = 0
    for _ in range(300):
        rules = []
        for _ in range(rng.randint(5, 60)):
            n = rng.randint(1, 4)
            rules.append([state(start=(i == 0 and rng.random() < 0.2)) for i in range(n)])
        lookup = {json.dumps(r, sort_keys=True): "utter_x" for r in rules}
        length = rng.randint(1, 60)
        states = [conversation_state(state(start=(i == 0))) for i in range(length)]
        if rng.random() < 0.5:  # end with a rule's own states so that some rules apply
            tail = [conversation_state(s) for s in rng.choice(rules)]
            states = states[:max(0, length - len(tail))] + tail
        expected = rasa_walk(lookup, states)
        assert policy._get_possible_keys(lookup, states) == expected
        found_some += bool(expected)
    assert found_some > 30


def test_rasa_server_leaves_out_unused_modules_and_settles_memory():
    """bot.assistant.rasa_server: TensorFlow, Keras and scikit-learn load with TensorBoard, pytest, JAX and h5py
    marked absent (their try/except branches), without TF's TensorBoard warning; `rasa run`'s app gets the
    listener that freezes the startup objects and gives free memory back."""
    code = """
import logging, sys
from bot.assistant import rasa_server
rasa_server._without_unused_optional_modules()
records = []
logging.getLogger().addHandler(type("H", (logging.Handler,), {"emit": lambda self, r: records.append(r)})())
import tensorflow as tf, keras, sklearn.utils, skops.io  # noqa
rasa_server._patch_rasa_run()
from rasa.core import run
from sanic import Sanic
registered = []
register = Sanic.register_listener
Sanic.register_listener = lambda app, f, event: registered.append((f, event)) or register(app, f, event)
run.configure_app(enable_api=False)
assert (rasa_server._settle_memory, "after_server_start") in registered, registered
assert float(tf.reduce_sum(tf.constant([1.0, 2.0]))) == 3.0
assert not any("TensorBoard" in r.getMessage() for r in records), [r.getMessage() for r in records]
print(sorted(m for m in ("tensorboard", "pytest", "jax", "h5py") if sys.modules.get(m) is not None))
"""
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_slot_copies_are_what_copy_copy_makes_of_them():
    """patches.fast_copies: every slot of the domain copied by Slot.__copy__ is what the generic copy.copy
    (through __reduce_ex__) makes: the same class, equal attributes in a dict of its own."""
    import copy

    from bot.assistant.patches import fast_copies

    assert fast_copies.is_installed()
    domain = Domain.load(str(ROOT / "domain"))
    for slot in domain.slots:
        slot.value = {"model": "qwen3-8b"} if slot.type_name == "any" else slot.value
        fast = copy.copy(slot)
        generic = copy._reconstruct(slot, None, *slot.__reduce_ex__(4))
        assert type(fast) is type(slot) is type(generic) and fast is not slot
        assert fast.__dict__ == generic.__dict__ == slot.__dict__ and fast.__dict__ is not slot.__dict__
        fast.value = "changed"
        assert slot.value != "changed"
    tracker = DialogueStateTracker("tester", slots=domain.slots)
    tracker.update(SlotSet("language", "tr"))
    assert tracker.copy().get_slot("language") == "tr" and domain.slots[0] is not tracker.slots[domain.slots[0].name]


def test_debug_line_copies_are_made_only_when_debug_lines_are_written():
    import logging

    import rasa.core.policies.memoization as memoization
    import rasa.core.policies.rule_policy as rule_policy
    from bot.assistant.patches.fast_copies import DebugOnlyCopy

    assert isinstance(memoization.copy, DebugOnlyCopy) and isinstance(rule_policy.copy, DebugOnlyCopy)
    states = [{"user": {"intent": "greet"}}]
    rasa_logger = logging.getLogger("rasa")
    level = rasa_logger.level
    try:
        rasa_logger.setLevel(logging.INFO)
        assert memoization.copy.deepcopy(states) is states
        rasa_logger.setLevel(logging.DEBUG)
        copied = rule_policy.copy.deepcopy(states)
        assert copied == states and copied is not states and copied[0] is not states[0]
    finally:
        rasa_logger.setLevel(level)
    assert memoization.copy.copy is __import__("copy").copy  # everything else is the copy module's


def test_modules_with_debug_only_copies_use_copy_for_debug_lines_only():
    """The modules whose `copy` is replaced use it only as `copy.deepcopy(...)` inside `structlogger.debug(...)`
    (checked in the installed Rasa's source, so an upgrade that copies for real fails here)."""
    import ast
    import importlib

    from bot.assistant.patches.fast_copies import DEBUG_ONLY_MODULES, DebugOnlyCopy

    for name in DEBUG_ONLY_MODULES:
        module = importlib.import_module(name)
        assert isinstance(module.copy, DebugOnlyCopy), name
        tree = ast.parse(open(module.__file__.replace(".pyc", ".py"), encoding="utf-8").read())
        debug_calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
                       and isinstance(node.func, ast.Attribute) and node.func.attr == "debug"
                       and isinstance(node.func.value, ast.Name) and node.func.value.id == "structlogger"]
        inside = {id(inner) for call in debug_calls for inner in ast.walk(call)}
        uses = [node for node in ast.walk(tree) if isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name) and node.value.id == "copy"]
        assert uses, name
        for use in uses:
            assert use.attr == "deepcopy" and id(use) in inside, (name, use.lineno)


def test_action_call_json_reads_back_as_the_standard_librarys():
    """patches.action_keepalive.json_body: ujson's text, parsed, is the payload; NaN, infinities and
    non-string keys come out as the standard library writes them (what ujson refuses, it writes)."""
    from bot.assistant.patches.action_keepalive import json_body

    domain = Domain.load(str(ROOT / "domain"))
    tracker = DialogueStateTracker("tester", slots=domain.slots)
    tracker.update(SlotSet("model", "Qwen3 8B / «QLoRA» ile eğitim، ۲۰۴۸ توکن"))
    tracker.update(SlotSet("budget_usd", 1e-7))
    payload = {"next_action": "action_estimate", "tracker": tracker.current_state(), "domain": domain.as_dict()}
    assert json.loads(json_body(payload)) == json.loads(json.dumps(payload))
    odd = {"x": float("inf"), "y": float("nan"), 1: "a"}
    assert json_body(odd).replace(" ", "") == json.dumps(odd).replace(" ", "")
    # Letters as UTF-8, not \\u escapes; a lone surrogate (not UTF-8) escaped, so the body can be sent at all.
    assert "۲۰۴۸ توکن" in json_body(payload) and "eğitim" in json_body(payload)
    lone = {"text": "ab\ud800c"}
    assert json.loads(json_body(lone).encode("utf-8")) == lone


def test_slot_mappings_validation_lists_the_domain_slots_once_per_request():
    """actions/language.py: the slot list rasa_sdk works out for each extracted slot is worked out once per domain
    dict, and is rasa_sdk's own list."""
    from rasa_sdk.forms import ValidationAction

    from actions.language import ValidateSlotMappings

    domain = Domain.load(str(ROOT / "domain")).as_dict()
    action = ValidateSlotMappings()
    expected = ValidationAction.domain_slots(action, domain)
    assert action.domain_slots(domain) == expected and action.domain_slots(domain) is action.domain_slots(domain)
    other = {**domain, "slots": {name: value for name, value in domain["slots"].items() if name != "language"}}
    assert "language" in expected and "language" not in action.domain_slots(other)


def test_one_message_classifier_input_is_rasas_matrix():
    """bot/assistant/intent_classifier.py: the classifier's input for one message with sparse features from two
    featurizers (word and character counts, as config.yml) is what Rasa's LogisticRegressionClassifier._create_X
    builds (imported from rasa, no patch touches it): shape, dtype and values."""
    import numpy as np
    from rasa.nlu.classifiers.logistic_regression_classifier import LogisticRegressionClassifier
    from rasa.shared.nlu.constants import FEATURE_TYPE_SENTENCE, FEATURE_TYPE_SEQUENCE, TEXT
    from rasa.shared.nlu.training_data.features import Features
    from rasa.shared.nlu.training_data.message import Message
    from scipy.sparse import coo_matrix
    from scipy.sparse import random as sparse_random

    from bot.assistant.intent_classifier import AdvisorLogisticRegressionClassifier

    assert "_create_X" not in {name for (_, name) in __import__(
        "bot.assistant.patches.import_hooks", fromlist=["_ORIGINALS"])._ORIGINALS}
    mine = AdvisorLogisticRegressionClassifier.__new__(AdvisorLogisticRegressionClassifier)
    rasas_own = LogisticRegressionClassifier.__new__(LogisticRegressionClassifier)
    for seed in range(5):
        message = Message(data={TEXT: "Qwen3 8B QLoRA ile 4096 token"})
        for origin, width, dtype in (("words", 300, np.int64), ("chars", 900, np.float32)):
            counts = coo_matrix(sparse_random(1, width, density=0.05, random_state=seed).toarray().astype(dtype) * 3)
            message.add_features(Features(counts, FEATURE_TYPE_SENTENCE, TEXT, origin))
            message.add_features(Features(coo_matrix(np.ones((5, width), dtype=dtype)), FEATURE_TYPE_SEQUENCE, TEXT,
                                          origin))
        fast, expected = mine._create_X([message]), rasas_own._create_X([message])
        assert fast.shape == expected.shape and fast.dtype == expected.dtype and fast.format == expected.format
        assert (fast != expected).nnz == 0 and fast.nnz > 0
    two = [Message(data={TEXT: "a"}), Message(data={TEXT: "b"})]  # several messages: Rasa's own code
    for message in two:
        message.add_features(Features(coo_matrix(np.ones((1, 4))), FEATURE_TYPE_SENTENCE, TEXT, "words"))
    assert mine._create_X(two).shape == (2, 4)


# ------------------------------------------------------------------ the table, the off switch, the version guard

PATCHED_MODULES = sorted({entry.split(":")[0] for patch in patches.PATCHES for entry in patch.replaces})


def _replaced_attributes() -> set:
    """"module:attribute path" of every Rasa attribute import_hooks.replace recorded in this process."""
    import importlib

    from bot.assistant.patches import import_hooks

    for name in PATCHED_MODULES:
        importlib.import_module(name)
    found = set()
    for name in PATCHED_MODULES:
        module = importlib.import_module(name)
        owners = {"": module, **{attr: value for attr, value in vars(module).items() if isinstance(value, type)
                                 and value.__module__ == name}}
        for prefix, owner in owners.items():
            for (owner_id, attribute) in import_hooks._ORIGINALS:
                if owner_id == id(owner):
                    found.add(f"{name}:{prefix + '.' if prefix else ''}{attribute}")
    return found


def test_the_table_lists_every_attribute_replaced_and_every_patch_module():
    from pathlib import Path

    listed = {entry for patch in patches.PATCHES for entry in patch.replaces}
    assert patches.INSTALLED
    assert _replaced_attributes() == listed
    modules = {path.stem for path in Path(patches.__file__).parent.glob("*.py")}
    modules -= {"__init__", "__main__", "import_hooks"}
    assert modules == {patch.module for patch in patches.PATCHES}
    table = patches.table()
    for patch in patches.PATCHES:  # and the printed table has a row for each, with a reason and a gain
        assert f"\n| {patch.module} | " in table and patch.why and patch.gain, patch.module


def _fresh_interpreters(*runs: Tuple[str, Dict[str, str]]) -> List[Tuple[int, str, str]]:
    """(returncode, stdout, stderr) of `python -c code` with env added, for each (code, env), run side by side."""
    import os

    started = [subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env={**os.environ, **env}) for code, env in runs]
    outputs = [proc.communicate(timeout=180) for proc in started]
    return [(proc.returncode, out, err) for proc, (out, err) in zip(started, outputs)]


CHECK_AS_SHIPPED = """
import importlib, json, os, sys
import rasa
RASA_DIR = os.path.dirname(rasa.__file__) + os.sep
import bot.assistant
from bot.assistant import patches
from bot.assistant.patches import import_hooks
modules = sorted({e.split(":")[0] for p in patches.PATCHES for e in p.replaces})
for name in modules:
    importlib.import_module(name)
foreign = []
for p in patches.PATCHES:
    for entry in p.replaces:
        module, path = entry.split(":")
        owner = sys.modules[module]
        *outer, last = path.split(".")
        for part in outer:
            owner = getattr(owner, part)
        value = vars(owner).get(last)
        if isinstance(value, type(sys)):  # a module Rasa imported (copy, dask): the real one
            shipped = value is sys.modules[last]
        else:  # a function of Rasa's (its code in Rasa's files: a wrapper keeps __module__), or nothing (Slot has
            code = getattr(getattr(value, "__func__", value), "__code__", None)  # no __copy__ of its own in Rasa)
            shipped = value is None or (code is not None and code.co_filename.startswith(RASA_DIR))
        if not shipped:
            foreign.append(entry)
hooks = [type(f).__name__ for f in sys.meta_path if type(f).__module__.startswith("bot.")]
print(json.dumps({"installed": patches.INSTALLED, "active": list(patches.ACTIVE),
                  "originals": len(import_hooks._ORIGINALS), "foreign": foreign, "hooks": hooks}))
"""


def test_switched_off_or_on_another_rasa_version_rasa_runs_exactly_as_shipped():
    """ADVISOR_RASA_PATCHES=off, and (switched on) a Rasa version other than RASA_VERSION: no import hook, nothing
    replaced, every listed attribute Rasa's own (or absent, as Slot.__copy__ is in Rasa); the other version gets a
    warning. The same check in this process, where the patches are on, finds every listed attribute replaced."""
    other_version = ("import importlib.metadata as metadata\n"
                     "real = metadata.version\n"
                     "metadata.version = lambda name: '3.6.20' if name == 'rasa' else real(name)\n")
    off, other = _fresh_interpreters((CHECK_AS_SHIPPED, {"ADVISOR_RASA_PATCHES": "off"}),
                                     (other_version + CHECK_AS_SHIPPED, {"ADVISOR_RASA_PATCHES": "on"}))
    as_shipped = {"installed": False, "active": [], "originals": 0, "foreign": [], "hooks": []}
    for returncode, out, err in (off, other):
        assert returncode == 0, err[-2000:]
        assert json.loads(out.strip().splitlines()[-1]) == as_shipped, err[-2000:]
    assert "Rasa 3.6.20 is installed" in other[2] and patches.RASA_VERSION in other[2]
    assert "Rasa 3.6.20" not in off[2]

    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()) as printed:
        exec(CHECK_AS_SHIPPED, {})
    listed = {entry for patch in patches.PATCHES for entry in patch.replaces}
    assert set(json.loads(printed.getvalue())["foreign"]) == listed


def test_switch_selects_all_none_or_all_but_the_named_patches():
    every = tuple(patch.module for patch in patches.PATCHES)
    for value in ("on", " ON ", "", "1", "yes"):
        assert patches.selected(value) == every, value
    for value in ("off", "Off", "0", "false", "no"):
        assert patches.selected(value) == (), value
    assert patches.selected("-fast_events, -payload_depth,") == tuple(
        name for name in every if name not in ("fast_events", "payload_depth"))
    assert patches.selected(",".join(f"-{name}" for name in every)) == ()


@pytest.mark.parametrize("value, named", [
    ("-fast_rules,-no_such_patch", "unknown patch 'no_such_patch'"),
    ("fast_rules", "'fast_rules' is not -name"),
    ("-fast_rules,fast_copies", "'fast_copies' is not -name"),
    ("-", "unknown patch ''"),
    (",", "expected on, off or"),
    ("maybe", "'maybe' is not -name"),
])
def test_switch_with_an_unknown_name_or_form_is_refused_naming_the_patches(value, named):
    with pytest.raises(patches.PatchSwitchError) as refused:
        patches.selected(value)
    message = str(refused.value)
    assert named in message and patches.SWITCH in message
    assert all(patch.module in message for patch in patches.PATCHES)


def test_patches_left_out_by_the_switch_leave_rasas_own_attributes():
    """ADVISOR_RASA_PATCHES=-a,-b in a fresh interpreter: exactly the attributes of the other patches are replaced,
    those of a and b are Rasa's live ones (RemoteAction.run, which two patches replace, is Rasa's only when both are
    left out); an unknown name stops the import of bot.assistant with an error naming it."""
    left_out_runs = [("fast_rules", "fast_copies"), ("in_process_actions", "action_timeout"), ("in_process_actions",)]
    runs = [(CHECK_AS_SHIPPED, {"ADVISOR_RASA_PATCHES": ",".join(f"-{name}" for name in names)})
            for names in left_out_runs]
    runs.append(("import bot.assistant", {"ADVISOR_RASA_PATCHES": "-fast_rules,-fast_rulez"}))
    *left_out, unknown = _fresh_interpreters(*runs)
    for names, (returncode, out, err) in zip(left_out_runs, left_out):
        assert returncode == 0, err[-2000:]
        found = json.loads(out.strip().splitlines()[-1])
        kept = [patch for patch in patches.PATCHES if patch.module not in names]
        replaced = {entry for patch in kept for entry in patch.replaces}
        assert found["installed"] and found["active"] == [patch.module for patch in kept], names
        assert set(found["foreign"]) == replaced and found["originals"] == len(replaced), names
        assert "_AfterImport" in found["hooks"], names
        assert all(name in err for name in names), err[-2000:]  # the log says which are left out
    assert "rasa.core.actions.action:RemoteAction.run" not in json.loads(left_out[1][1].splitlines()[-1])["foreign"]
    returncode, out, err = unknown
    assert returncode != 0
    assert "PatchSwitchError" in err and "unknown patch 'fast_rulez'" in err, err[-2000:]


async def test_validation_actions_go_to_the_action_server_when_in_process_is_left_out(monkeypatch):
    """in_process_actions left out (its flag off, as in a process where it was never installed): action_timeout
    sends the validation actions to the action server, with its timeout, instead of running them here."""
    from bot.assistant.patches import in_process_actions

    assert in_process_actions.runs_in_process("validate_estimate_form")
    monkeypatch.setattr(in_process_actions, "_installed", False)
    assert not in_process_actions.runs_in_process("validate_estimate_form")
    requests: List[dict] = []
    domain = Domain.empty()
    with action_server_answering(VALID, requests=requests) as url:
        action = RemoteAction("validate_estimate_form", EndpointConfig(url))
        events = await action.run(CollectingOutputChannel(), TemplatedNaturalLanguageGenerator(domain.responses),
                                  DialogueStateTracker("tester", slots=[]), domain)
    assert SlotSet("language", "tr") in events
    assert [request["next_action"] for request in requests] == ["validate_estimate_form"]


# ------------------------------------------------------------------ kept-alive connections closed by the server

@contextmanager
def server_closing_idle_connections(idle_s: float, connections: List[Any]) -> Iterator[str]:
    """An HTTP/1.1 action server that answers VALID and closes a kept-alive connection idle for `idle_s` (as a
    server or proxy with a short keep-alive timeout does); notes each new connection in `connections`."""
    import socket

    payload = json.dumps(VALID).encode()
    listener = socket.create_server(("127.0.0.1", 0))

    def serve_connection(connection: socket.socket) -> None:
        connection.settimeout(idle_s)
        pending = b""
        try:
            while True:
                while b"\r\n\r\n" not in pending:
                    data = connection.recv(65536)
                    if not data:
                        return
                    pending += data
                head, pending = pending.split(b"\r\n\r\n", 1)
                length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length:"))
                while len(pending) < length:
                    pending += connection.recv(65536)
                pending = pending[length:]
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                   b"Content-Length: %d\r\n\r\n" % len(payload) + payload)
        except (socket.timeout, OSError):
            pass  # idle too long: closed, as the server's keep-alive timeout does
        finally:
            connection.close()

    def accept() -> None:
        while True:
            try:
                connection, address = listener.accept()
            except OSError:
                return
            connections.append(address)
            threading.Thread(target=serve_connection, args=(connection,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/webhook"
    finally:
        listener.close()


@pytest.mark.parametrize("loop_busy", [False, True], ids=["loop idle", "loop busy with a turn"])
async def test_kept_alive_connection_closed_idle_by_the_server_the_next_call_succeeds(loop_busy, remote_only):
    """patches.action_keepalive: the server closes the kept-alive connection after 0.2 s idle (below
    KEEPALIVE_S); the next action call still succeeds, whether Rasa's event loop saw the close (idle loop) or not
    (the loop busy with a turn's CPU work when the close arrived: the connection looks alive in the pool)."""
    import time

    from bot.assistant.patches import action_keepalive

    assert action_keepalive.is_installed() and action_keepalive.KEEPALIVE_S > 0.6
    domain = Domain.empty()
    connections: List[Any] = []
    with server_closing_idle_connections(0.2, connections) as url:
        action = RemoteAction("action_under_test", EndpointConfig(url))

        async def call() -> list:
            return await action.run(CollectingOutputChannel(), TemplatedNaturalLanguageGenerator(domain.responses),
                                    DialogueStateTracker("tester", slots=[]), domain)

        assert SlotSet("language", "tr") in await call()
        assert SlotSet("language", "tr") in await call()  # at once: the same connection
        assert len(connections) == 1
        if loop_busy:
            time.sleep(0.6)  # noqa: ASYNC251 - the point: the loop does not run while the server closes
        else:
            await asyncio.sleep(0.6)
        assert SlotSet("language", "tr") in await call()
    assert len(connections) == 2


async def test_action_call_carries_what_rasas_call_format_carries_but_the_older_events(remote_only):
    """patches.action_payload against Rasa's live _action_call_format: the same call but for the
    events (the latest of Rasa's list) and the domain's responses."""
    from bot.assistant.patches.action_payload import _recent_call_format

    domain = Domain.load(str(ROOT / "domain"))
    tracker = _conversation(domain, turns=4)
    action = RemoteAction("action_estimate", EndpointConfig("http://127.0.0.1:9/webhook"))
    expected = rasas(RemoteAction, "_action_call_format")(action, tracker, domain)
    mine = _recent_call_format(action, tracker, domain)
    assert {k: v for k, v in mine.items() if k != "tracker"} == {k: v for k, v in expected.items() if k != "tracker"}
    events = mine["tracker"].pop("events")
    everything = expected["tracker"].pop("events")
    assert mine["tracker"] == expected["tracker"]
    assert 0 < len(events) < len(everything) and everything[-len(events):] == events
