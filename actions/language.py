"""action_validate_slot_mappings: language, failed-turn counter and pending offer, after every message.

The NLU component bot.assistant.components.LanguageNormalizer puts ``detected_language`` into the parse data. Setting the
slot here (before any other action runs) is what makes that turn's responses come out in the right language:
a slot set inside an action does not affect the responses of that same action (notes §0.9).

``pending_offer`` says whether the bot's previous turn offered a person or a quote, so that a typed "yes" / "evet" /
"آره" (intent affirm) starts the handoff and a typed "no" is answered politely (rules in data/rules/offers.yml).
It is worked out here, from the bot messages of the previous turn, because this action already runs on every
message: no extra action-server call, and one place for every kind of offer (utterances of rules and of actions).
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Text

from rasa_sdk import Tracker
from rasa_sdk.executor import CollectingDispatcher
from rasa_sdk.forms import ValidationAction
from rasa_sdk.types import DomainDict

from actions.common import LANGUAGES, UNCERTAIN_INTENTS, latest_intent, payload_entities

# Bot responses that end in a yes/no offer, and what a "yes" to them asks for (domain/responses_*.yml).
OFFERS: Dict[Text, Text] = {
    "utter_offer_human": "human",           # after two misunderstood turns (actions/fallback.py)
    "utter_bot_challenge": "human",         # "I am a bot ... I can connect you to a person"
    "utter_faq_missing": "human",           # "no ready answer; I can pass it on to support"
    "utter_offer_review_by_person": "human",  # model size outside the presets (actions/estimate.py)
    "utter_estimate_offer_quote": "quote",  # no single card fits (actions/estimate.py): quote or a person
}


def offer_of_previous_turn(tracker: Tracker) -> Optional[Text]:
    """The offer made by the bot between the previous user message and the latest one, if any."""
    events = list(tracker.events)
    # Skip the latest user message itself (and anything recorded after it in this turn).
    while events and events[-1].get("event") != "user":
        events.pop()
    if events:
        events.pop()
    offer = None
    for event in reversed(events):
        if event.get("event") == "user":
            break
        if event.get("event") == "bot":
            offer = offer or OFFERS.get((event.get("metadata") or {}).get("utter_action"))
        elif event.get("event") == "action" and event.get("name") in OFFERS:
            offer = offer or OFFERS[event["name"]]
    return offer


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

    async def extract_pending_offer(self, dispatcher: CollectingDispatcher, tracker: Tracker,
                                    domain: DomainDict) -> Dict[Text, Any]:
        offer = offer_of_previous_turn(tracker)
        return {"pending_offer": offer} if offer != tracker.get_slot("pending_offer") else {}

    def validate_language(self, value: Any, dispatcher: CollectingDispatcher, tracker: Tracker,
                          domain: DomainDict) -> Dict[Text, Any]:
        return {"language": value if value in LANGUAGES else None}

    def validate_failed_turns(self, value: Any, dispatcher: CollectingDispatcher, tracker: Tracker,
                              domain: DomainDict) -> Dict[Text, Any]:
        return {"failed_turns": value}

    def validate_pending_offer(self, value: Any, dispatcher: CollectingDispatcher, tracker: Tracker,
                               domain: DomainDict) -> Dict[Text, Any]:
        return {"pending_offer": value if value in set(OFFERS.values()) else None}
