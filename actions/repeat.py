"""action_repeat_last_answer: a request to switch language says the previous answer again, in the new language.

"Can you explain that in Persian?" used to get the FAQ about supported languages. The language slot is already set
to the language asked for by action_validate_slot_mappings (actions/language.py, requested_language) when this
action runs, so every response and every re-run answer below comes out in the new language.

The previous answer is replayed from the tracker, not stored as text: responses (utter_*) are sent again by name,
answering actions (FAQ, estimate, comparison, own card) are run again on the message they answered. A question the
active form will ask anyway right after is not replayed.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Text

from rasa_sdk import Action, Tracker
from rasa_sdk.executor import CollectingDispatcher

from actions.common import ANSWER_ACTIONS, SILENT_ACTIONS, event_intent, user_turns

SWITCH_INTENT = "switch_language"
# Placeholders a response fills from its action's arguments, not from slots ({number}, {model_query}).
_PLACEHOLDER = re.compile(r"(?<!\{)\{([a-z_]+)\}(?!\})")


def _action_class(name: Text) -> Optional[type]:
    """The Action subclass registered under ``name`` (the actions package is already imported by the server)."""
    import importlib

    for module in ("actions.faq", "actions.estimate", "actions.compare", "actions.own_card", "actions.social"):
        try:
            importlib.import_module(module)
        except ImportError:
            continue
    pending = list(Action.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        try:
            if cls().name() == name:
                return cls
        except Exception:  # abstract helpers without a name
            continue
    return None


def _needs_arguments(response: Text, domain: Dict[Text, Any], slots: Dict[Text, Any]) -> bool:
    for variant in (domain.get("responses") or {}).get(response, []):
        if any(name not in slots for name in _PLACEHOLDER.findall(variant.get("text") or "")):
            return True
    return False


class ActionRepeatLastAnswer(Action):
    def name(self) -> Text:
        return "action_repeat_last_answer"

    async def run(self, dispatcher: CollectingDispatcher, tracker: Tracker,
                  domain: Dict[Text, Any]) -> List[Dict[Text, Any]]:
        turns = user_turns(list(tracker.events))[:-1]  # the latest turn is this request itself
        for user_event, followers in reversed(turns):
            if event_intent(user_event) == SWITCH_INTENT:
                continue
            replay = CollectingDispatcher()
            await self._replay(replay, tracker, domain, user_event, followers)
            if replay.messages:
                dispatcher.utter_message(response="utter_language_switched")
                dispatcher.messages.extend(replay.messages)
                return []
        if (tracker.active_loop or {}).get("name") == "estimate_form":
            # Mid-form, the previous answer was the form's own question: say what is noted, in the new language;
            # the form asks its question right after.
            from actions.common import conversation_language
            from actions.dialogue_text import noted_message

            dispatcher.utter_message(response="utter_language_switched_form")
            noted = noted_message(tracker.slots, conversation_language(tracker))
            if noted:
                dispatcher.utter_message(text=noted)
            return []
        dispatcher.utter_message(response="utter_language_switched_empty")
        return []

    @staticmethod
    async def _replay(dispatcher: CollectingDispatcher, tracker: Tracker, domain: Dict[Text, Any],
                      user_event: Dict[Text, Any], followers: List[Dict[Text, Any]]) -> None:
        form_active = bool((tracker.active_loop or {}).get("name"))
        current: Optional[Text] = None
        rerun: set = set()
        for event in followers:
            if event.get("event") == "action":
                current = event.get("name")
                if current in ANSWER_ACTIONS and current not in rerun:
                    rerun.add(current)
                    await ActionRepeatLastAnswer._rerun(dispatcher, tracker, domain, current, user_event)
            elif event.get("event") == "bot" and current not in ANSWER_ACTIONS and current not in SILENT_ACTIONS:
                response = (event.get("metadata") or {}).get("utter_action")
                if not response or (form_active and response.startswith("utter_ask_")):
                    continue  # a text built by an action, or the question the resumed form asks again anyway
                if not _needs_arguments(response, domain, tracker.slots):
                    dispatcher.utter_message(response=response)

    @staticmethod
    async def _rerun(dispatcher: CollectingDispatcher, tracker: Tracker, domain: Dict[Text, Any], name: Text,
                     user_event: Dict[Text, Any]) -> None:
        cls = _action_class(name)
        if cls is None:
            return
        earlier = tracker.copy()
        # The answering action reads the message it answered (its FAQ intent, the options it compares).
        earlier.latest_message = {**(user_event.get("parse_data") or {}), "text": user_event.get("text")}
        await cls().run(dispatcher, earlier, domain)
