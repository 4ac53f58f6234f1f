"""Texts of the handoff outside the Rasa domain (knowledge/handoff.yml): staff labels, notifications, reply prefix."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from bot.knowledge import read_yaml, validate
from bot.knowledge.schemas import HandoffFile

KNOWLEDGE_FILE = Path(__file__).resolve().parents[2] / "knowledge" / "handoff.yml"
STAFF_LANGS = ("en", "fa", "tr")
CUSTOMER_LANGS = ("fa", "tr")


@lru_cache(maxsize=1)
def handoff_texts() -> Dict[str, Any]:
    """knowledge/handoff.yml as read, after its schema (bot/knowledge/schemas.py HandoffFile) found every language:
    a missing one fails at start-up, not in front of a customer."""
    data = read_yaml(KNOWLEDGE_FILE)
    validate(HandoffFile, data, KNOWLEDGE_FILE)
    return data


def staff_labels(lang: str) -> Dict[str, Any]:
    return handoff_texts()["staff"].get(lang) or handoff_texts()["staff"]["en"]


def reason_label(code: str, lang: str) -> str:
    names = handoff_texts()["priority_reasons"].get(code)
    return (names or {}).get(lang) or (names or {}).get("en") or code


def customer_text(key: str, lang: str) -> str:
    variants = handoff_texts()["customer"][key]
    return variants.get(lang) or variants["fa"]


def notification_text(key: str, lang: str) -> str:
    variants = handoff_texts()["notification"][key]
    return variants.get(lang) or variants["en"]


# ---------------------------------------------------------------------------------------------- values for staff
# The staff page and the staff notification show what the customer gave as a person would write it ("5000 dolar",
# "8 × B200, ZeRO-3, about 145 GB per GPU"), never slot markers ("usd") or raw JSON (issue 14 #7).

# Slots that only mark that a form question was answered, or that repeat another value.
_MARKER_SLOTS = ("model", "budget", "model_id", "model_size_b", "budget_usd", "budget_unlimited", "budget_period",
                 "hourly_cap", "hourly_cap_vat", "examples", "avg_tokens", "total_tokens", "epochs", "custom_arch",
                 "custom_arch_label")
_SHARDING = {"zero3": "ZeRO-3", "zero2": "ZeRO-2", "fsdp": "FSDP", "ddp": "DDP"}


def _number(value: Any, lang: str, decimals: int = 1) -> str:
    from bot.present.render import number

    return number(float(value), lang, decimals)


def _gb(value: Any, lang: str) -> str:
    from bot.present.render import gb

    return gb(float(value), lang)


def _usd(value: Any, lang: str) -> str:
    from bot.present.render import usd

    return usd(float(value), lang)


def _card_name(card_id: str) -> str:
    from bot.advisor.knowledge import load_knowledge

    try:
        return load_knowledge().gpu(card_id).name
    except KeyError:
        return str(card_id)


def _model_name(slots: Dict[str, Any]) -> Optional[str]:
    from bot.advisor.knowledge import load_knowledge

    if slots.get("custom_arch_label"):
        return str(slots["custom_arch_label"])
    if slots.get("model_id"):
        try:
            return load_knowledge().model(slots["model_id"]).display
        except KeyError:
            return str(slots["model_id"])
    if slots.get("model_size_b"):
        return f"{float(slots['model_size_b']):g}B"
    return str(slots["model"]) if slots.get("model") else None


def staff_value_lines(slots: Dict[str, Any], lang: str) -> List[Tuple[str, str]]:
    """(label, value) rows of what the customer told the bot, in the staff page's language."""
    labels = staff_labels(lang)
    fields, words = labels["fields"], labels["values"]
    rows: List[Tuple[str, str]] = []
    model = _model_name(slots)
    if model:
        rows.append((fields["model_display"], model))
    if slots.get("method") in ("full", "lora", "qlora"):
        rows.append((fields["method"], words[f"method_{slots['method']}"]))
    if slots.get("seq_len"):
        rows.append((fields["seq_len"], _number(slots["seq_len"], lang, 0)))
    if slots.get("budget_unlimited"):
        rows.append((fields["budget"], words["no_limit"]))
    elif slots.get("budget_usd"):
        period = slots.get("budget_period")
        key = {"month": "budget_month", "run": "budget_run"}.get(period, "budget")
        rows.append((fields["budget"], words[key].format(amount=_usd(slots["budget_usd"], lang))))
    if slots.get("hourly_cap"):
        vat = words["vat_included"] if slots.get("hourly_cap_vat") is True else words["vat_excluded"]
        rows.append((fields["hourly_cap"], words["hourly_cap"].format(amount=_usd(slots["hourly_cap"], lang), vat=vat)))
    if slots.get("total_tokens"):
        rows.append((fields["volume"], words["tokens"].format(n=_number(slots["total_tokens"], lang, 0))))
    elif slots.get("examples") and slots.get("avg_tokens"):
        rows.append((fields["volume"], words["volume"].format(
            examples=_number(slots["examples"], lang, 0), avg=_number(slots["avg_tokens"], lang, 0),
            epochs=_number(slots.get("epochs") or 1, lang, 1))))
    if slots.get("gpus"):
        rows.append((fields["gpus"], _number(slots["gpus"], lang, 0)))
    if slots.get("own_gpu"):
        rows.append((fields["own_gpu"], _own_gpu_name(slots["own_gpu"])))
    for key, value in slots.items():  # anything else the bot kept, named if it can be
        if key in _MARKER_SLOTS or key in ("method", "seq_len", "gpus", "own_gpu") or value in (None, "", [], {}):
            continue
        rows.append((fields.get(key, key), value if isinstance(value, str) else _number(value, lang)
                     if isinstance(value, (int, float)) and not isinstance(value, bool)
                     else words["answer_yes"] if value is True
                     else words["answer_no"] if value is False else str(value)))
    return rows


def _own_gpu_name(card_id: str) -> str:
    from bot.advisor.own_gpus import load_own_gpus

    return next((card.name for card in load_own_gpus() if card.id == card_id), str(card_id))


def multi_gpu_sentence(multi: Dict[str, Any], lang: str) -> str:
    words = staff_labels(lang)["values"]
    per_gpu = multi.get("per_gpu_gib")
    text = words["multi_gpu"].format(count=multi.get("count"), card=_card_name(multi.get("card", "")),
                                     sharding=_SHARDING.get(multi.get("sharding"), multi.get("sharding") or ""),
                                     per_gpu=_gb(per_gpu, lang) if per_gpu is not None else "?")
    return text if per_gpu is not None else text.rsplit(",", 1)[0].rsplit("،", 1)[0]


def staff_estimate_lines(estimate: Optional[Dict[str, Any]], lang: str) -> List[Tuple[str, str]]:
    """(label, value) rows of the estimate the customer saw."""
    if not estimate:
        return []
    labels = staff_labels(lang)
    fields, words = labels["fields"], labels["values"]
    rows: List[Tuple[str, str]] = []
    if estimate.get("model_display"):
        rows.append((fields["model_display"], str(estimate["model_display"])))
    if estimate.get("per_gpu_gib") is not None:
        rows.append((fields["per_gpu_gib"], words["memory"].format(
            total=_gb(estimate["per_gpu_gib"], lang), low=_gb(estimate.get("low_gib") or 0, lang),
            high=_gb(estimate.get("high_gib") or 0, lang))))
    if estimate.get("best_card"):
        price = estimate.get("best_price_usd_hour")
        rows.append((fields["best_card"], words["recommended"].format(
            card=_card_name(estimate["best_card"]), price=_usd(price, lang) if price is not None else "?")))
    if isinstance(estimate.get("multi_gpu"), dict):
        rows.append((fields["multi_gpu"], multi_gpu_sentence(estimate["multi_gpu"], lang)))
    if estimate.get("fitting_cards"):
        rows.append((fields["fitting_cards"], ", ".join(_card_name(c) for c in estimate["fitting_cards"])))
    if "needs_quote" in estimate:
        rows.append((fields["needs_quote"], words["answer_yes"] if estimate["needs_quote"] else words["answer_no"]))
    return rows


def staff_cards(cards: List[str], estimate: Optional[Dict[str, Any]], lang: str) -> List[str]:
    """The recommended GPUs as staff read them: card names, and the multi-GPU plan when one was proposed."""
    names = [_card_name(card) for card in cards]
    if estimate and isinstance(estimate.get("multi_gpu"), dict):
        multi = estimate["multi_gpu"]
        names.insert(0, f"{multi.get('count')} × {_card_name(multi.get('card', ''))}")
    return names


def staff_summary(slots: Dict[str, Any], estimate: Optional[Dict[str, Any]], lang: str) -> str:
    """One line for the staff notification: the gathered values and the recommendation."""
    rows = staff_value_lines(slots, lang)
    est = {label: value for label, value in staff_estimate_lines(estimate, lang)}
    fields = staff_labels(lang)["fields"]
    for key in ("best_card", "multi_gpu"):
        if fields[key] in est:
            rows.append((fields[key], est[fields[key]]))
    return "; ".join(f"{label}: {value}" for label, value in rows)
