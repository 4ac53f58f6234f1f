"""Small helpers shared by the actions: the conversation language and the values kept in slots."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from rasa_sdk import Tracker

LANGUAGES = ("fa", "tr")
DEFAULT_LANGUAGE = "fa"  # the unconditioned response variants are Persian

# Form slots in the order the form asks for them (domain/core.yml, forms.estimate_form).
FORM_SLOTS = ("model", "method", "seq_len", "budget")
# Optional values that refine the estimate but are never asked for.
VOLUME_SLOTS = ("examples", "avg_tokens", "total_tokens", "epochs", "gpus")

# Intents the form leaves to the rules (answered, then the form resumes); see actions/rulegen.py.
CHITCHAT_INTERRUPTIONS = ("greet", "start", "set_language", "thank", "bot_challenge", "out_of_scope",
                          "unsupported_language", "request_human", "request_quote", "goodbye", "deny")
# Intents answered in the middle of the handoff form, which then asks its question again (the generated rules of
# actions/rulegen.py; every FAQ intent too). The rest is read by the form: yes/no, a contact, or a re-ask.
HANDOFF_CHITCHAT_INTERRUPTIONS = ("greet", "start", "set_language", "thank", "bot_challenge",
                                  "unsupported_language")
# Intents that do not count as a successful turn for the "two failed turns" counter.
UNCERTAIN_INTENTS = ("nlu_fallback", "out_of_scope", "inform", "estimate", "affirm", "deny")


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
