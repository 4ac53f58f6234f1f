"""Advice and errors as chat text in Persian, Turkish or English; every word comes from knowledge/texts.yml.

Split by answer type: bot/present/formatting.py (numbers, money, sizes, durations, line direction),
advice_text.py (the estimate and its closing hint), choices_text.py (comparisons, the customer's own card); this
module keeps the FAQ and error texts and is the one import for all of them. The answer stays well under Telegram's
4,096-character message limit.
"""
from __future__ import annotations

import re
from typing import Dict, Optional

from bot.advisor.knowledge import InputError, Knowledge, UnknownModel, load_knowledge
from bot.present.advice_text import (HINT_BUDGETS, MAX_PARTS, TOP_CARDS, render_advice, render_estimate_hint,
                                     variant_name)
from bot.present.choices_text import render_comparison, render_own_card
from bot.present.formatting import (RLM, _check_lang, duration, gb, gb_range, money, names_list, number, tokens,
                                    usd)

MESSAGE_LIMIT = 4096

__all__ = ["HINT_BUDGETS", "MAX_PARTS", "MESSAGE_LIMIT", "RLM", "TOP_CARDS", "duration", "faq_text", "gb", "gb_range",
           "money", "names_list", "number", "render_advice", "render_comparison", "render_error",
           "render_estimate_hint", "render_own_card", "tokens", "usd", "variant_name"]


# ---------------------------------------------------------------------------------------------- FAQ

DEFAULT_PUBLIC_URL = "http://localhost:8080"


def faq_text(topic: str, lang: str, kb: Optional[Knowledge] = None, public_url: Optional[str] = None) -> Optional[str]:
    """The FAQ answer with its {figures} computed (knowledge/faq_figures.yml); None for an unknown topic."""
    from bot.advisor.faq_figures import compute, load_figures

    kb = kb or load_knowledge()
    entry = kb.faq.get(topic)
    template = getattr(entry, lang, None) if entry is not None else None
    if not template:
        return None
    figures = load_figures()
    values: Dict[str, str] = {}
    for name, figure in figures.items():
        if "{" + name + "}" not in template:
            continue
        if figure.kind == "url":
            values[name] = (public_url or DEFAULT_PUBLIC_URL).rstrip("/") + (figure.path or "").replace("{lang}", lang)
        elif figure.kind in ("price", "hours_cost"):
            values[name] = money(compute(figure, kb), lang)
        elif figure.kind == "saving_pct":
            values[name] = number(round(compute(figure, kb)), lang, 0)
        elif figure.kind in ("speedup", "ratio"):
            values[name] = number(compute(figure, kb), lang, 1)
        else:
            values[name] = gb(compute(figure, kb), lang)
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), template)


# ---------------------------------------------------------------------------------------------- errors


def _param(value, lang: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if float(value).is_integer() and abs(value) >= 10000:
        return number(value, lang, 0)
    if float(value).is_integer():
        return str(int(value))  # ranks, sizes and hidden widths read better ungrouped (2048, not 2,048)
    return number(value, lang, 2)


def render_error(error: Exception, lang: str, kb: Optional[Knowledge] = None) -> str:
    """One clear sentence in the user's language for a bad input (any other error gets a generic apology)."""
    _check_lang(lang)
    kb = kb or load_knowledge()
    if isinstance(error, UnknownModel):
        key = "error_unknown_model" if error.suggestions else "error_unknown_model_none"
        names = {preset.id: preset.display for preset in kb.models}
        suggestions = kb.text("list_separator", lang).join(names.get(s, s) for s in error.suggestions)
        return kb.text(key, lang, query=error.query, suggestions=suggestions)
    if isinstance(error, InputError) and f"error_{error.key}" in kb.texts:
        params: Dict[str, str] = {k: _param(v, lang) for k, v in error.params.items()}
        params.setdefault("name", error.field)
        try:
            return kb.text(f"error_{error.key}", lang, **params)
        except (KeyError, IndexError):  # a placeholder the error did not carry: say which field instead
            return kb.text("error_bad_value", lang, name=error.field)
    return kb.text("error_internal", lang)
