"""action_compare_options and action_own_card against real trackers: the latest message is read with
bot.text.parse, the job comes from the slots, the answer is the rendered text in the conversation's language."""
from __future__ import annotations

import asyncio
from typing import Any, Dict, Optional

from rasa_sdk import Tracker
from rasa_sdk.executor import CollectingDispatcher

from actions.compare import ActionCompareOptions
from actions.own_card import ActionOwnCard
from bot.advisor.knowledge import load_knowledge

KB = load_knowledge()
DOMAIN = {"slots": {"own_gpu": {}}}


def tracker(text: str, slots: Optional[Dict[str, Any]] = None) -> Tracker:
    latest = {"text": text, "intent": {"name": "compare_options", "confidence": 0.9}, "entities": []}
    events = [{"event": "action", "name": "action_listen"}, {"event": "user", "text": text, "parse_data": latest}]
    return Tracker("tester", dict(slots or {}), latest, events, False, None, {}, "action_listen")


def run(action, text: str, slots: Optional[Dict[str, Any]] = None):
    dispatcher = CollectingDispatcher()
    events = asyncio.run(action.run(dispatcher, tracker(text, slots), DOMAIN))
    return [m.get("text") for m in dispatcher.messages], events


JOB = {"language": "tr", "model_id": "llama-3.1-8b", "method": "qlora", "seq_len": 2048}


def test_compare_methods_for_the_current_job_in_turkish():
    texts, events = run(ActionCompareOptions(), "LoRA mı QLoRA mı daha ucuz?", JOB)
    assert len(texts) == 1 and "LoRA" in texts[0] and "QLoRA" in texts[0] and "dolar" in texts[0]
    assert events == []  # the conversation carries on; nothing is changed


def test_compare_gpus_in_persian():
    texts, _ = run(ActionCompareOptions(), "H100 یا A100 برای این کار؟", {**JOB, "language": "fa"})
    assert "H100" in texts[0] and "A100" in texts[0] and "دلار" in texts[0]


def test_compare_without_a_model_asks_for_it():
    texts, _ = run(ActionCompareOptions(), "LoRA mı QLoRA mı?", {"language": "tr"})
    assert texts == [KB.text("compare_needs_model", "tr")]


def test_a_message_without_two_options_gets_the_example_answer():
    texts, _ = run(ActionCompareOptions(), "hangisi daha iyi", JOB)
    assert texts == [KB.text("compare_not_understood", "tr")]


def test_own_card_with_the_job_and_remembered_slot():
    texts, events = run(ActionOwnCard(), "evde RTX 4090 var, sığar mı?", JOB)
    assert "RTX 4090" in texts[0] and "CloudRUX" in texts[0]
    assert {"event": "slot", "timestamp": None, "name": "own_gpu", "value": "rtx-4090"} in events


def test_own_card_unknown_card():
    texts, _ = run(ActionOwnCard(), "evde bir ekran kartım var", {"language": "tr"})
    assert texts == [KB.text("own_card_unknown", "tr")]
