"""The values of one message that the estimate form keeps beside its own questions: the contract's values (hourly
cap and its KDV, budget period, own card, config.json, stack) and the refusal of values the estimator would refuse.
Split from actions/forms.py (round 9: the form module passed 600 lines)."""
from __future__ import annotations

from typing import Any, Dict, Optional, Text

from rasa_sdk.executor import CollectingDispatcher

from actions.common import CONTRACT_SLOTS

# Values the estimator refuses (bot/advisor/advice.py, validate): refused when given, so that a value the bot says
# it cannot use is neither kept in the slots nor read by the ticket's priority (issue 20, finding 6: an absurd
# budget was kept and made the ticket urgent). slot -> (form slot, lowest, highest, error key of knowledge/texts.yml).
def _checked_values() -> Dict[Text, tuple]:
    from bot.advisor.advice import MAX_BUDGET_USD, MAX_SEQ_LEN

    return {"budget_usd": ("budget", 0.01, MAX_BUDGET_USD, "bad_budget"),
            "seq_len": ("seq_len", 1, MAX_SEQ_LEN, "bad_seq_len")}


def refuse_out_of_range(dispatcher: CollectingDispatcher, updates: Dict[Text, Any], lang: Text) -> Dict[Text, Any]:
    """`updates` without the values the estimator would refuse; each refusal is said (the estimator's own words)
    and its question stays open."""
    from bot.advisor.knowledge import InputError
    from bot.present.render import render_error

    for slot, (form_slot, low, high, key) in _checked_values().items():
        value = updates.get(slot)
        if value is None or low <= value <= high:
            continue
        dispatcher.utter_message(text=render_error(InputError(slot, key, "out of range", low=low, high=high,
                                                              value=value), lang))
        updates = {**updates, slot: None, form_slot: None, "failed_turns": 0.0}
    return updates


def contract_values(text: Text, slots: Dict[Text, Any], updates: Dict[Text, Any],
                    previous: Optional[Dict[Text, Any]] = None) -> Dict[Text, Any]:
    """The contract's newer values of one message (hourly cap, its KDV, budget period, own card, config.json).

    Only what the message says and ``updates`` does not already hold (``previous``: the slots before this
    message, when ``slots`` already has its updates). An hourly cap answers the budget question
    (it is the customer's price limit, not a total budget: language reviews fa §3.4, tr §2.5), so the form does
    not ask for a total budget on top of it.
    """
    from bot.text.parsed import parsed_message

    parsed = parsed_message(text)
    found = {name: getattr(parsed, name, None) for name in CONTRACT_SLOTS}
    found = {name: value for name, value in found.items() if value is not None and name not in updates}
    if found.get("hourly_cap") is not None and slots.get("budget") is None and "budget" not in updates:
        found["budget"] = "hourly_cap"
    before = previous if previous is not None else slots
    if _hourly_cap_moved(text, parsed, before, updates):
        # «اگه سقف رو ۳ دلار کنم» with an hourly cap and no total budget: "the cap" is the one the customer set,
        # moved, not a new total budget of 3 dollars (blind sets 1 and 2: a raised cap read as a budget).
        found.update(hourly_cap=parsed.budget_usd, budget_usd=None, budget="hourly_cap")
    if parsed.vat_said is not None and "hourly_cap" not in found and before.get("hourly_cap") is not None \
            and parsed.budget_usd in (None, before.get("hourly_cap")):
        # "KDV dahil demek istedim", «منظورم با مالیات بود», "1 dolar, KDV dahil" after an hourly cap of 1: the
        # qualifier (and an amount repeating the cap) belongs to the price just given, not to a new budget.
        found["hourly_cap_vat"] = parsed.vat_said
        if parsed.budget_usd is not None:
            # the amount was the cap restated: the budget stays what it was
            found.update(budget_usd=before.get("budget_usd"), budget=before.get("budget") or "hourly_cap")
    return found


def _hourly_cap_moved(text: Text, parsed: Any, before: Dict[Text, Any], updates: Dict[Text, Any]) -> bool:
    """A dollar amount said of "the cap" (no hourly word by it, no budget word in the message) while the customer's
    only price limit is an hourly cap."""
    from bot.text.topics import names_topic

    return (parsed.budget_usd is not None and parsed.hourly_cap is None and "hourly_cap" not in updates
            and before.get("hourly_cap") is not None and before.get("budget_usd") is None
            and names_topic(text, "price_cap") and not names_topic(text, "total_budget"))
