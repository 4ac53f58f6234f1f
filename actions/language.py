"""action_validate_slot_mappings: language, failed-turn counter and pending offer, after every message.

The NLU component bot.assistant.components.LanguageNormalizer puts ``detected_language`` into the parse data. Setting
the slot here (before any other action runs) is what makes that turn's responses come out in the right language:
a slot set inside an action does not affect the responses of that same action (notes §0.9).

``pending_offer`` says whether the bot's previous turn offered a person or a quote, so that a typed "yes" / "evet" /
"آره" (intent affirm) starts the handoff and a typed "no" is answered politely (rules in data/rules/offers.yml).
It is worked out here, from the bot messages of the previous turn, because this action already runs on every
message: no extra action-server call, and one place for every kind of offer (utterances of rules and of actions).

Issue 13 adds three jobs of this per-message action:
- **No value is lost.** A message the estimate form does not read (an FAQ, a greeting, thanks, a request for a
  person, a comparison ...) is still read by bot.text.parse, and its job values are kept in the slots. The form
  hands such turns to the rules explicitly (ValidateEstimateForm._left_to_rules) and, when it resumes, confirms
  what it noted.
- **The first language.** A first message without a language signal takes the channel's locale (metadata
  ``language_hint`` / ``locale``: widget browser language, Telegram ``language_code``), then Persian.
- **A language switch** ("Farsça anlatır mısın?", «میشه ترکی بگی؟») sets the language the customer asks for, not the
  one the request is written in; ``last_answer_key`` remembers what the previous turn answered, and
  action_repeat_last_answer (actions/repeat.py) says it again in the new language.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Text

from rasa_sdk import Tracker
from rasa_sdk.events import EventType, SlotSet
from rasa_sdk.executor import CollectingDispatcher
from rasa_sdk.forms import ValidationAction
from rasa_sdk.types import DomainDict

from actions.common import (DEFAULT_LANGUAGE, LANGUAGES, UNCERTAIN_INTENTS, conversation_language, latest_intent,
                            payload_entities, previous_turn_answer)

# Intents whose message the estimate form reads itself, or that carry no job values worth keeping; inside the
# estimate form a not-understood message is read by the form too (a hint and the question again).
FORM_READS = ("inform", "estimate", "dont_know", "affirm", "deny", "restart")
FORM_READS_IN_FORM = ("nlu_fallback",)
NOT_JOB_SLOTS = ("failed_turns", "requested_slot")
# Names of the two languages as customers write them in a request to switch ("Farsça", "ترکی", "in Turkish").
# The request is often written in the old language, so the language named wins over the language detected.
LANGUAGE_NAMES = {
    "fa": re.compile(r"(fars[cç]a|\bfars[iı]\b|farsiye|persian|iranca|فارسی|پارسی)", re.IGNORECASE),
    "tr": re.compile(r"(t[uü]rk[cç]e|turkish|\bturki\b|ترکی|ترکیه‌ای|ترکیه ای|استانبولی)", re.IGNORECASE),
}
# Metadata keys a channel puts its locale under: the widget's browser language, Telegram's language_code.
LOCALE_KEYS = ("language_hint", "locale", "language")


def requested_language(text: str, current: Optional[Text]) -> Optional[Text]:
    """The language a switch request names; both named ("Farsça değil Türkçe"): the one we are not speaking."""
    named = [lang for lang, pattern in LANGUAGE_NAMES.items() if pattern.search(text or "")]
    if len(named) == 2:
        named = [lang for lang in named if lang != current] or named
    return named[0] if len(named) == 1 else None


def channel_locale(tracker: Tracker) -> Optional[Text]:
    """ "tr" from metadata {"language_hint": "tr"} / {"locale": "tr-TR"} / Telegram's {"telegram": {...}}."""
    metadata = tracker.latest_message.get("metadata") or {}
    candidates = [metadata.get(key) for key in LOCALE_KEYS]
    nested = metadata.get("telegram") or metadata.get("customData") or {}
    if isinstance(nested, dict):
        candidates += [nested.get("language_code")] + [nested.get(key) for key in LOCALE_KEYS]
    for value in candidates:
        if isinstance(value, str) and value:
            base = value.replace("_", "-").split("-")[0].lower()
            if base in LANGUAGES:
                return base
    return None


def job_values_of_message(tracker: Tracker) -> Dict[Text, Any]:
    """Job values of a message the estimate form will not read itself (FAQ, chit-chat, handoff, comparison ...)."""
    from rasa_sdk.executor import CollectingDispatcher as Silent

    from actions.forms import ValidateEstimateForm, contract_values, earlier_user_texts, refuse_out_of_range

    text = tracker.latest_message.get("text") or ""
    intent = latest_intent(tracker)
    in_form = (tracker.active_loop or {}).get("name") == "estimate_form"
    if intent in FORM_READS or (in_form and intent in FORM_READS_IN_FORM) or not text.strip() \
            or text.startswith("/"):
        return {}
    # The form's own reader, with its notes (ambiguity, currency) left unsaid: the rule's answer comes first.
    updates = ValidateEstimateForm._from_text(Silent(), text, None, conversation_language(tracker),
                                              slots=tracker.slots, earlier=earlier_user_texts(tracker))
    updates.update(contract_values(text, {**tracker.slots, **updates}, updates, tracker.slots))
    # A value the estimator would refuse is not kept here either (issue 20, finding 6); the form asks again.
    updates = refuse_out_of_range(Silent(), updates, conversation_language(tracker))
    # Every slot the form's reader fills (model notes such as model_unrecognised included), not its bookkeeping.
    return {name: value for name, value in updates.items() if name not in NOT_JOB_SLOTS}


# Bot responses that end in a yes/no offer, and what a "yes" to them asks for (domain/responses_*.yml).
OFFERS: Dict[Text, Text] = {
    "utter_offer_human": "human",           # after two misunderstood turns (actions/fallback.py)
    "utter_bot_challenge": "human",         # "I am a bot ... I can connect you to a person"
    "utter_faq_missing": "human",           # "no ready answer; I can pass it on to support"
    "utter_offer_review_by_person": "human",  # model size outside the presets (actions/estimate.py)
    "utter_estimate_offer_quote": "quote",  # no single card fits (actions/estimate.py): quote or a person
    "utter_order_multi_gpu": "quote",       # "how do I order several GPUs?": the process, then this offer
    "utter_offer_ticket_without_contact": "no_contact",  # contact refused in the hand-over (actions/handoff.py)
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
    # (the request's domain["slots"], its slot list): rasa_sdk's ValidationAction works the list out again for each
    # slot it extracts, quadratic in the ~60 slots: 7 % of the action server's CPU in a profile under load (issue 12).
    _slot_list: Optional[tuple] = None

    def domain_slots(self, domain: DomainDict) -> List[Text]:
        slots = domain.get("slots", {})
        if self._slot_list is None or self._slot_list[0] is not slots:
            self._slot_list = (slots, super().domain_slots(domain))
        return self._slot_list[1]

    async def run(self, dispatcher: CollectingDispatcher, tracker: Tracker, domain: DomainDict) -> List[EventType]:
        events = await super().run(dispatcher, tracker, domain)
        # Values in a message the form does not read are kept all the same (issue 13: no value is ever lost).
        values = job_values_of_message(tracker)
        return events + [SlotSet(name, value) for name, value in values.items()
                         if value != tracker.get_slot(name)]

    async def extract_language(self, dispatcher: CollectingDispatcher, tracker: Tracker,
                               domain: DomainDict) -> Dict[Text, Any]:
        current = tracker.get_slot("language")
        detected = tracker.latest_message.get("detected_language")
        if latest_intent(tracker) == "switch_language":
            detected = requested_language(tracker.latest_message.get("text") or "", current) or detected
        if detected not in LANGUAGES:
            # Button payloads bypass NLU; the widget announces its page language as /set_language{"language":..}
            detected = payload_entities(tracker).get("language")
        if detected not in LANGUAGES and current not in LANGUAGES:
            # A first message without a signal ("7B QLoRA 4096", "hi"): the channel's locale, then Persian.
            detected = channel_locale(tracker) or DEFAULT_LANGUAGE
        # No signal ("7B QLoRA 4096", a payload, emoji) or English: keep the language we have.
        if detected in LANGUAGES and detected != current:
            return {"language": detected}
        return {}

    async def extract_last_answer_key(self, dispatcher: CollectingDispatcher, tracker: Tracker,
                                      domain: DomainDict) -> Dict[Text, Any]:
        if latest_intent(tracker) == "switch_language":
            return {}  # keep what is to be repeated, also over two switches in a row
        key = previous_turn_answer(tracker)
        return {"last_answer_key": key} if key and key != tracker.get_slot("last_answer_key") else {}

    def validate_last_answer_key(self, value: Any, dispatcher: CollectingDispatcher, tracker: Tracker,
                                 domain: DomainDict) -> Dict[Text, Any]:
        return {"last_answer_key": value}

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
