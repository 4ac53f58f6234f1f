"""The domain sent with each custom-action call without the bot's response texts, except to the actions that read
them.

Rasa 3.6 sends `domain.as_dict()` with every call to the action server (`RemoteAction._action_call_format`; its
selective-domain option drops the whole domain or nothing). This project's domain is 80 KB of JSON, 76 KB of it
the fa/tr responses, which no action reads except the one that replays the previous answer in another language.
Serialising, sending and parsing those 76 KB two or three times per turn cost both servers CPU on every form turn
(issue 10). The slots, forms, intents and actions that rasa_sdk's FormValidationAction / ValidationAction and our
actions read are sent as before.

The tracker sent holds the slots, the latest message and the events of the previous turn and the turn in progress:
what the validation actions and the forms read (the previous turn's answer and offer, the texts just sent, the
actions since the message). Rasa sends every event it holds (`EventVerbosity.ALL`), the checkpoint's ~30 slot
events and the older turn's answers included: the calls of bench/bench_assistant.py's mixed conversations averaged
17.8 KB, 13.9 KB with the two turns (as ASCII-escaped JSON, measured once with an action server that logged each
call), each serialised by Rasa, forwarded by HAProxy and parsed by the action server, 2.3 calls per turn (issue 12;
bench/bench_load.py reports the calls per turn and the bytes per call HAProxy counts). Two actions read further
back and get more: the replay of the last answer (over several language switches) every event the tracker holds;
the handoff ticket (its trigger and excerpt) the session's latest stored events (masked) and the turn in progress:
one query on a handoff turn. Installed by importing `bot.assistant`.
"""
from __future__ import annotations

import logging
from typing import Any, Dict, List, Sequence, Text

from bot.assistant.patches.import_hooks import is_patched, replace, when_imported

logger = logging.getLogger(__name__)

ACTION_MODULE = "rasa.core.actions.action"
PATCH_MARKER = "_advisor_domain_without_responses"
# Actions that read domain["responses"] (tests/test_rasa_patches.py checks the action code for others).
RESPONSE_READERS = frozenset({"action_repeat_last_answer"})
# Actions that read the conversation further back than the kept turns (actions/handoff.py build_draft).
HISTORY_READERS = frozenset({"action_open_ticket"})
# Actions that read more than the previous turn of what the tracker holds (actions/repeat.py: the answer before a
# run of language switches).
HELD_EVENT_READERS = frozenset({"action_repeat_last_answer"}) | HISTORY_READERS
# The user turns every other action gets: the previous one (its answer, its offer) and the one in progress.
RECENT_TURNS = 2


def recent_events(events: Sequence[Any], turns: int = RECENT_TURNS) -> List[Any]:
    """The events from the `turns`-th latest user message on, the action_listen before it included; all of them
    when the tracker holds fewer user messages."""
    from rasa.shared.core.events import UserUttered

    from bot.assistant.tracker_store import turn_start

    events = list(events)
    users = [index for index, event in enumerate(events) if isinstance(event, UserUttered)]
    return events[turn_start(events, users[-turns]):] if len(users) >= turns else events


def domain_without_responses(domain: Dict[Text, Any], cache: Dict[int, Any]) -> Dict[Text, Any]:
    """`domain` with an empty `responses`, built once per domain dict (Rasa caches `as_dict()`)."""
    kept = cache.get(id(domain))
    if kept is None or kept[0] is not domain:
        kept = (domain, {**domain, "responses": {}})
        cache.clear()
        cache[id(domain)] = kept
    return kept[1]


def with_session_history(tracker: Any, state: Dict[Text, Any]) -> Dict[Text, Any]:
    """The tracker state with the session's latest stored events and the turn in progress as its events."""
    from bot.assistant.tracker_store import session_history

    try:
        return {**state, "events": session_history(tracker, state["events"])}
    except Exception:  # the database went away: the ticket is still opened, with the recent turns only
        logger.warning("Earlier events of %s not read; the ticket gets the recent turns", tracker.sender_id,
                       exc_info=True)
        return state


def _recent_call_format(action: Any, tracker: Any, domain: Any) -> Dict[Text, Any]:
    """RemoteAction._action_call_format with the recent events in place of all of them (the slots are all there)."""
    import rasa
    from rasa.shared.core.trackers import EventVerbosity

    state = tracker.current_state(EventVerbosity.NONE)
    state["events"] = [event.as_dict() for event in recent_events(tracker.events)]
    result = {"next_action": action.name(), "sender_id": tracker.sender_id, "tracker": state,
              "version": rasa.__version__}
    if not action._is_selective_domain_enabled() or domain.does_custom_action_explicitly_need_domain(action.name()):
        result["domain"] = domain.as_dict()
    return result


def patch_remote_action(module: Any) -> None:
    remote_action = module.RemoteAction
    original = remote_action._action_call_format
    if getattr(original, PATCH_MARKER, False):
        return
    cache: Dict[int, Any] = {}

    def _action_call_format(self: Any, tracker: Any, domain: Any) -> Dict[Text, Any]:
        if self.name() in HELD_EVENT_READERS:
            result = original(self, tracker, domain)
        else:
            result = _recent_call_format(self, tracker, domain)
        if isinstance(result.get("domain"), dict) and self.name() not in RESPONSE_READERS:
            result["domain"] = domain_without_responses(result["domain"], cache)
        if self.name() in HISTORY_READERS:
            result["tracker"] = with_session_history(tracker, result["tracker"])
        return result

    setattr(_action_call_format, PATCH_MARKER, True)
    replace(remote_action, "_action_call_format", _action_call_format)
    logger.debug("Custom actions get the domain without responses (bot.assistant.patches.action_payload)")


def is_installed() -> bool:
    return is_patched(ACTION_MODULE, "RemoteAction._action_call_format", PATCH_MARKER)


def install() -> None:
    when_imported(ACTION_MODULE, patch_remote_action)
