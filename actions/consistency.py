"""Advice that does not flip (issue 21 #3): a recalculation of the same job keeps the card recommended before when
the new favourite is better only by less than the estimate's own error, and says so.

Customers saw the card change between two turns for the same model and method on a 9 % cost difference: the
throughput behind total cost and cost per token rests on utilisation (MFU) figures that bot/advisor/throughput.py
itself marks as assumptions for several cards, so a difference this small says nothing. The card changes when the
job changes so much that the previous card no longer holds it comfortably, or wins by more than the margin.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

# Cost differences below this share are inside the throughput estimate's error (its MFU figures are assumptions for
# several cards, bot/advisor/throughput.py); 15 % covers the 9 % flips the language reviews reported.
HYSTERESIS = 0.15
# Recommendation reasons that compare estimated costs (bot.advisor.recommend.recommend): only these can flip on
# estimate noise; the hourly-price and hourly-cap choices do not depend on the throughput estimate.
COST_REASONS = {"lowest_total_cost": "cost_usd_with_vat", "lowest_per_token": "cost_per_million_tokens_usd"}


def _metric(card: Any, field: str) -> Optional[float]:
    value = getattr(card, field, None)
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def steady_advice(advice: Any, previous: Optional[Dict[str, Any]]) -> Tuple[Any, Optional[Dict[str, Any]]]:
    """(advice, note values): the advice with the previous card kept as the recommendation when the change is
    inside the margin, and {card, other, pct} for the line that says so; (advice, None) otherwise."""
    choice = getattr(advice, "recommendation", None)
    if not isinstance(previous, dict) or choice is None or choice.reason not in COST_REASONS:
        return advice, None
    kept_id = previous.get("best_card")
    if not kept_id or kept_id == choice.card.card_id or previous.get("model_display") != advice.preset.display:
        return advice, None
    kept = next((card for card in advice.cards if card.card_id == kept_id and card.status == "fits"), None)
    field = COST_REASONS[choice.reason]
    new_cost, kept_cost = _metric(choice.card, field), _metric(kept, field) if kept else None
    if kept is None or new_cost is None or kept_cost is None or kept_cost > new_cost * (1 + HYSTERESIS):
        return advice, None
    steady = advice.copy(update={"recommendation": choice.copy(update={"card": kept, "faster": None})})
    pct = max(1, round((kept_cost / new_cost - 1) * 100))
    return steady, {"card": kept.name, "other": choice.card.name, "pct": pct}
