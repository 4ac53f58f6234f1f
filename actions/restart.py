"""action_restart: "start over" (Rasa's /restart, or the restart intent) clears every value but keeps the language.

Rasa's own action_restart wipes the language slot too, so the next message without a language signal ("7B QLoRA")
would be answered in the default language. This one says so in the user's language (utter_restart), restarts the
conversation (all slots, the active form, the estimate) and sets the language again.
"""
from __future__ import annotations

from typing import Any, Dict, List, Text

from rasa_sdk import Action, Tracker
from rasa_sdk.events import EventType, Restarted, SlotSet
from rasa_sdk.executor import CollectingDispatcher

from actions.common import conversation_language


class ActionRestart(Action):
    def name(self) -> Text:
        return "action_restart"

    async def run(self, dispatcher: CollectingDispatcher, tracker: Tracker,
                  domain: Dict[Text, Any]) -> List[EventType]:
        dispatcher.utter_message(response="utter_restart")
        return [Restarted(), SlotSet("language", conversation_language(tracker))]
