"""Greetings, thanks and goodbyes answered in kind (issue 14 #6; native reviews fa §2.5/§2.7, tr §2.7):

* action_greet returns the customer's own greeting ("İyi günler" -> "Size de iyi günler!", «وقت بخیر» ->
  «سلام، وقت شما هم بخیر!») before the introduction; a plain hello gets utter_greet;
* action_thank answers a thank-you after an estimate with an offer to recalculate, otherwise briefly, and returns a
  wish that came with it ("Teşekkürler, iyi akşamlar" -> "Rica ederim! Size de iyi akşamlar! ...");
* action_goodbye returns the customer's wish ("روز خوبی داشته باشید" -> «روز شما هم خوش!»).
The phrases are data: knowledge/social.yml.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Text

from rasa_sdk import Action, Tracker
from rasa_sdk.executor import CollectingDispatcher

from actions.common import conversation_language
from bot.knowledge import read_yaml, validate
from bot.knowledge.schemas import SocialFile

SOCIAL_FILE = Path(__file__).resolve().parents[1] / "knowledge" / "social.yml"


@lru_cache(maxsize=1)
def _table() -> Dict[str, Dict[str, List[dict]]]:
    data = read_yaml(SOCIAL_FILE)
    validate(SocialFile, data, SOCIAL_FILE)  # fa and tr entries, each with what is said and the reply
    return data


def _normal(text: str) -> str:
    from bot.text.normalize import normalize

    words = re.sub(r"[^\w\s]", " ", normalize(text or "").lower().replace("\u200c", " ")).split()
    return " " + " ".join(words) + " "


def returned(kind: str, text: str, lang: str) -> Optional[str]:
    """The reply to the first greeting/wish of ``kind`` found in ``text`` as whole words, or None."""
    message = _normal(text)
    for entry in _table()[kind].get(lang, []):
        for phrase in entry["says"]:
            if _normal(phrase) in message:
                return entry["reply"]
    return None


def _text(tracker: Tracker) -> str:
    return tracker.latest_message.get("text") or ""


class ActionGreet(Action):
    def name(self) -> Text:
        return "action_greet"

    async def run(self, dispatcher: CollectingDispatcher, tracker: Tracker,
                  domain: Dict[Text, Any]) -> List[Dict[Text, Any]]:
        greeting = returned("greetings", _text(tracker), conversation_language(tracker))
        if greeting:
            dispatcher.utter_message(response="utter_greet_in_kind", greeting=greeting)
        else:
            dispatcher.utter_message(response="utter_greet")
        return []


class ActionThank(Action):
    def name(self) -> Text:
        return "action_thank"

    async def run(self, dispatcher: CollectingDispatcher, tracker: Tracker,
                  domain: Dict[Text, Any]) -> List[Dict[Text, Any]]:
        from bot.advisor.knowledge import load_knowledge

        lang = conversation_language(tracker)
        wish = returned("wishes", _text(tracker), lang)
        if wish:
            dispatcher.utter_message(text=load_knowledge().text("social_thanks_wish", lang, wish=wish))
        elif tracker.get_slot("estimate_summary"):
            dispatcher.utter_message(text=load_knowledge().text("social_thanks_after_estimate", lang))
        else:
            dispatcher.utter_message(response="utter_thank")
        return []


class ActionGoodbye(Action):
    def name(self) -> Text:
        return "action_goodbye"

    async def run(self, dispatcher: CollectingDispatcher, tracker: Tracker,
                  domain: Dict[Text, Any]) -> List[Dict[Text, Any]]:
        from bot.advisor.knowledge import load_knowledge
        from bot.text.topics import names_topic

        if tracker.get_slot("ticket_id") and names_topic(_text(tracker), "availability"):
            # "ben Deniz, yarın 10'dan sonra müsaitim" after the ticket reads like "see you tomorrow": it is for the
            # staff, so it goes onto the open ticket (round 9).
            from actions.fallback import to_the_open_ticket

            added = await to_the_open_ticket(dispatcher, tracker)
            if added is not None:
                return added
        lang = conversation_language(tracker)
        wish = returned("wishes", _text(tracker), lang)
        if wish:
            dispatcher.utter_message(text=load_knowledge().text("social_goodbye_wish", lang, wish=wish))
        else:
            dispatcher.utter_message(response="utter_goodbye")
        return []
