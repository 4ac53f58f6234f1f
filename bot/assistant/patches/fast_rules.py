"""RulePolicy's rule lookup stops where the longest rule ends, instead of walking the whole conversation.

Rasa 3.6 finds the rules that apply to a turn (`RulePolicy._get_possible_keys`) by walking the conversation's
states from the newest back to the first, and at each step filtering the rules still possible. A rule of n states
is decided by the n newest states: `_is_rule_applicable` answers True for every step at or past its length. So
after as many steps as the longest rule has states (4 in this project's 283 rules) the filter keeps every key, and
the remaining steps, one per state of the conversation, only repeat work that grows with the conversation
(issue 10: rule matching was a fifth of the Rasa server's time on advice turns, and turn 300 must cost what turn 1
costs). Here the walk stops after that many steps: the same set of keys, in bounded work.

The first step, the newest state against every rule, was still a quarter of the Rasa server's work on a turn
(cProfile, 2026-12-01: about a thousand `_is_rule_applicable` calls per turn). A rule whose newest state names a
previous action matches only a conversation whose newest state names the same one (`_does_rule_match_state`), so
the rules are indexed once per lookup by that action: the first step checks the rules indexed under the
conversation's previous action and those that name none, with Rasa's own `_is_rule_applicable`.

Installed by bot/assistant/patches/__init__.py.
"""
from __future__ import annotations

import itertools
import logging
from typing import Any, Dict, FrozenSet, List, Optional, Set, Text, Tuple

from bot.assistant.patches.import_hooks import is_patched, replace, when_imported

logger = logging.getLogger(__name__)

RULE_POLICY_MODULE = "rasa.core.policies.rule_policy"
PATCH_MARKER = "_stops_at_longest_rule"


PREVIOUS_ACTION, ACTION_NAME, SHOULD_NOT_BE_SET = "prev_action", "action_name", "should_not_be_set"
# Rule tables of the lookups seen last (Rasa has two at inference: rules, and rules for a loop's unhappy path).
_TABLES: Dict[int, Tuple[Dict[Text, Text], "RuleTable"]] = {}
_MAX_TABLES = 8


class RuleTable:
    """The keys of one rule lookup, the longest rule, and the keys by the previous action of their newest state."""

    def __init__(self, policy: Any, lookup: Dict[Text, Text]) -> None:
        self.keys: FrozenSet[Text] = frozenset(lookup)
        # _rule_key_to_state is Rasa's own memoised json.loads of a key (an lru_cache larger than the rule count).
        rules = {key: policy._rule_key_to_state(key) for key in self.keys}
        self.longest = max((len(states) for states in rules.values()), default=0)
        self.by_previous_action: Dict[Text, Set[Text]] = {}
        self.any_previous_action: Set[Text] = set()
        for key, states in rules.items():
            name = self.previous_action(states[-1]) if states else None
            if isinstance(name, str) and name and name != SHOULD_NOT_BE_SET:
                self.by_previous_action.setdefault(name, set()).add(key)
            else:
                self.any_previous_action.add(key)

    @staticmethod
    def previous_action(state: Dict[Text, Any]) -> Optional[Any]:
        return (state.get(PREVIOUS_ACTION) or {}).get(ACTION_NAME)

    def candidates(self, newest_state: Dict[Text, Any]) -> Set[Text]:
        """Keys that can match the newest state: the others name another previous action."""
        name = self.previous_action(newest_state)
        indexed = self.by_previous_action.get(name, set()) if isinstance(name, str) else set()
        return self.any_previous_action | indexed


def rule_table(policy: Any, lookup: Dict[Text, Text]) -> RuleTable:
    """The table of `lookup`, built again whenever its keys changed (training removes rules from it)."""
    held = _TABLES.get(id(lookup))
    if held is not None and held[0] is lookup and held[1].keys == lookup.keys():
        return held[1]
    if len(_TABLES) >= _MAX_TABLES:
        _TABLES.clear()
    table = RuleTable(policy, lookup)
    _TABLES[id(lookup)] = (lookup, table)  # the lookup is held, so its id is not reused while the entry exists
    return table


def possible_keys(policy: Any, lookup: Dict[Text, Text], states: List[Dict[Text, Any]]) -> Set[Text]:
    """The keys of `lookup` whose rules apply to `states` (RulePolicy._get_possible_keys, bounded)."""
    if not states or not lookup:
        return set(lookup.keys())
    table = rule_table(policy, lookup)
    newest = states[-1]
    keys = {key for key in table.candidates(newest) if policy._is_rule_applicable(key, 0, newest)}
    for i, state in enumerate(itertools.islice(reversed(states), 1, None), start=1):
        if i >= table.longest or not keys:
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
    replace(policy_class, "_get_possible_keys", _get_possible_keys)
    logger.debug("RulePolicy's rule lookup stops at the longest rule (bot.assistant.patches.fast_rules)")


def is_installed() -> bool:
    return is_patched(RULE_POLICY_MODULE, "RulePolicy._get_possible_keys", PATCH_MARKER)


def install() -> None:
    """Patch now if Rasa's rule policy module is loaded, otherwise as soon as it is."""
    when_imported(RULE_POLICY_MODULE, patch_rule_policy)
