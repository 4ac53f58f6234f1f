"""What a bare number means after an estimate (blind round 2): the dialogue state decides, not the nearest keyword.

"And if it were 3000?" right after an estimate says no unit, and the parser alone reports it as unclear
(bot/text/parse: it never guesses). The conversation does know more: the estimate was made with a sequence length
of 2,048 and a budget of 100 dollars, so 3000 is a new length, not a budget thirty times larger. The number goes to
the value of the current plan it is closest to (by ratio), when that is clear; otherwise it stays unclear and the
customer is asked, as before. While the form waits for the budget, a what-if question with a number that only a
sequence length looks like (a power of two, "4k") is a new length, not the budget it was asked for.
"""
from __future__ import annotations

import math
from typing import Any, Dict, Mapping, Optional, Text

# The plan's values a bare number can replace, by slot the parser is told to expect: slot -> tracker slot.
STATE_SLOTS = {"seq_len": "seq_len", "budget_usd": "budget_usd", "gpus": "gpus", "epochs": "epochs",
               "examples": "examples", "avg_tokens": "avg_tokens"}
# The number must be within this factor of the value it replaces (a length of 2,048 -> 512 to 8,192), and the next
# closest value at least this many times farther away (log ratio), so that the choice is never a close call.
MAX_RATIO = 4.0
CLEAR_MARGIN = 2.0


def _distance(number: float, current: Any) -> Optional[float]:
    try:
        value = float(current)
    except (TypeError, ValueError):
        return None
    if not (math.isfinite(value) and value > 0 and number > 0):
        return None
    return abs(math.log(number / value))


def plan_values(slots: Mapping[Text, Any]) -> Dict[Text, Any]:
    """The current plan's values by parser slot; the GPU count of a multi-GPU plan the answer proposed included."""
    values = {slot: slots.get(name) for slot, name in STATE_SLOTS.items()}
    summary = slots.get("estimate_summary")
    multi = summary.get("multi_gpu") if isinstance(summary, dict) else None
    if values.get("gpus") is None and isinstance(multi, dict):
        values["gpus"] = multi.get("count")
    return values


def slot_for_bare_number(number_text: Text, slots: Mapping[Text, Any]) -> Optional[Text]:
    """The parser slot an unclear bare number answers, judged by the current plan's values; None when unclear."""
    from bot.text.numbers import parse_number

    try:
        number = float(parse_number(number_text)[0])
    except (TypeError, ValueError, IndexError):
        return None
    distances = sorted((d, slot) for slot, value in plan_values(slots).items()
                       if (d := _distance(number, value)) is not None)
    if not distances or distances[0][0] > math.log(MAX_RATIO):
        return None
    if len(distances) > 1 and distances[1][0] < CLEAR_MARGIN * max(distances[0][0], 1e-9):
        return None
    return distances[0][1]


def estimate_made(slots: Mapping[Text, Any]) -> bool:
    return slots.get("estimate_summary") is not None or bool(slots.get("answered_first"))


def asked_gpu_count(previous_text: Optional[Text]) -> bool:
    """The customer's previous message asked how many GPUs the job needs (bot/text/followups.py)."""
    if not previous_text:
        return False
    from bot.advisor.knowledge import load_knowledge
    from bot.text.followups import read_followup

    try:
        return read_followup(previous_text, load_knowledge()).kind == "gpu_count"
    except ValueError:
        return False


def reread_expected(text: Text, requested: Optional[Text], slots: Optional[Mapping[Text, Any]],
                    previous_text: Optional[Text] = None) -> Optional[Text]:
    """The slot the parser should expect for ``text``: the form's question, or what the plan's state says an
    unclear bare number is (None: read as it stands). ``previous_text``: the customer's message before this one;
    after "how many GPUs?" was answered, "4 then" is a GPU count."""
    if slots is None or not estimate_made(slots):
        return requested
    if requested is None and asked_gpu_count(previous_text):
        from bot.text.parsed import parsed_message

        parsed = parsed_message(text)
        if len(parsed.ambiguous) == 1 and not parsed.found():
            return "gpus"
    from bot.text.parsed import parsed_message
    from bot.text.questions import is_question

    if requested == "budget" and is_question(text):
        # "and if it were 4096?" while the budget question is open: a what-if about the length, not the budget
        plain = parsed_message(text)
        if plain.seq_len is not None and plain.budget_usd is None:
            return None
    if requested is not None:
        return requested
    parsed = parsed_message(text)
    if len(parsed.ambiguous) != 1 or parsed.found():
        return requested
    return slot_for_bare_number(str(parsed.ambiguous[0]), slots)


def asks_budget_fit(text: Text) -> bool:
    """ "Does it fit my budget?", «به بودجه‌ام می‌خوره؟»: a question about the budget that gives no amount."""
    from bot.text.normalize import fold
    from bot.text.numbers import load_lexicon, tokenize
    from bot.text.parsed import parsed_message
    from bot.text.questions import is_question

    if not text or text.startswith("/") or not is_question(text):
        return False
    parsed = parsed_message(text)
    if parsed.budget_usd is not None or parsed.budget_unlimited or parsed.hourly_cap is not None:
        return False
    if parsed.model_id or parsed.model_size_b or parsed.method:
        # "Not much money; I want to fully fine-tune Qwen2.5 3B, which card is cheapest?" is a job to estimate (its
        # model and method kept, the cheapest card given), not a question about a budget (studied blind set 2).
        return False
    keywords = load_lexicon().keywords
    tokens = tokenize(fold(text))
    return any(keywords.longest_at(tokens, i)[1] == "budget_usd" for i in range(len(tokens)))
