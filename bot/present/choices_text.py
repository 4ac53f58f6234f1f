"""Answers about options: two options side by side (a comparison) and the customer's own card."""
from __future__ import annotations

from typing import Dict, List, Optional

from bot.advisor.glossary import load_glossary
from bot.advisor.knowledge import Knowledge, load_knowledge
from bot.advisor.vat import price_with_vat
from bot.present.advice_text import variant_name
from bot.present.formatting import _check_lang, _list_line, _rtl_lines, duration, gb, money, number

# ---------------------------------------------------------------------------------------------- comparisons


def _compare_extra(option, lang: str, kb: Knowledge) -> str:
    if option.hours is not None and option.cost_usd_with_vat is not None:
        return kb.text("card_time", lang, duration=duration(option.hours, lang, kb),
                       cost_vat=money(option.cost_usd_with_vat, lang))
    if option.cost_per_million_tokens_usd is not None and option.status != "no_fit":
        return kb.text("card_per_million", lang, per_million=money(option.cost_per_million_tokens_usd, lang))
    return ""


def render_comparison(comparison, lang: str, kb: Optional[Knowledge] = None) -> str:
    """Two options side by side for the current job, then which one is cheaper and which needs less memory."""
    _check_lang(lang)
    kb = kb or load_knowledge()
    lines = [_compare_header(comparison, lang, kb)]
    names = {}
    for option in comparison.options:
        label = kb.text(f"method_{option.option}", lang) if comparison.kind == "method" else option.label
        names[option.option] = label
        lines.append(_list_line(_compare_line(comparison, option, label, lang, kb), lang))
    lines.extend(_compare_verdict(comparison, names, lang, kb))
    for what in comparison.assumed:
        lines.append(kb.text(f"compare_assumed_{what}", lang))
    if comparison.volume_tokens is None:
        lines.append(kb.text("volume_unknown", lang))
    return _rtl_lines("\n".join(lines), lang)


def _compare_header(comparison, lang: str, kb: Knowledge) -> str:
    a, b = comparison.options
    method = kb.text(f"method_{comparison.method}", lang) if comparison.method else ""
    seq_len = number(comparison.seq_len, lang, 0)
    if comparison.kind == "gpu":
        return kb.text("compare_header_gpu", lang, a=a.label, b=b.label, model=comparison.model_display,
                       method=method, seq_len=seq_len, need=gb(a.per_gpu_gib, lang), high=gb(a.high_gib, lang))
    if comparison.kind == "method":
        labels = [kb.text(f"method_{o.option}", lang) for o in (a, b)]
        return kb.text("compare_header_method", lang, a=labels[0], b=labels[1], model=comparison.model_display,
                       seq_len=seq_len)
    return kb.text("compare_header_model", lang, a=a.label, b=b.label, method=method, seq_len=seq_len)


def _compare_line(comparison, option, label: str, lang: str, kb: Knowledge) -> str:
    extra = _compare_extra(option, lang, kb)
    if comparison.kind == "gpu":
        return kb.text("compare_line_gpu", lang, label=label, vram=number(kb.gpu(option.card_id).vram_gb, lang, 0),
                       status=kb.text(f"status_{option.status}", lang), price=money(option.price_usd_hour, lang),
                       price_vat=money(option.price_usd_hour_with_vat, lang), extra=extra)
    if option.card_id is None:
        return kb.text("compare_line_none", lang, label=label, need=gb(option.per_gpu_gib, lang),
                       high=gb(option.high_gib, lang))
    mult = load_glossary().multiplication
    card = option.card_name if option.gpus == 1 else f"{option.gpus} {mult} {option.card_name}"
    return kb.text("compare_line", lang, label=label, need=gb(option.per_gpu_gib, lang),
                   high=gb(option.high_gib, lang), card=card, price=money(option.price_usd_hour, lang),
                   price_vat=money(option.price_usd_hour_with_vat, lang), extra=extra)


def _compare_verdict(comparison, names: Dict[str, str], lang: str, kb: Knowledge) -> List[str]:
    """Which option is cheaper (or the only one that fits) and which needs less memory."""
    a, b = comparison.options
    lines: List[str] = []
    usable = [o for o in comparison.options if o.status in ("fits", "tight")]
    if comparison.cheaper and len(usable) == 1:
        lines.append(kb.text("compare_only_one_fits", lang, name=names[comparison.cheaper]))
    elif comparison.cheaper:
        total = all(o.cost_usd_with_vat is not None for o in usable)
        lines.append(kb.text("compare_cheaper_total" if total else "compare_cheaper_per_token", lang,
                             name=names[comparison.cheaper]))
    if comparison.less_memory and comparison.kind != "gpu":
        small, large = sorted(comparison.options, key=lambda o: o.per_gpu_gib)
        lines.append(kb.text("compare_more_memory", lang, large=names[large.option], small=names[small.option],
                             ratio=number(large.per_gpu_gib / small.per_gpu_gib, lang, 1)))
    if comparison.kind == "method" and {a.option, b.option} == {"lora", "qlora"} \
            and comparison.cheaper == "lora" and comparison.less_memory == "qlora":
        lines.append(kb.text("compare_qlora_tradeoff", lang))
    return lines


# ---------------------------------------------------------------------------------------------- own card


def _own_cards_layout(result, lang: str, kb: Knowledge) -> str:
    """Several own cards (round 8): how the job is laid out on them and the memory per card."""
    estimate = result.advice.estimate
    key = "own_card_multi_ddp" if result.layout == "ddp" else "own_card_multi_sharded"
    return kb.text(key, lang, count=number(result.gpus, lang, 0), card=result.card.name,
                   need=gb(estimate.per_gpu_gib, lang), high=gb(estimate.high_gib, lang),
                   single=gb(result.single_gib or estimate.per_gpu_gib, lang))


def render_own_card(result, lang: str, kb: Optional[Knowledge] = None) -> str:
    """The customer's own card: the job on it (or what fits on it), then what CloudRUX offers."""
    _check_lang(lang)
    kb = kb or load_knowledge()
    card = result.card
    usable = number(card.vram_gb, lang, 0)
    lines: List[str] = []
    advice = result.advice
    if advice is None:
        lines.append(kb.text("own_card_capacity_header", lang, card=card.name, usable=usable))
        for capacity in result.capacity:
            method = kb.text(f"method_{capacity.method}", lang)
            if capacity.model_display:
                lines.append(_list_line(kb.text("own_card_capacity_line", lang, method=method,
                                                model=capacity.model_display, need=gb(capacity.per_gpu_gib, lang)),
                                        lang))
            else:
                lines.append(_list_line(kb.text("own_card_capacity_none", lang, method=method), lang))
    else:
        estimate = advice.estimate
        owned = card.name if result.gpus <= 1 else f"{number(result.gpus, lang, 0)} × {card.name}"
        lines.append(kb.text(f"own_card_job_{result.status}", lang, card=owned, usable=usable,
                             model=advice.preset.display, method=kb.text(f"method_{advice.plan.method}", lang),
                             seq_len=number(advice.plan.seq_len, lang, 0), need=gb(estimate.per_gpu_gib, lang),
                             low=gb(estimate.low_gib, lang), high=gb(estimate.high_gib, lang)))
        if result.gpus > 1:
            lines.append(_own_cards_layout(result, lang, kb))
        if result.fixes:
            lines.append(kb.text("own_card_fixes_header", lang))
            for fix in result.fixes:
                lines.append(_list_line(kb.text("own_card_fix_line", lang, variant=variant_name(fix, lang, kb),
                                                need=gb(fix.per_gpu_gib, lang), high=gb(fix.high_gib, lang)), lang))
    if not card.bf16:
        lines.append(kb.text("own_card_no_bf16", lang, card=card.name))
    if card.display:
        lines.append(kb.text("own_card_display_note", lang))
    if advice is None:
        lines.append(kb.text("own_card_ask_job", lang))
        cheapest = min(kb.gpus, key=lambda c: (c.price_usd_hour, -c.usable_gib))
        largest = max(kb.gpus, key=lambda c: c.usable_gib)
        lines.append(kb.text("own_card_cloud_general", lang, cheapest=cheapest.name,
                             price=money(cheapest.price_usd_hour, lang), largest=largest.name,
                             largest_vram=number(largest.vram_gb, lang, 0)))
    elif advice.recommendation is not None:
        rec = advice.recommendation.card
        lines.append(kb.text("own_card_cloud_job", lang, card=rec.name, vram=number(kb.gpu(rec.card_id).vram_gb, lang,
                                                                                    0),
                             price=money(rec.price_usd_hour, lang),
                             price_vat=money(price_with_vat(rec.price_usd_hour, advice.vat_rate, to_cent=True), lang)))
    elif advice.multi_gpu is not None:
        lines.append(kb.text("own_card_cloud_multi", lang, count=advice.multi_gpu.count, card=advice.multi_gpu.name))
    return _rtl_lines("\n".join(lines), lang)
