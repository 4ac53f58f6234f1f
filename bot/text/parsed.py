"""The parser's reading of the latest messages, kept so that a message is parsed once per slot asked, not once per
reader.

Inside the Rasa process one message is read by the IntentGuard (bot/assistant/components), then by
action_validate_slot_mappings and the estimate form's validation (bot/assistant/in_process_actions.py), some of
them twice (the job values, then the contract's values; whether the message answers the question, then its values),
and at the 4,000-character limit one call of ``parse_values`` costs 10-60 ms (bench/results/nlu_worst.md; issue 20).
The action server's actions (estimate, comparison, own card, handoff) read the message again in their own process.
``parsed_message`` answers a repeated (text, expected slot) from the last PARSES_KEPT readings of this process.
(The guard reads the normalised text, the actions the text as typed: they share a reading when normalisation leaves
the message unchanged, as for lower-case Latin text.)

Only the default knowledge base and lexicon are used (what the bot uses), so a kept reading is what
``parse_values`` would return again; each caller gets its own copy, so no caller can change another's.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Optional, Tuple

# Enough for every reader of the messages being handled at once by one process (each message is read with at most
# two expected slots), small enough to hold: at most 32 texts of at most 4,000 characters.
PARSES_KEPT = 32
_KEPT: "OrderedDict[Tuple[str, Optional[str]], Any]" = OrderedDict()


def parsed_message(text: Any, expected: Optional[str] = None) -> Any:
    """``bot.text.parse.parse_values(text, expected=expected)``, kept for the next reader of the same message."""
    from bot.text.parse import parse_values

    if not isinstance(text, str):
        return parse_values(text, expected=expected)
    key = (text, expected)
    kept = _KEPT.get(key)
    if kept is None:
        kept = _KEPT[key] = parse_values(text, expected=expected)
        while len(_KEPT) > PARSES_KEPT:
            _KEPT.popitem(last=False)
    else:
        _KEPT.move_to_end(key)
    return kept.copy(deep=True)


def forget_parses() -> None:
    """Drop every kept reading (benchmarks that time the parser itself)."""
    _KEPT.clear()
