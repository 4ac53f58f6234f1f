"""action_answer_faq: any faq_<topic> intent, answered from knowledge/faq.yml in the user's language."""
from __future__ import annotations

from typing import Any, Dict, List, Text

from rasa_sdk import Action, Tracker
from rasa_sdk.executor import CollectingDispatcher

from actions.common import conversation_language, latest_intent

FAQ_PREFIX = "faq_"


def faq_answer(topic: Text, lang: Text) -> Text | None:
    from bot.advisor.knowledge import load_knowledge

    entry = load_knowledge().faq.get(topic)
    return getattr(entry, lang, None) if entry is not None else None


class ActionAnswerFaq(Action):
    def name(self) -> Text:
        return "action_answer_faq"

    async def run(self, dispatcher: CollectingDispatcher, tracker: Tracker,
                  domain: Dict[Text, Any]) -> List[Dict[Text, Any]]:
        intent = latest_intent(tracker) or ""
        answer = faq_answer(intent[len(FAQ_PREFIX):], conversation_language(tracker)) \
            if intent.startswith(FAQ_PREFIX) else None
        if answer:
            dispatcher.utter_message(text=answer)
        else:
            dispatcher.utter_message(response="utter_faq_missing")
        return []
