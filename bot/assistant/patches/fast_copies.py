"""Copies Rasa makes on every turn, made cheaper.

1. Deep copies that Rasa makes only for its debug log lines, made only when debug logging is on. Rasa 3.6's
MemoizationPolicy and RulePolicy pass `copy.deepcopy(states)` to `structlogger.debug(...)` on every prediction
(memoization.py: three calls, rule_policy.py: one), the message processor its events, slots and parse data (six
calls), the form action its slot candidates (three). Python evaluates the argument before structlog drops the line,
so the copies are made at every log level: 5 % of the Rasa server's CPU time in a py-spy profile under load
(issue 10, 2026-12-01). In those modules `copy` is used for nothing else; it is replaced by an object whose
`deepcopy` hands the value back unchanged unless the `rasa` logger is at DEBUG (`rasa run --debug`), where the log
lines are written as before.

2. Slot copies. Every DialogueStateTracker copies each of the domain's ~60 slots with `copy.copy` (trackers.py,
`__init__`), and Rasa builds about a dozen trackers per turn (the prior trackers of rule and memoization states, the
copy each action runs on): 40,000 generic copies through `__reduce_ex__` per hundred turns, 9 % of the turn in a
cProfile run (2026-12-01). Slots define no copy or pickling hooks, so `copy.copy` makes a new object of the same class
with the same attribute dict; `Slot.__copy__` does exactly that directly.

Installed by bot/assistant/patches/__init__.py.
"""
from __future__ import annotations

import copy
import logging
import sys
from typing import Any, Optional

from bot.assistant.patches.import_hooks import replace, when_imported

SLOTS_MODULE = "rasa.shared.core.slots"
# Modules whose every use of `copy` is a deep copy inside a `structlogger.debug(...)` call
# (tests/test_rasa_patches.py checks their source).
DEBUG_ONLY_MODULES = ("rasa.core.policies.memoization", "rasa.core.policies.rule_policy", "rasa.core.processor",
                      "rasa.core.actions.forms")
RASA_LOGGER = logging.getLogger("rasa")


class DebugOnlyCopy:
    """The `copy` module, except that `deepcopy` copies only while debug log lines are written."""

    @staticmethod
    def deepcopy(value: Any, memo: Optional[dict] = None) -> Any:
        if RASA_LOGGER.isEnabledFor(logging.DEBUG):
            return copy.deepcopy(value, memo)
        return value

    def __getattr__(self, name: str) -> Any:
        return getattr(copy, name)


def patch_module(module: Any) -> None:
    if not isinstance(getattr(module, "copy", None), DebugOnlyCopy):
        replace(module, "copy", DebugOnlyCopy())


def copy_slot(slot: Any) -> Any:
    """What `copy.copy` makes of a slot (a new object of its class, its attributes in a new dict), made directly."""
    slot_class: Any = type(slot)
    new = slot_class.__new__(slot_class)
    new.__dict__.update(slot.__dict__)
    return new


def patch_slots(module: Any) -> None:
    slot_class = module.Slot
    if "__copy__" not in slot_class.__dict__:
        replace(slot_class, "__copy__", copy_slot)


def is_installed() -> bool:
    slots = sys.modules.get(SLOTS_MODULE)
    return (all(isinstance(getattr(sys.modules.get(name), "copy", None), DebugOnlyCopy)
                for name in DEBUG_ONLY_MODULES if name in sys.modules)
            and (slots is None or slots.Slot.__dict__.get("__copy__") is copy_slot))


def install() -> None:
    for name in DEBUG_ONLY_MODULES:
        when_imported(name, patch_module)
    when_imported(SLOTS_MODULE, patch_slots)
