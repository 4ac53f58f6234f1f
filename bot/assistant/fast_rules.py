"""RulePolicy's rule lookup stops where the longest rule ends, instead of walking the whole conversation.

Rasa 3.6 finds the rules that apply to a turn (`RulePolicy._get_possible_keys`) by walking the conversation's
states from the newest back to the first, and at each step filtering the rules still possible. A rule of n states
is decided by the n newest states: `_is_rule_applicable` answers True for every step at or past its length. So
after as many steps as the longest rule has states (4 in this project's 283 rules) the filter keeps every key, and
the remaining steps, one per state of the conversation, only repeat work that grows with the conversation
(issue 10: rule matching was a fifth of the Rasa server's time on advice turns, and turn 300 must cost what turn 1
costs). Here the walk stops after that many steps: the same set of keys, in bounded work.

Installed by importing `bot.assistant`, like bot.assistant.fast_events.
"""
from __future__ import annotations

import logging
import sys
from typing import Any, Dict, List, Set, Text

from bot.assistant.import_hooks import when_imported

logger = logging.getLogger(__name__)

RULE_POLICY_MODULE = "rasa.core.policies.rule_policy"
PATCH_MARKER = "_stops_at_longest_rule"


def possible_keys(policy: Any, lookup: Dict[Text, Text], states: List[Dict[Text, Any]]) -> Set[Text]:
    """The keys of `lookup` whose rules apply to `states` (RulePolicy._get_possible_keys, bounded)."""
    keys = set(lookup.keys())
    # _rule_key_to_state is Rasa's own memoised json.loads of a key (an lru_cache larger than the rule count).
    longest = max((len(policy._rule_key_to_state(key)) for key in keys), default=0)
    for i, state in enumerate(reversed(states)):
        if i >= longest or not keys:
            break  # every rule left is decided: _is_rule_applicable is True from here on
        keys = {key for key in keys if policy._is_rule_applicable(key, i, state)}
    return keys


def patch_rule_policy(module: Any) -> None:
    """Replace RulePolicy._get_possible_keys in Rasa's loaded module (idempotent)."""
    policy_class = module.RulePolicy
    if getattr(policy_class._get_possible_keys, PATCH_MARKER, False):
        return

    def _get_possible_keys(self: Any, lookup: Dict[Text, Text], states: List[Dict[Text, Any]]) -> Set[Text]:
        return possible_keys(self, lookup, states)

    setattr(_get_possible_keys, PATCH_MARKER, True)
    policy_class._get_possible_keys = _get_possible_keys
    logger.debug("RulePolicy's rule lookup stops at the longest rule (bot.assistant.fast_rules)")


def is_installed() -> bool:
    module = sys.modules.get(RULE_POLICY_MODULE)
    return module is not None and getattr(module.RulePolicy._get_possible_keys, PATCH_MARKER, False)


def install() -> None:
    """Patch now if Rasa's rule policy module is loaded, otherwise as soon as it is."""
    when_imported(RULE_POLICY_MODULE, patch_rule_policy)


install()
