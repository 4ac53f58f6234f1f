"""A no to the offered quote or person, or to the hand-over's questions, with a job question in the same message
(round 9): "no, never mind, first tell me what Mistral 7B QLoRA needs", «نه بیخیال، Qwen 7B با LoRA چه کارتی
میخواد؟». The estimate answers the question, and a short line first says that nothing was passed on
(knowledge/dialogue.yml ``offer_declined_brief``). Pure reading of the tracker; the estimate form says the line.
"""
from __future__ import annotations

from typing import Any

from actions.common import previous_turn_responses
from actions.handoff_answers import decline_labels

# The previous turn's responses after which a "no" declines the hand-over: the offers of a quote or a person
# (actions/language.py OFFERS, read through pending_offer) and the hand-over form's own questions.
HANDOFF_QUESTIONS = frozenset({"utter_ask_handoff_consent", "utter_ask_handoff_contact"})
OFFER_VALUES = frozenset({"quote", "human"})
LINE_KEY = "offer_declined_brief"


def declines_the_handoff(tracker: Any) -> bool:
    """The latest message declines (refuses, cancels, starts with no) right after an offer of a quote or a person
    or a question of the hand-over form."""
    text = (tracker.latest_message.get("text") or "").strip()
    if not text or not decline_labels(text):
        return False
    if tracker.get_slot("pending_offer") in OFFER_VALUES:
        return True
    return bool(previous_turn_responses(tracker) & HANDOFF_QUESTIONS)
