"""Advice and errors as chat text in Persian, Turkish or English; every word comes from knowledge/texts.yml.

Numbers are written with ASCII digits (Turkish with its decimal comma); GPU and model names stay in Latin script.
The answer stays well under Telegram's 4,096-character message limit.
"""
from __future__ import annotations

import math
from typing import Dict, List, Optional

from bot.advisor.knowledge import LANGS, InputError, Knowledge, UnknownModel, load_knowledge

MESSAGE_LIMIT = 4096
TOP_CARDS = 3
MAX_PARTS = 3


def _check_lang(lang: str) -> str:
    if lang not in LANGS:
        raise ValueError(f"lang: expected one of {', '.join(LANGS)}, got {lang!r}")
    return lang


# ---------------------------------------------------------------------------------------------- numbers


def number(value: float, lang: str, decimals: int = 1) -> str:
    """ASCII digits, thousands grouped, trailing zeros of the fraction dropped; Turkish uses a decimal comma."""
    text = f"{value:,.{decimals}f}"
    if decimals:
        text = text.rstrip("0").rstrip(".")
    if lang == "tr":
        text = text.replace(",", "\0").replace(".", ",").replace("\0", ".")
    return text


def money(value: float, lang: str, *, whole_if_round: bool = False) -> str:
    """Two decimals below $100, whole dollars above (prices are starting prices, not invoices)."""
    if value >= 100 or (whole_if_round and float(value).is_integer()):
        return number(round(value), lang, 0)
    text = f"{value:,.2f}"
    if lang == "tr":
        text = text.replace(",", "\0").replace(".", ",").replace("\0", ".")
    return text


def gb(value: float, lang: str) -> str:
    return number(value, lang, 0 if value >= 100 else 1)


def tokens(value: float, lang: str, kb: Knowledge) -> str:
    for scale, key in ((1e9, "count_billion"), (1e6, "count_million"), (1e3, "count_thousand")):
        if value >= scale:
            return kb.text(key, lang, n=number(value / scale, lang, 1))
    return number(value, lang, 0)


def duration(hours: float, lang: str, kb: Knowledge) -> str:
    if hours < 1:
        return kb.text("duration_minutes", lang, n=number(max(1, math.ceil(hours * 60)), lang, 0))
    if hours < 48:
        return kb.text("duration_hours", lang, n=number(hours, lang, 1))
    return kb.text("duration_days", lang, n=number(hours / 24, lang, 1))


# ---------------------------------------------------------------------------------------------- advice


def _parts(advice, lang: str, kb: Knowledge) -> str:
    components = advice.estimate.components_gib
    largest = sorted(((v, k) for k, v in components.items() if v >= 0.05), reverse=True)[:MAX_PARTS]
    items = [kb.text("part_item", lang, part=kb.text(f"part_{name}", lang), value=gb(value, lang))
             for value, name in largest]
    return kb.text("list_separator", lang).join(items)


def _defaults(advice, lang: str, kb: Knowledge) -> Optional[str]:
    items: List[str] = []
    plan = advice.plan
    for code in advice.assumptions:
        if code == "default_lora":
            items.append(kb.text("assume_default_lora", lang, rank=plan.lora.rank))
        elif code == "multi_gpu_zero3":
            items.append(kb.text("assume_multi_gpu_zero3", lang, gpus=plan.gpus))
        elif f"assume_{code}" in kb.texts:
            items.append(kb.text(f"assume_{code}", lang))
    if plan.lora is not None and "default_lora" not in advice.assumptions:
        items.insert(0, kb.text("assume_lora_rank", lang, rank=plan.lora.rank))
    if not items:
        return None
    return kb.text("defaults_line", lang, items=kb.text("list_separator", lang).join(items))


def _card_line(rank: int, card, gpu, lang: str, kb: Knowledge, volume_known: bool) -> str:
    extra = ""
    if card.status == "tight":
        extra += kb.text("card_tight", lang)
    if volume_known and card.hours is not None:
        extra += kb.text("card_time", lang, duration=duration(card.hours, lang, kb),
                         cost_vat=money(card.cost_usd_with_vat, lang))
    elif card.cost_per_million_tokens_usd is not None:
        extra += kb.text("card_per_million", lang, per_million=money(card.cost_per_million_tokens_usd, lang))
    return kb.text("card_line", lang, rank=rank, name=card.name, vram=number(gpu.vram_gb, lang, 0),
                   price=money(card.price_usd_hour, lang), price_vat=money(card.price_usd_hour_with_vat, lang),
                   extra=extra)


def _multi_line(advice, lang: str, kb: Knowledge) -> str:
    multi = advice.multi_gpu
    time = ""
    if multi.hours is not None:
        time = kb.text("card_time", lang, duration=duration(multi.hours, lang, kb),
                       cost_vat=money(multi.cost_usd_with_vat, lang))
    return kb.text("multi_gpu_line", lang, count=multi.count, name=multi.name, per_gpu=gb(multi.per_gpu_gib, lang),
                   price=money(multi.price_usd_hour_total, lang),
                   price_vat=money(multi.price_usd_hour_total_with_vat, lang), time=time)


def _budget_line(advice, lang: str, kb: Knowledge) -> Optional[str]:
    verdict = advice.budget_verdict
    if verdict is None:
        return None
    names = {card.card_id: card.name for card in advice.cards}
    if advice.multi_gpu is not None and not advice.fitting_cards:
        names[advice.multi_gpu.card_id] = f"{advice.multi_gpu.count}x {advice.multi_gpu.name}"
    if verdict.verdict == "unlimited":
        fitting = advice.fitting_cards
        if not fitting:
            multi = advice.multi_gpu
            return kb.text("budget_unlimited", lang, card=names[multi.card_id]) if multi else None
        fastest = max(fitting, key=lambda c: c.tokens_per_second or 0)
        return kb.text("budget_unlimited", lang, card=fastest.name)
    budget = money(verdict.budget_usd, lang, whole_if_round=True)
    if verdict.verdict == "fits":
        cheapest = names.get(verdict.cheapest_card, verdict.cheapest_card)
        cost = money(verdict.cheapest_cost_usd_with_vat, lang)
        options = len(advice.fitting_cards)
        if not options:  # no single card: the multi-GPU plan is the one option
            return kb.text("budget_fits_multi", lang, budget=budget, cost=cost)
        if len(verdict.cards_within) == options:
            return kb.text("budget_fits_all", lang, budget=budget, card=cheapest, cost=cost)
        return kb.text("budget_fits", lang, budget=budget, count=len(verdict.cards_within), total=options,
                       card=cheapest, cost=cost)
    if verdict.verdict == "over":
        bought = verdict.tokens_by_card.get(verdict.cheapest_card, 0)
        return kb.text("budget_over", lang, budget=budget, card=names.get(verdict.cheapest_card, verdict.cheapest_card),
                       cost=money(verdict.cheapest_cost_usd_with_vat, lang), tokens=tokens(bought, lang, kb))
    if not verdict.tokens_by_card:
        return None
    card_id, bought = max(verdict.tokens_by_card.items(), key=lambda item: item[1])
    return kb.text("budget_volume_unknown", lang, budget=budget, card=names.get(card_id, card_id),
                   tokens=tokens(bought, lang, kb))


def render_advice(advice, lang: str, kb: Optional[Knowledge] = None, *, quote_offer: bool = True) -> str:
    """The whole chat answer for one estimate.

    ``quote_offer=False`` leaves out the closing quote offer when the caller asks for it separately (with buttons).
    """
    _check_lang(lang)
    kb = kb or load_knowledge()
    plan, estimate = advice.plan, advice.estimate
    gpus = {card.id: card for card in kb.gpus}
    lines: List[str] = []
    method = kb.text(f"method_{plan.method}", lang)
    header_key = "header_gpus" if plan.gpus > 1 else "header"
    lines.append(kb.text(header_key, lang, model=advice.preset.display, method=method,
                         seq_len=plan.seq_len, gpus=plan.gpus))
    if advice.by_size:
        size = advice.requested_size_b or advice.preset.size_b
        exact = math.isclose(size, advice.preset.size_b, rel_tol=0.05)
        lines.append(kb.text("preset_by_size" if exact else "preset_by_size_nearest", lang,
                             size=number(size, lang, 1), model=advice.preset.display))
    # A job that fits no card is not "per GPU" yet: it is what one GPU would have to hold.
    memory_key = "memory_line" if advice.fitting_cards or plan.gpus > 1 else "memory_line_one_gpu"
    lines.append(kb.text(memory_key, lang, total=gb(estimate.per_gpu_gib, lang), low=gb(estimate.low_gib, lang),
                         high=gb(estimate.high_gib, lang)))
    lines.append(kb.text("parts_line", lang, parts=_parts(advice, lang, kb)))
    defaults = _defaults(advice, lang, kb)
    if defaults:
        lines.append(defaults)
    if advice.pure_bf16_estimate is not None:
        lines.append(kb.text("full_bf16_note", lang, bf16=gb(advice.pure_bf16_estimate.per_gpu_gib, lang)))

    volume_known = advice.volume_tokens is not None
    fitting = advice.fitting_cards
    lines.append("")
    if fitting:
        lines.append(kb.text("cards_header", lang))
        for rank, card in enumerate(fitting[:TOP_CARDS], start=1):
            lines.append(_card_line(rank, card, gpus[card.card_id], lang, kb, volume_known))
        value = advice.best_value
        if value is not None and advice.best is not None and value.card_id != advice.best.card_id:
            if volume_known and value.hours is not None:
                lines.append(kb.text("best_value_time", lang, name=value.name, duration=duration(value.hours, lang, kb),
                                     cost_vat=money(value.cost_usd_with_vat, lang)))
            else:
                lines.append(kb.text("best_value_per_million", lang, name=value.name,
                                     per_million=money(value.cost_per_million_tokens_usd, lang)))
        if advice.multi_gpu is not None:
            lines.append(kb.text("only_tight", lang))
            lines.append(_multi_line(advice, lang, kb))
    else:
        largest = max(kb.gpus, key=lambda card: card.usable_gib)
        lines.append(kb.text("no_single_card", lang, total=gb(estimate.per_gpu_gib, lang),
                             largest=number(largest.vram_gb, lang, 0)))
        if advice.multi_gpu is not None:
            lines.append(_multi_line(advice, lang, kb))
        else:
            lines.append(kb.text("multi_gpu_none", lang, count=max(advice.multi_gpu_counts_tried or [plan.gpus])))
    if advice.needs_quote and quote_offer:
        lines.append(kb.text("quote_offer", lang))

    lines.append("")
    if volume_known:
        lines.append(kb.text("volume_line", lang, tokens=tokens(advice.volume_tokens, lang, kb)))
    budget = _budget_line(advice, lang, kb)
    if budget:
        lines.append(budget)
    if not volume_known and fitting:
        lines.append(kb.text("volume_unknown", lang))
    lines.append(kb.text("test_first", lang))
    text = "\n".join(lines).replace("\n\n\n", "\n\n").strip()
    return text


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
