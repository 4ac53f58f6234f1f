"""Fallback, out-of-scope and Rasa's English defaults, replaced by fa/tr responses.

Two failed turns in a row (not understood or out of scope) end in an offer to talk to a person.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Text

from rasa_sdk import Action, Tracker
from rasa_sdk.events import FollowupAction, SlotSet
from rasa_sdk.executor import CollectingDispatcher

from actions.common import latest_intent, slot_set_this_turn

FAILED_TURNS_BEFORE_HANDOFF_OFFER = 2  # issue 3 §7: "after two failed turns an offer of a person"


def count_failed_turn(dispatcher: CollectingDispatcher, tracker: Tracker) -> List[Dict[Text, Any]]:
    """Count one failed turn; at the threshold offer a person and start counting again."""
    failed = int(tracker.get_slot("failed_turns") or 0) + 1
    if failed >= FAILED_TURNS_BEFORE_HANDOFF_OFFER:
        dispatcher.utter_message(response="utter_offer_human")
        failed = 0
    return [SlotSet("failed_turns", float(failed))]


async def to_the_open_ticket(dispatcher: CollectingDispatcher, tracker: Tracker) -> Optional[List[Dict[Text, Any]]]:
    """After the ticket, a message for the staff ("Ali Demir, 15:00'ten sonra ulaşabilirsiniz") goes onto the open
    ticket and the customer is told so (issue 21, hand-over state); None when no ticket takes it. Used by the
    fallback and by the goodbye (a "reachable tomorrow" read as a bye, round 9)."""
    import asyncio

    from actions.handoff import _open_ticket, add_to_open_ticket

    ticket = await asyncio.to_thread(_open_ticket, tracker.sender_id)
    if ticket is None or not await asyncio.to_thread(add_to_open_ticket, ticket.id, tracker):
        return None
    dispatcher.utter_message(response="utter_ticket_message_added", ticket_id=ticket.id)
    return [SlotSet("failed_turns", 0.0), FollowupAction("action_listen")]


class ActionDefaultFallback(Action):
    """Replaces Rasa's action_default_fallback: NLU fallback, core fallback and out-of-scope questions."""

    def name(self) -> Text:
        return "action_default_fallback"

    async def run(self, dispatcher: CollectingDispatcher, tracker: Tracker,
                  domain: Dict[Text, Any]) -> List[Dict[Text, Any]]:
        understood = await self._understood_after_all(dispatcher, tracker, domain)
        if understood is not None:
            return understood
        failed = int(tracker.get_slot("failed_turns") or 0) + 1
        if failed < FAILED_TURNS_BEFORE_HANDOFF_OFFER:
            # The offer replaces this explanation on the second failure, so one reply is never two prompts.
            intent = latest_intent(tracker)
            dispatcher.utter_message(response="utter_out_of_scope" if intent == "out_of_scope" else "utter_default")
        # Rasa's own fallback reverts the user turn to end it. Here the turn is kept (it counts as a failure) and
        # ended explicitly: back to the active form, which asks its question again, or to listening. Without
        # this, a core fallback after a rejected form turn would be predicted again and again.
        next_action = (tracker.active_loop or {}).get("name") or "action_listen"
        return count_failed_turn(dispatcher, tracker) + [FollowupAction(next_action)]


    @staticmethod
    async def _understood_after_all(dispatcher: CollectingDispatcher, tracker: Tracker,
                                    domain: Dict[Text, Any]) -> Optional[List[Dict[Text, Any]]]:
        """A message the classifier could not place that the conversation explains: answered, not a failure.

        * After an estimate, a message that changed the job ("خیلی گرون شد، با QLoRA چی میشه؟", "aslında model
          13B olacak": action_validate_slot_mappings has already kept its values) is a change of mind: the
          estimate is recalculated with it.
        * A closing wish ("..., روز خوبی داشته باشی", "iyi çalışmalar") is a goodbye, answered in kind.
        """
        from actions.common import conversation_language
        from actions.forms import ValidateEstimateForm
        from actions.social import ActionGoodbye, returned

        if not (tracker.active_loop or {}).get("name") and tracker.get_slot("ticket_id"):
            added = await to_the_open_ticket(dispatcher, tracker)
            if added is not None:
                return added
        if latest_intent(tracker) != "nlu_fallback":
            return None
        active = (tracker.active_loop or {}).get("name")
        text = tracker.latest_message.get("text") or ""
        if not active and tracker.get_slot("estimate_summary") \
                and (ValidateEstimateForm._new_values_this_turn(tracker, {}) or slot_set_this_turn(tracker, "stack")):
            from actions.estimate import ActionEstimate

            events = await ActionEstimate().run(dispatcher, tracker, domain)
            return [SlotSet("failed_turns", 0.0)] + list(events) + [FollowupAction("action_listen")]
        if _asks_if_enough(text):
            # "So is it enough or not?" (the intent guard sends it here: only the conversation can answer it): the
            # plan's memory and budget verdict, or what is needed to say (issue 21, rounds 3 and 4).
            answer_if_enough(dispatcher, tracker)
            return [SlotSet("failed_turns", 0.0), FollowupAction(active or "action_listen")]
        if returned("wishes", text, conversation_language(tracker)):
            await ActionGoodbye().run(dispatcher, tracker, domain)
            return [SlotSet("failed_turns", 0.0), FollowupAction(active or "action_listen")]
        return None


class ActionDefaultAskAffirmation(Action):
    """Rasa's version asks "Did you mean ...?" in English; ask to rephrase in the user's language instead."""

    def name(self) -> Text:
        return "action_default_ask_affirmation"

    async def run(self, dispatcher: CollectingDispatcher, tracker: Tracker,
                  domain: Dict[Text, Any]) -> List[Dict[Text, Any]]:
        dispatcher.utter_message(response="utter_ask_rephrase")
        return []


def _asks_if_enough(text: Text) -> bool:
    from bot.text.enough import asks_if_enough

    return asks_if_enough(text)


def answer_if_enough(dispatcher: CollectingDispatcher, tracker: Tracker, ask_budget: bool = True) -> None:
    """ "Is it enough?" answered from the current plan (actions/followup_lines.py: the memory verdict, then the
    budget's lines or how to get them), or, with no job yet, what is needed to say; never the previous message
    word for word."""
    from actions.answer_first import job_known
    from actions.common import conversation_language, recent_bot_texts
    from actions.followup_lines import budget_known, enough_lines, not_repeated

    lang = conversation_language(tracker)
    slots = tracker.current_slot_values()
    reply = "\n".join(enough_lines(slots, lang))
    dispatcher.utter_message(text=not_repeated(reply, recent_bot_texts(tracker), lang))
    if ask_budget and job_known(slots) and not budget_known(slots):
        dispatcher.utter_message(response="utter_ask_budget")
