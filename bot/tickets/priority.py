"""Ticket category and priority: the documented triage rules (docs/staff.md, "Priority rules").

Priority 1 (urgent) is answered first, 4 (low) last. Every rule that fires is recorded as a reason code so staff
see why a ticket is where it is.
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Tuple

# Business thresholds agreed with sales (docs/staff.md): a budget at or above this is a large order.
LARGE_BUDGET_USD = 2000.0
# Models this large need several GPUs for full fine-tuning and usually a custom quote (docs/staff.md).
LARGE_MODEL_B = 65.0


def _num(value: Any) -> Optional[float]:
    try:
        number = float(value) if value is not None and value != "" else None
    except (TypeError, ValueError):
        return None
    return number if number is None or math.isfinite(number) else None


def _accepted_budget(value: Any) -> Optional[float]:
    """The budget as the estimator accepts it (bot/advisor/advice.py, 0.01 to MAX_BUDGET_USD), else None: a budget
    the bot refused must not make a ticket urgent (issue 20, finding 6)."""
    from bot.advisor.advice import MAX_BUDGET_USD

    budget = _num(value)
    return budget if budget is not None and 0.01 <= budget <= MAX_BUDGET_USD else None


def is_multi_gpu(slots: Dict[str, Any], estimate: Optional[Dict[str, Any]]) -> bool:
    gpus = _num(slots.get("gpus"))
    return bool((estimate or {}).get("multi_gpu")) or (gpus is not None and gpus > 1)


def categorize(trigger: str, slots: Dict[str, Any], estimate: Optional[Dict[str, Any]]) -> str:
    """quote | multi-gpu | complaint | technical | other."""
    if trigger == "complaint":
        return "complaint"  # a billing or service problem (data/rules/dialogue.yml), whatever job was discussed
    if is_multi_gpu(slots, estimate):
        return "multi-gpu"
    if trigger == "request_quote" or (estimate or {}).get("needs_quote"):
        return "quote"
    if trigger == "fallback":
        return "technical"
    gathered = any(slots.get(k) not in (None, "") for k in ("model_id", "model_size_b", "method", "seq_len"))
    return "technical" if gathered or estimate else "other"


def prioritize(category: str, slots: Dict[str, Any], estimate: Optional[Dict[str, Any]]) -> Tuple[int, List[str]]:
    """(priority 1..4, reason codes). The highest priority any rule gives wins."""
    reasons: List[str] = []
    levels: List[int] = []
    method = (slots.get("method") or "").lower()
    budget = _accepted_budget(slots.get("budget_usd"))
    size = _num(slots.get("model_size_b"))
    multi = is_multi_gpu(slots, estimate)

    if multi and method == "full":
        levels.append(1)
        reasons.append("multi_gpu_full_finetune")
    if budget is not None and budget >= LARGE_BUDGET_USD:
        levels.append(1)
        reasons.append("large_budget")
    if slots.get("budget_unlimited") and multi:
        levels.append(1)
        reasons.append("unlimited_budget_multi_gpu")
    if category in ("quote", "multi-gpu", "complaint"):
        levels.append(2)
        reasons.append(f"category_{category.replace('-', '_')}")
    if size is not None and size >= LARGE_MODEL_B:
        levels.append(2)
        reasons.append("large_model")
    if category == "technical":
        levels.append(3)
        reasons.append("technical_question")
    if not levels:
        levels.append(4)
        reasons.append("general_request")
    return min(levels), reasons
