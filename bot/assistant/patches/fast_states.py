"""A tracker's past states worked out once per tracker state, not once per policy that asks for them.

Rasa 3.6 turns a tracker into its list of dialogue states (`DialogueStateTracker.past_states`) by replaying its
events from the first one, and every policy asks again: RulePolicy (once for the intent and once for the text of
the last message) and MemoizationPolicy, at every prediction of a turn: 7 calls per what-if turn, 3 distinct. That
replay grows with the events the tracker holds (issue 10: turn 300 must cost what turn 1 costs). Here the answer is
kept on the tracker, keyed by what it depends on: the events (their number and the newest event object: events are
only appended), the domain and the call's arguments. Each caller gets its own copy of the states, because callers
edit them (the featurizer removes the intent or the text of the last user state); a state's values are strings,
numbers and tuples, so copying the two levels of dicts copies all that can change.

Installed by bot/assistant/patches/__init__.py.
"""
from __future__ import annotations

import json
import logging
from typing import Any, Dict, List, Optional, Text

from bot.assistant.patches.import_hooks import is_patched, replace, when_imported

logger = logging.getLogger(__name__)

TRACKERS_MODULE = "rasa.shared.core.trackers"
PATCH_MARKER = "_past_states_once"
MEMO_ATTR = "_past_states_memo"


def copy_states(states: List[Dict[Text, Any]]) -> List[Dict[Text, Any]]:
    return [{key: dict(sub) if isinstance(sub, dict) else sub for key, sub in state.items()} for state in states]


def patch_trackers(module: Any) -> None:
    """Replace DialogueStateTracker.past_states in Rasa's loaded module (idempotent)."""
    tracker_class = module.DialogueStateTracker
    if getattr(tracker_class.past_states, PATCH_MARKER, False):
        return
    original = tracker_class.past_states

    def past_states(self: Any, domain: Any, omit_unset_slots: bool = False, ignore_rule_only_turns: bool = False,
                    rule_only_data: Optional[Dict[Text, Any]] = None) -> List[Dict[Text, Any]]:
        events = self.events
        key = (len(events), id(events[-1]) if events else None, id(domain), omit_unset_slots,
               ignore_rule_only_turns, json.dumps(rule_only_data, sort_keys=True, default=list))
        memo = self.__dict__.get(MEMO_ATTR)
        if memo is None:
            memo = self.__dict__[MEMO_ATTR] = {}
        states = memo.get(key)
        if states is None:
            if memo and next(iter(memo))[:3] != key[:3]:
                memo.clear()  # the tracker moved on: keep only the states of its present events
            states = memo[key] = copy_states(original(self, domain, omit_unset_slots=omit_unset_slots,
                                                      ignore_rule_only_turns=ignore_rule_only_turns,
                                                      rule_only_data=rule_only_data))
        return copy_states(states)

    setattr(past_states, PATCH_MARKER, True)
    replace(tracker_class, "past_states", past_states)
    logger.debug("Past states are worked out once per tracker state (bot.assistant.patches.fast_states)")


def is_installed() -> bool:
    return is_patched(TRACKERS_MODULE, "DialogueStateTracker.past_states", PATCH_MARKER)


def install() -> None:
    """Patch now if Rasa's trackers module is loaded, otherwise as soon as it is."""
    when_imported(TRACKERS_MODULE, patch_trackers)
