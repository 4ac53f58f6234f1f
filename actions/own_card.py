"""action_own_card: "I have an RTX 4090 at home, will it fit?" - the job judged on the customer's own card
(knowledge/own_gpus.yml, bot.advisor.own_gpus), then what CloudRUX offers. The conversation carries on after it."""
from __future__ import annotations

import logging
from typing import Any, Dict, List, Optional, Text

from rasa_sdk import Action, Tracker
from rasa_sdk.events import ActiveLoop, SlotSet
from rasa_sdk.executor import CollectingDispatcher

from actions.common import conversation_language
from actions.estimate import advice_request_fields

logger = logging.getLogger(__name__)


def named_own_card(tracker: Tracker) -> Optional[str]:
    """The own card of the latest message (bot.text.parse), else the one remembered in the own_gpu slot."""
    from bot.text.parse import parse_values

    try:
        card = parse_values(tracker.latest_message.get("text") or "").own_gpu
    except Exception:
        logger.exception("parse_values failed on an own-card message")
        card = None
    return card or tracker.get_slot("own_gpu")


class ActionOwnCard(Action):
    def name(self) -> Text:
        return "action_own_card"

    async def run(self, dispatcher: CollectingDispatcher, tracker: Tracker,
                  domain: Dict[Text, Any]) -> List[Dict[Text, Any]]:
        from bot.advisor.knowledge import InputError, load_knowledge
        from bot.advisor.own_gpus import own_card_advice
        from bot.present.render import render_error, render_own_card

        kb = load_knowledge()
        lang = conversation_language(tracker)
        card_id = named_own_card(tracker)
        if not card_id:
            dispatcher.utter_message(text=kb.text("own_card_unknown", lang))
            return []
        try:
            result = own_card_advice(card_id, advice_request_fields(tracker), kb)
        except InputError as error:
            text = kb.text("own_card_unknown", lang) if error.field == "own_gpu" else render_error(error, lang)
            dispatcher.utter_message(text=text)
            return []
        except ValueError:
            logger.exception("own card advice failed for %s", card_id)
            dispatcher.utter_message(text=kb.text("error_internal", lang))
            return []
        dispatcher.utter_message(text=render_own_card(result, lang, kb))
        events = [SlotSet("own_gpu", card_id)] if "own_gpu" in (domain.get("slots") or {}) else []
        if result.advice is None and not tracker.active_loop.get("name"):
            # Round 8: no job yet; the estimate form asks which model, and the job that follows is judged on this
            # card first (own_card_asked, actions/forms.py), then the cloud card.
            events.append(ActiveLoop("estimate_form"))  # the form runs next and asks its `model` question
        return events


def own_card_asked(tracker: Tracker) -> bool:
    """The bot's turn before the latest message was the own-card answer without a job (it asked which model)."""
    from actions.common import previous_turn_actions

    return "action_own_card" in previous_turn_actions(tracker)


def own_card_verdict(tracker: Tracker, slots: Dict[Text, Any], lang: Text) -> Optional[Text]:
    """The job of the form's slots judged on the own card of the conversation; None when it cannot be."""
    from actions.answer_first import _Slots, assumed_values
    from bot.advisor.knowledge import load_knowledge
    from bot.advisor.own_gpus import own_card_advice
    from bot.present.render import render_own_card

    card_id = tracker.get_slot("own_gpu")
    if not card_id or not own_card_asked(tracker):
        return None
    kb = load_knowledge()
    try:
        result = own_card_advice(card_id, advice_request_fields(_Slots({**slots, **assumed_values(slots)})), kb)
    except ValueError:
        logger.exception("own card verdict failed for %s", card_id)
        return None
    return render_own_card(result, lang, kb)
