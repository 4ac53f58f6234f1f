"""Greetings, thanks and goodbyes answered in kind (actions/social.py, knowledge/social.yml)."""
from __future__ import annotations

import asyncio
from typing import Any, Dict, Optional

import pytest
from rasa_sdk import Tracker
from rasa_sdk.executor import CollectingDispatcher

from actions.social import ActionGoodbye, ActionGreet, ActionThank, returned
from bot.advisor.knowledge import load_knowledge

KB = load_knowledge()


def run(action, text: str, slots: Optional[Dict[str, Any]] = None):
    latest = {"text": text, "intent": {"name": "greet", "confidence": 0.9}, "entities": []}
    tracker = Tracker("t", dict(slots or {}), latest, [{"event": "user", "text": text, "parse_data": latest}], False,
                      None, {}, "action_listen")
    dispatcher = CollectingDispatcher()
    asyncio.run(action.run(dispatcher, tracker, {}))
    return dispatcher.messages


@pytest.mark.parametrize("text,lang,reply", [
    ("İyi günler, kolay gelsin", "tr", "Size de iyi günler!"),
    ("iyi aksamlar", "tr", "Size de iyi akşamlar!"),
    ("Selamün aleyküm", "tr", "Aleyküm selam!"),
    ("با سلام، وقتتون بخیر", "fa", "سلام، وقت شما هم بخیر!"),
    ("صبح بخیر", "fa", "سلام، صبح شما هم بخیر!"),
])
def test_greetings_are_returned_in_kind(text, lang, reply):
    assert returned("greetings", text, lang) == reply
    message = run(ActionGreet(), text, {"language": lang})[0]
    assert message["response"] == "utter_greet_in_kind" and message["greeting"] == reply


def test_a_plain_hello_gets_the_usual_greeting():
    assert run(ActionGreet(), "selam", {"language": "tr"})[0]["response"] == "utter_greet"
    assert returned("greetings", "سلام", "fa") is None


def test_thanks_depend_on_the_conversation():
    assert run(ActionThank(), "teşekkürler", {"language": "tr"})[0]["response"] == "utter_thank"
    after = run(ActionThank(), "teşekkürler", {"language": "tr", "estimate_summary": {"best_card": "a40"}})
    assert after[0]["text"] == KB.text("social_thanks_after_estimate", "tr")
    wish = run(ActionThank(), "Teşekkürler, iyi akşamlar", {"language": "tr"})
    assert wish[0]["text"] == KB.text("social_thanks_wish", "tr", wish="Size de iyi akşamlar!")


def test_goodbye_returns_the_wish():
    fa = run(ActionGoodbye(), "خدانگهدار، روز خوبی داشته باشید", {"language": "fa"})
    assert fa[0]["text"] == KB.text("social_goodbye_wish", "fa", wish="روز شما هم خوش!")
    assert run(ActionGoodbye(), "hoşça kalın", {"language": "tr"})[0]["response"] == "utter_goodbye"
