"""action_validate_slot_mappings: the conversation language and the failed-turn counter, after every message.

The NLU component bot.components.LanguageNormalizer puts ``detected_language`` into the parse data. Setting the
slot here (before any other action runs) is what makes that turn's responses come out in the right language:
a slot set inside an action does not affect the responses of that same action (notes §0.9).
"""
from __future__ import annotations

from typing import Any, Dict, Text

from rasa_sdk import Tracker
from rasa_sdk.executor import CollectingDispatcher
from rasa_sdk.forms import ValidationAction
from rasa_sdk.types import DomainDict

from actions.common import LANGUAGES, UNCERTAIN_INTENTS, latest_intent, payload_entities


class ValidateSlotMappings(ValidationAction):
    async def extract_language(self, dispatcher: CollectingDispatcher, tracker: Tracker,
                               domain: DomainDict) -> Dict[Text, Any]:
        detected = tracker.latest_message.get("detected_language")
        if detected not in LANGUAGES:
            # Button payloads bypass NLU; the widget announces its page language as /set_language{"language":..}
            detected = payload_entities(tracker).get("language")
        # No signal ("7B QLoRA 4096", a payload, emoji) or English: keep the language we have.
        if detected in LANGUAGES and detected != tracker.get_slot("language"):
            return {"language": detected}
        return {}

    async def extract_failed_turns(self, dispatcher: CollectingDispatcher, tracker: Tracker,
                                   domain: DomainDict) -> Dict[Text, Any]:
        # A clearly understood intent ends a run of failed turns; the form and the fallback count the rest.
        if latest_intent(tracker) not in UNCERTAIN_INTENTS and (tracker.get_slot("failed_turns") or 0):
            return {"failed_turns": 0.0}
        return {}

    def validate_language(self, value: Any, dispatcher: CollectingDispatcher, tracker: Tracker,
                          domain: DomainDict) -> Dict[Text, Any]:
        return {"language": value if value in LANGUAGES else None}

    def validate_failed_turns(self, value: Any, dispatcher: CollectingDispatcher, tracker: Tracker,
                              domain: DomainDict) -> Dict[Text, Any]:
        return {"failed_turns": value}
