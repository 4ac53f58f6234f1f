"""Sentences of the dialogue built from the slots: what was noted, what is missing, the job line after an FAQ.

The wording lives in knowledge/dialogue.yml (fa and tr for every key, checked on load). Pure functions of the slot
values, so tests/test_actions.py can check them without a server.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional

from bot.knowledge import BilingualText, parse_file
from bot.knowledge.schemas import DialogueTexts

ROOT = Path(__file__).resolve().parents[1]
DIALOGUE_TEXTS = ROOT / "knowledge" / "dialogue.yml"
LANGS = ("fa", "tr")
FORM_SLOTS = ("model", "method", "seq_len", "budget")


Text = BilingualText  # the one text model of the knowledge layer (bot/knowledge/texts.py)


@lru_cache(maxsize=1)
def dialogue_texts() -> Dict[str, Text]:
    """knowledge/dialogue.yml by key (schema: bot/knowledge/schemas.py DialogueTexts)."""
    return parse_file(DialogueTexts, DIALOGUE_TEXTS).__root__


def text(key: str, lang: str, **params: Any) -> str:
    entry = dialogue_texts()[key]
    return getattr(entry, lang if lang in LANGS else "fa").format(**params)


def join(items: List[str], lang: str) -> str:
    if len(items) <= 1:
        return "".join(items)
    return text("list_separator", lang).join(items[:-1]) + text("list_and", lang) + items[-1]


def _num(value: Any) -> Optional[float]:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None


def model_label(slots: Mapping[str, Any], lang: str) -> Optional[str]:
    from bot.advisor.knowledge import load_knowledge
    from bot.present.render import number

    if slots.get("custom_arch_label"):
        return str(slots["custom_arch_label"])
    if slots.get("model_unrecognised"):
        from actions.model_notes import display_name

        # the name as typed ("Falcon3 10B", never "a 10B model"); the estimate says which stand-in it uses
        return display_name(str(slots["model_unrecognised"]))
    if slots.get("model_id"):
        try:
            return load_knowledge().model(str(slots["model_id"])).display
        except (KeyError, ValueError):
            return str(slots["model_id"])
    size = _num(slots.get("model_size_b"))
    return text("value_model_size", lang, size=number(size, lang, 1)) if size else None


def method_label(method: Optional[str], lang: str) -> Optional[str]:
    from bot.advisor.knowledge import load_knowledge

    if method not in ("full", "lora", "qlora"):
        return None
    return load_knowledge().text(f"method_{method}", lang)


def noted_values(slots: Mapping[str, Any], lang: str) -> List[str]:
    """The job values known so far, as the customer would read them back."""
    from bot.present.render import money, number

    values: List[str] = []
    model = model_label(slots, lang)
    if model:
        values.append(model)
    method = method_label(slots.get("method"), lang)
    if method:
        values.append(method)
    seq_len = _num(slots.get("seq_len"))
    if seq_len:
        values.append(text("value_seq_len", lang, n=number(seq_len, lang, 0)))
    budget = _num(slots.get("budget_usd"))
    if slots.get("budget_unlimited"):
        values.append(text("value_no_budget", lang))
    elif budget:
        period = slots.get("budget_period")
        key = {"month": "value_budget_month", "run": "value_budget_run"}.get(str(period), "value_budget")
        values.append(text(key, lang, amount=money(budget, lang, whole_if_round=True)))
    cap = _num(slots.get("hourly_cap"))
    if cap:
        values.append(text("value_hourly_cap", lang, amount=money(cap, lang, whole_if_round=True)))
    return values


def missing_slots(slots: Mapping[str, Any]) -> List[str]:
    return [name for name in FORM_SLOTS if slots.get(name) is None]


def noted_message(slots: Mapping[str, Any], lang: str) -> Optional[str]:
    """ "Noted: Llama 3.1 8B, QLoRA, 25 dollars budget. Only the sequence length is missing." (None: nothing known)"""
    values = noted_values(slots, lang)
    if not values:
        return None
    message = text("noted", lang, values=join(values, lang))
    missing = missing_slots(slots)
    if missing:
        message += " " + text("missing", lang, missing=join([text(f"missing_{m}", lang) for m in missing], lang))
    return message
