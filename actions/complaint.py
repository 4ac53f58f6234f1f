"""A complaint (issue 21; found by blind set 5): the apology, or, when training is slow on a card the customer names,
the card, what usually slows a run and the offer to estimate the expected hours; the hand-over form follows by rule
(data/rules/dialogue.yml)."""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Dict, List, Optional, Pattern, Text

from rasa_sdk import Action, Tracker
from rasa_sdk.executor import CollectingDispatcher

from actions.common import conversation_language
from actions.dialogue_text import text


@lru_cache(maxsize=4)
def _words(key: Text, lang: Text) -> Pattern[str]:
    words = [_matching_form(word) for word in text(key, lang).split(",") if word.strip()]
    alternatives = "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alternatives})")


def _matching_form(phrase: Text) -> Text:
    """fold() with the zero-width non-joiner dropped first, so that a prefixed verb stays one word (می‌کند, "does",
    must not read as کند, "slow")."""
    from bot.text.normalize import fold

    return fold(phrase.replace("\u200c", "")).strip()


def says_slow(message: Text) -> bool:
    """The complaint is about a run being slow or not finishing (knowledge/dialogue.yml complaint_slow_words)."""
    return _says("complaint_slow_words", message)


def says_out_of_memory(message: Text) -> bool:
    """The complaint is about running out of GPU memory (knowledge/dialogue.yml complaint_oom_words)."""
    return _says("complaint_oom_words", message)


def _says(key: Text, message: Text) -> bool:
    folded = _matching_form(message)
    return any(_words(key, lang).search(folded) for lang in ("fa", "tr"))


def out_of_memory_job(tracker: Tracker, lang: Text) -> Optional[Text]:
    """Round 8: out of memory with the model and the method named: the job's first answer (its memory and the card
    that holds it safely), introduced; None otherwise."""
    from actions.answer_first import first_answer, job_known

    message = tracker.latest_message.get("text") or ""
    slots = tracker.current_slot_values()
    if not says_out_of_memory(message) or not job_known(slots):
        return None
    answer = first_answer(slots, lang, message)
    return text("complaint_oom_job", lang) + "\n" + answer if answer else None


def slow_card_complaint(message: Text, lang: Text, kb: Any = None) -> Optional[Text]:
    """Class 4: the complaint's answer naming the card the customer gave; None when no card or not about speed."""
    from bot.advisor.knowledge import load_knowledge
    from bot.text.followups import read_followup

    kb = kb or load_knowledge()
    cards = list(read_followup(message, kb).cards)
    if not cards or not says_slow(message):
        return None
    return text("complaint_slow_card", lang, card=kb.gpu(cards[0]).name)


class ActionComplaint(Action):
    """A complaint: the apology (utter_complaint), or for a slow run on a named card the answer that names it; the
    hand-over form follows by rule."""

    def name(self) -> Text:
        return "action_complaint"

    async def run(self, dispatcher: CollectingDispatcher, tracker: Tracker,
                  domain: Dict[Text, Any]) -> List[Dict[Text, Any]]:
        lang = conversation_language(tracker)
        reply = slow_card_complaint(tracker.latest_message.get("text") or "", lang)
        if reply:
            dispatcher.utter_message(text=reply)
        else:
            dispatcher.utter_message(response="utter_complaint")
        job = out_of_memory_job(tracker, lang)
        if job:
            dispatcher.utter_message(text=job)
        return []
