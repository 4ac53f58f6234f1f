"""Small helpers shared by the actions: the conversation language and the values kept in slots."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from rasa_sdk import Tracker

LANGUAGES = ("fa", "tr")
DEFAULT_LANGUAGE = "fa"  # the unconditioned response variants are Persian

# Form slots in the order the form asks for them (domain/core.yml, forms.estimate_form).
FORM_SLOTS = ("model", "method", "seq_len", "budget")
# Optional values that refine the estimate but are never asked for.
VOLUME_SLOTS = ("examples", "avg_tokens", "total_tokens", "epochs", "gpus")

# Values of the contract added by issue 13 (domain/core.yml), read from any message and passed into AdviceRequest.
CONTRACT_SLOTS = ("hourly_cap", "hourly_cap_vat", "budget_period", "own_gpu", "custom_arch", "custom_arch_label",
                  "stack")
# Slots whose new value is read back to the customer ("Noted: ...") before the form's next question.
NOTED_SLOTS = FORM_SLOTS + ("model_id", "model_size_b", "budget_usd", "budget_unlimited", "hourly_cap")
QUESTION_REPEAT = "question_repeat"
# Intents the form leaves to the rules (answered, then the form resumes); see actions/rulegen.py.
CHITCHAT_INTERRUPTIONS = ("greet", "start", "set_language", "thank", "bot_challenge", "out_of_scope",
                          "unsupported_language", "request_human", "request_quote", "goodbye", "deny",
                          "compare_options", "own_card", "complaint", "capabilities", "order_multi_gpu",
                          "switch_language", "dataset_upload", "ask_about_answer", "other_workload",
                          "buy_hardware", "complaint_price", "dataset_question", "card_facts",
                          "cards_under_price")
# Intents answered in the middle of the handoff form, which then asks its question again (the generated rules of
# actions/rulegen.py; every FAQ intent too). The rest is read by the form: yes/no, a contact, or a re-ask.
HANDOFF_CHITCHAT_INTERRUPTIONS = ("greet", "start", "set_language", "thank", "bot_challenge",
                                  "unsupported_language", "compare_options", "own_card", "capabilities",
                                  "order_multi_gpu", "switch_language", "ask_about_answer",
                                  "other_workload", "buy_hardware", "complaint_price", "dataset_question",
                                  "card_facts", "cards_under_price")
# Intents that do not count as a successful turn for the "two failed turns" counter.
UNCERTAIN_INTENTS = ("nlu_fallback", "out_of_scope", "inform", "estimate", "affirm", "deny", "dont_know")


def conversation_language(tracker: Tracker) -> str:
    lang = tracker.get_slot("language")
    return lang if lang in LANGUAGES else DEFAULT_LANGUAGE


def latest_intent(tracker: Tracker) -> Optional[str]:
    return (tracker.latest_message.get("intent") or {}).get("name")


def payload_entities(tracker: Tracker) -> Dict[str, Any]:
    """Entities of the latest message; only button payloads carry any (/inform{"method":"qlora"})."""
    return {e["entity"]: e.get("value") for e in tracker.latest_message.get("entities") or [] if "entity" in e}


def is_interruption(intent: Optional[str]) -> bool:
    return bool(intent) and (intent.startswith("faq_") or intent in CHITCHAT_INTERRUPTIONS)


def interrupts_handoff(intent: Optional[str]) -> bool:
    return bool(intent) and (intent.startswith("faq_") or intent in HANDOFF_CHITCHAT_INTERRUPTIONS)


def actions_before_form_run(tracker: Tracker, form_name: str) -> List[Optional[str]]:
    """Names of the actions that ran before this run of a form's validation action.

    Rasa hands the validation action a copy of the tracker ending in an extra ActionExecuted(<form>); without it,
    the last name tells who spoke last (action_listen: the user).
    """
    actions = [event.get("name") for event in tracker.events if event.get("event") == "action"]
    if actions and actions[-1] == form_name:
        actions.pop()
    return actions


# Actions whose answer is re-run in the new language on a language switch (actions/repeat.py), and the actions that
# answer nothing themselves (bookkeeping around a turn).
ANSWER_ACTIONS = ("action_answer_faq", "action_estimate", "action_compare_options", "action_own_card",
                  "action_greet", "action_thank", "action_goodbye")  # the last three: actions/social.py
SILENT_ACTIONS = ("action_listen", "action_validate_slot_mappings", "action_extract_slots", "action_session_start",
                  "action_deactivate_loop", "validate_estimate_form", "validate_handoff_form")


def user_turns(events: List[Dict[str, Any]]) -> List[Tuple[Dict[str, Any], List[Dict[str, Any]]]]:
    """The conversation as (user event, events that followed it until the next user message)."""
    turns: List[Tuple[Dict[str, Any], List[Dict[str, Any]]]] = []
    for event in events:
        if event.get("event") == "user":
            turns.append((event, []))
        elif turns:
            turns[-1][1].append(event)
    return turns


def event_intent(user_event: Dict[str, Any]) -> Optional[str]:
    return ((user_event.get("parse_data") or {}).get("intent") or {}).get("name")


def turn_answer(user_event: Dict[str, Any], followers: List[Dict[str, Any]]) -> Optional[str]:
    """What one turn answered: faq_<topic>, an answering action, or the last utter_* response sent."""
    key = None
    for event in followers:
        if event.get("event") == "action" and event.get("name") in ANSWER_ACTIONS:
            name = event["name"]
            key = event_intent(user_event) if name == "action_answer_faq" else name
        elif event.get("event") == "bot":
            utter = (event.get("metadata") or {}).get("utter_action")
            if utter and not key:
                key = utter
    return key


def previous_turn_answer(tracker: Tracker) -> Optional[str]:
    """The answer of the turn before the latest user message (read at the start of the latest turn)."""
    turns = user_turns(list(tracker.events))
    if len(turns) < 2:
        return None
    return turn_answer(*turns[-2])


def previous_turn_actions(tracker: Tracker) -> List[str]:
    """The actions the bot ran in the turn before the latest user message."""
    turns = user_turns(list(tracker.events))
    if len(turns) < 2:
        return []
    return [str(event.get("name")) for event in turns[-2][1] if event.get("event") == "action"]


def previous_turn_responses(tracker: Tracker) -> set:
    """The responses (utter_* names) the bot sent in the turn before the latest user message."""
    turns = user_turns(list(tracker.events))
    if len(turns) < 2:
        return set()
    return {(event.get("metadata") or {}).get("utter_action") for event in turns[-2][1] if event.get("event") == "bot"}


def previous_user_event(tracker: Tracker) -> Optional[Dict[str, Any]]:
    """The user message before the latest one (within the previous turn the action payload holds)."""
    turns = user_turns(list(tracker.events))
    return turns[-2][0] if len(turns) >= 2 else None


def recent_bot_texts(tracker: Tracker) -> set:
    """The texts the bot sent in its previous turn and so far in this one.

    A message is never sent twice in a row word for word (issue 13: "Noted: ..." after an answered question was the
    same line the customer had just read).
    """
    turns = user_turns(list(tracker.events))
    followers = [event for _, events in turns[-2:] for event in events]
    return {str(event.get("text")).strip() for event in followers
            if event.get("event") == "bot" and event.get("text")}


def slot_set_this_turn(tracker: Tracker, name: str) -> bool:
    """Slot ``name`` got a value after the latest user message (action_validate_slot_mappings keeps the values of
    every message, e.g. the stack of "peki bir de NeMo ile bakar mısın?")."""
    for event in reversed(tracker.events):
        if event.get("event") == "user":
            return False
        if event.get("event") == "slot" and event.get("name") == name and event.get("value"):
            return True
    return False


def slot_before_latest_message(tracker: Tracker, name: str) -> Any:
    """The value slot ``name`` had before the latest user message, as far as the events sent reach (the previous
    turn; bot/assistant/patches/action_payload.py): None when it was not set in them."""
    events = list(tracker.events)
    last_user = max((i for i, event in enumerate(events) if event.get("event") == "user"), default=len(events))
    value = None
    for event in events[:last_user]:
        if event.get("event") == "slot" and event.get("name") == name:
            value = event.get("value")
    return value
