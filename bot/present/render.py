"""Advice and errors as chat text in Persian, Turkish or English; every word comes from knowledge/texts.yml.

Numbers and money follow knowledge/glossary.yml (ASCII digits; Persian without thousands separators, Turkish with a
decimal comma and a thousands dot; "X دلار" / "X dolar"); GPU and model names stay in Latin script.
The answer stays well under Telegram's 4,096-character message limit.
"""
from __future__ import annotations

import math
import re
from typing import Dict, List, Optional

from bot.advisor.glossary import load_glossary
from bot.advisor.knowledge import LANGS, InputError, Knowledge, UnknownModel, load_knowledge
from bot.present import stack_lines

MESSAGE_LIMIT = 4096
TOP_CARDS = 4
MAX_PARTS = 3


def _check_lang(lang: str) -> str:
    if lang not in LANGS:
        raise ValueError(f"lang: expected one of {', '.join(LANGS)}, got {lang!r}")
    return lang


# ---------------------------------------------------------------------------------------------- numbers

# Persian list lines start with a digit or a bullet followed by Latin text; a chat client that sets the direction
# from the first strong character (dir="auto") would lay them out left to right. A right-to-left mark first keeps
# them right to left (fa review §7).
RLM = "\u200f"


def number(value: float, lang: str, decimals: int = 1) -> str:
    """Digits as knowledge/glossary.yml says: Persian without a thousands separator, Turkish with a decimal comma
    and a thousands dot from four digits; trailing zeros of the fraction dropped."""
    style = load_glossary().style(lang)
    text = f"{abs(value):.{decimals}f}"
    if decimals:
        text = text.rstrip("0").rstrip(".")
    whole, _, fraction = text.partition(".")
    if style.group_from_digits and len(whole) >= style.group_from_digits:
        groups = []
        while len(whole) > 3:
            whole, groups = whole[:-3], [whole[-3:]] + groups
        whole = style.thousands.join([whole] + groups)
    sign = "-" if value < 0 and text.strip("0.") else ""
    return sign + whole + (style.decimal + fraction if fraction else "")


def money(value: float, lang: str, *, whole_if_round: bool = False) -> str:
    """The amount only (the template carries the currency word): two decimals below 100, whole dollars above."""
    if value >= 100 or (whole_if_round and float(value).is_integer()):
        return number(round(value), lang, 0)
    return f"{value:.2f}".replace(".", load_glossary().style(lang).decimal)


def usd(value: float, lang: str, *, whole_if_round: bool = True) -> str:
    """An amount with its currency the glossary's way: "0.74 دلار", "0,74 dolar", "$0.74"."""
    return load_glossary().currency.get(lang, "${amount}").replace(
        "{amount}", money(value, lang, whole_if_round=whole_if_round))


def gb(value: float, lang: str) -> str:
    return number(value, lang, 0 if value >= 100 else 1)


def gb_range(low: float, high: float, lang: str) -> str:
    return load_glossary().style(lang).range.format(low=gb(low, lang), high=gb(high, lang))


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


def names_list(names: List[str], lang: str, kb: Knowledge) -> str:
    return kb.text("list_separator", lang).join(names)


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


def _list_line(text: str, lang: str) -> str:
    return RLM + text if lang == "fa" else text


def _rtl_lines(text: str, lang: str) -> str:
    """Persian: a right-to-left mark before every line whose first character is Latin, a digit or a bullet
    ("L4، RTX 4090 ... هم جا می‌شوند"), so that dir="auto" chat clients keep it right to left (fa review §7)."""
    if lang != "fa":
        return text
    return "\n".join(RLM + line if line and line[0] != RLM and (line[0].isascii() or line[0] == "•") else line
                     for line in text.split("\n"))


def _card_line(rank: int, card, gpu, lang: str, kb: Knowledge, volume_known: bool) -> str:
    extra = ""
    if card.status == "tight":
        extra += kb.text("card_tight", lang, high=gb(card.high_gib or card.need_gib, lang))
    if volume_known and card.hours is not None:
        extra += kb.text("card_time", lang, duration=duration(card.hours, lang, kb),
                         cost_vat=money(card.cost_usd_with_vat, lang))
    elif card.cost_per_million_tokens_usd is not None:
        extra += kb.text("card_per_million", lang, per_million=money(card.cost_per_million_tokens_usd, lang))
    return _list_line(kb.text("card_line", lang, rank=rank, name=card.name, vram=number(gpu.vram_gb, lang, 0),
                              price=money(card.price_usd_hour, lang),
                              price_vat=money(card.price_usd_hour_with_vat, lang), extra=extra), lang)


def _vat_price(price: float, vat_rate: float) -> float:
    """The hourly price with VAT as the customer sees it per GPU, rounded to the cent before any multiplication so
    that n GPUs cost exactly n x the per-card price shown elsewhere (fa review §7: 8 x 11.99 = 95.92)."""
    return round(price * (1 + vat_rate), 2)


def _multi_prices(multi, advice) -> Dict[str, float]:
    per_card = multi.price_usd_hour_total / multi.count
    return {"price": multi.price_usd_hour_total, "price_vat": multi.count * _vat_price(per_card, advice.vat_rate)}


def _speedup(fast, slow, lang: str) -> str:
    ratio = (fast.tokens_per_second or 0) / max(slow.tokens_per_second or 1e-9, 1e-9)
    return number(ratio, lang, 0 if ratio >= 3 else 1)


def _lead(advice, lang: str, kb: Knowledge) -> List[str]:
    """The opening: one recommended card with its price and why (or the multi-GPU plan), then a faster option."""
    gpus = {card.id: card for card in kb.gpus}
    choice = advice.recommendation
    estimate = advice.estimate
    largest = max(kb.gpus, key=lambda card: card.usable_gib)
    if choice is None:
        multi = advice.multi_gpu
        if multi is None:
            return [kb.text("rec_none", lang, total=gb(estimate.per_gpu_gib, lang),
                            largest=number(largest.vram_gb, lang, 0),
                            count=max(advice.multi_gpu_counts_tried or [advice.plan.gpus]))]
        time = ""
        if multi.hours is not None:
            time = kb.text("card_time", lang, duration=duration(multi.hours, lang, kb),
                           cost_vat=money(multi.cost_usd_with_vat, lang))
        prices = _multi_prices(multi, advice)
        return [kb.text("rec_multi_gpu", lang, total=gb(estimate.per_gpu_gib, lang),
                        largest=number(largest.vram_gb, lang, 0), count=multi.count, name=multi.name,
                        per_gpu=gb(multi.per_gpu_gib, lang), price=money(prices["price"], lang),
                        price_vat=money(prices["price_vat"], lang), time=time)]
    card = choice.card
    values = dict(card=card.name, vram=number(gpus[card.card_id].vram_gb, lang, 0),
                  price=money(card.price_usd_hour * card.gpus, lang),
                  price_vat=money(_vat_price(card.price_usd_hour, advice.vat_rate) * card.gpus, lang))
    if choice.reason == "lowest_total_cost":
        values.update(duration=duration(card.hours, lang, kb), cost_vat=money(card.cost_usd_with_vat, lang))
    if choice.reason == "lowest_per_token":
        values.update(per_million=money(card.cost_per_million_tokens_usd, lang))
    lines = [kb.text(f"rec_{choice.reason}", lang, **values)]
    if card.status == "tight" and choice.reason not in ("cheapest_tight", "tight_under_cap"):
        lines.append(kb.text("rec_tight_note", lang))
    faster = choice.faster
    if advice.budget is not None and advice.budget.tiny:
        faster = None  # a dearer, faster card is no advice for a budget that buys minutes
    if faster is not None:
        if choice.reason == "lowest_per_token":
            lines.append(kb.text("faster_unlimited", lang, name=faster.name, price=money(faster.price_usd_hour, lang),
                                 speedup=_speedup(faster, card, lang)))
        elif choice.reason == "lowest_total_cost" and faster.hours is not None:
            lines.append(kb.text("faster_total", lang, name=faster.name, duration=duration(faster.hours, lang, kb),
                                 cost_vat=money(faster.cost_usd_with_vat, lang)))
        elif faster.cost_per_million_tokens_usd is not None:
            lines.append(kb.text("faster_per_token", lang, name=faster.name, price=money(faster.price_usd_hour, lang),
                                 speedup=_speedup(faster, card, lang),
                                 per_million=money(faster.cost_per_million_tokens_usd, lang),
                                 rec_per_million=money(card.cost_per_million_tokens_usd, lang)))
    return lines


def _alternative_line(alt, advice, lang: str, kb: Knowledge) -> str:
    extra = ""
    if alt.cost_usd_with_vat is not None:
        extra += kb.text("alternative_cost", lang, cost_vat=money(alt.cost_usd_with_vat, lang))
    if alt.kind == "multi_gpu":
        per_card = alt.price_usd_hour / alt.count
        return _list_line(kb.text("alternative_multi_line", lang, count=alt.count, card=alt.card_name,
                                  need=gb(alt.per_gpu_gib, lang), price=money(alt.price_usd_hour, lang),
                                  price_vat=money(alt.count * _vat_price(per_card, advice.vat_rate), lang),
                                  extra=extra), lang)
    if alt.status == "tight":
        extra += kb.text("alternative_tight", lang)
    if alt.kind == "bf16":
        extra += kb.text("alternative_stability", lang)
    return _list_line(kb.text("alternative_line", lang, variant=variant_name(alt, lang, kb),
                              need=gb(alt.per_gpu_gib, lang), high=gb(alt.high_gib, lang), card=alt.card_name,
                              price=money(alt.price_usd_hour, lang),
                              price_vat=money(_vat_price(alt.price_usd_hour, advice.vat_rate), lang),
                              extra=extra), lang)


def variant_name(alt, lang: str, kb: Knowledge) -> str:
    if alt.kind == "shorter_seq":
        return kb.text("variant_shorter_seq", lang, seq_len=number(alt.seq_len, lang, 0))
    if alt.kind == "smaller_model":
        return kb.text("variant_smaller_model", lang, model=alt.model_display)
    return kb.text(f"variant_{alt.kind}", lang)


def _cap_lines(advice, lang: str, kb: Knowledge) -> List[str]:
    cap = advice.cap
    if cap is None:
        return []
    if cap.includes_vat:
        lines = [kb.text("cap_line_vat", lang, cap=money(cap.cap_usd, lang, whole_if_round=True),
                         cap_excl=money(cap.cap_usd_excl_vat, lang))]
    else:
        lines = [kb.text("cap_line_no_vat", lang, cap=money(cap.cap_usd, lang, whole_if_round=True))]
    if cap.under_cap:
        lines.append(kb.text("cap_under", lang, names=names_list([c.name for c in cap.under_cap], lang, kb)))
        return lines
    if cap.cheapest_fitting is not None:
        card = cap.cheapest_fitting
        lines.append(kb.text("cap_none", lang, card=card.name, price=money(card.price_usd_hour, lang),
                             price_vat=money(_vat_price(card.price_usd_hour, advice.vat_rate), lang)))
    else:
        lines.append(kb.text("cap_none_no_card", lang))
    if cap.fixes:
        lines.append(kb.text("cap_fixes_header", lang))
        lines.extend(_alternative_line(alt, advice, lang, kb) for alt in cap.fixes)
    else:
        lines.append(kb.text("cap_no_fix", lang))
    return lines


def _budget_lines(advice, lang: str, kb: Knowledge) -> List[str]:
    plan = advice.budget
    if plan is None:
        return []
    budget = money(plan.budget_usd, lang, whole_if_round=True)
    card = plan.card_name if plan.gpus == 1 else f"{plan.gpus} {load_glossary().multiplication} {plan.card_name}"
    label = kb.text(f"budget_label_{plan.period}", lang, budget=budget)
    lines: List[str] = []
    alt = advice.budget_alternative
    if plan.tiny:
        lines.append(kb.text("budget_tiny", lang, budget=budget, duration=duration(plan.hours, lang, kb), card=card,
                             tokens=tokens(plan.tokens, lang, kb)))
        if alt is not None:
            hours = plan.budget_usd / _vat_price(alt.price_usd_hour, advice.vat_rate)
            lines.append(kb.text("budget_tiny_alternative", lang, variant=variant_name(alt, lang, kb),
                                 card=alt.card_name, price_vat=money(_vat_price(alt.price_usd_hour, advice.vat_rate), lang),
                                 duration=duration(hours, lang, kb)))
        return lines
    if plan.missing_usd:
        lines.append(kb.text("budget_over", lang, card=card, cost=money(plan.volume_cost_usd_with_vat, lang),
                             missing=money(plan.missing_usd, lang), budget=budget,
                             share=number(max(1, math.floor(plan.volume_share * 100)), lang, 0)))
        if alt is not None and alt.cost_usd_with_vat is not None:
            lines.append(kb.text("budget_over_fix_variant", lang, variant=variant_name(alt, lang, kb),
                                 card=alt.card_name, cost=money(alt.cost_usd_with_vat, lang)))
        else:
            lines.append(kb.text("budget_over_fix_volume", lang,
                                 share=number(max(1, math.floor(plan.volume_share * 100)), lang, 0)))
        return lines
    if plan.volume_cost_usd_with_vat is not None:
        choice = advice.recommendation
        hours = choice.card.hours if choice is not None and choice.card.hours is not None else plan.hours
        if plan.period == "month" and plan.volume_cost_usd_with_vat > 0:
            runs = plan.budget_usd / plan.volume_cost_usd_with_vat
            lines.append(kb.text("budget_runs_month", lang, budget=budget, runs=number(runs, lang, 0 if runs >= 10 else 1),
                                 cost=money(plan.volume_cost_usd_with_vat, lang), card=card))
        else:
            lines.append(kb.text("budget_fits_volume", lang, label=label, card=card, duration=duration(hours, lang, kb),
                                 cost=money(plan.volume_cost_usd_with_vat, lang)))
        return lines
    lines.append(kb.text(f"budget_hours_{plan.period}", lang, budget=budget, duration=duration(plan.hours, lang, kb),
                         card=card, tokens=tokens(plan.tokens, lang, kb)))
    return lines


def _change_lines(advice, previous: Optional[dict], lang: str, kb: Knowledge) -> List[str]:
    """What a recalculation changed against the previous estimate (its estimate_summary): the memory, and which
    cards dropped out or came in (fa review §3.9: "15.3 becomes 34.6 GB, and the 24 GB cards drop out")."""
    if not isinstance(previous, dict) or not isinstance(previous.get("per_gpu_gib"), (int, float)):
        return []
    before, after = float(previous["per_gpu_gib"]), advice.estimate.per_gpu_gib
    if abs(after - before) < 0.05 * max(before, after, 1e-9):
        return []
    lines = [kb.text("change_more" if after > before else "change_less", lang, before=gb(before, lang),
                     after=gb(after, lang))]
    names = {card.id: card.name for card in kb.gpus}
    was = set(previous.get("fitting_cards") or [])
    now = {card.card_id for card in advice.fitting_cards}
    separator = kb.text("list_separator", lang)
    dropped = [names[c] for c in (card.id for card in kb.gpus) if c in was - now]
    added = [names[c] for c in (card.id for card in kb.gpus) if c in now - was]
    if dropped:
        lines.append(kb.text("change_dropped", lang, names=separator.join(dropped)))
    if added:
        lines.append(kb.text("change_added", lang, names=separator.join(added)))
    return lines


def render_advice(advice, lang: str, kb: Optional[Knowledge] = None, *, quote_offer: bool = True,
                  first: bool = True, previous: Optional[dict] = None) -> str:
    """The whole chat answer for one estimate: the recommendation first, then the estimate, the shortlist,
    cheaper variants, the hourly cap and what the budget buys.

    ``quote_offer=False`` leaves out the closing quote offer when the caller asks for it separately (with buttons).
    ``first=False`` (a recalculation in the same conversation) leaves out what was said with the first estimate:
    the English glosses, the "approximate, run a short test" disclaimer and the request for the data volume
    (tr review §5.8: "give the full disclaimer once per conversation, and on recalculations send only what changed").
    ``previous``: the estimate_summary of the previous estimate; the answer then says how the memory changed.
    """
    _check_lang(lang)
    kb = kb or load_knowledge()
    plan, estimate = advice.plan, advice.estimate
    gpus = {card.id: card for card in kb.gpus}
    lines: List[str] = []
    cap_lines = _cap_lines(advice, lang, kb)
    if advice.cap is not None and not advice.cap.under_cap:
        lines.extend(cap_lines)  # the customer's constraint first: nothing under it holds the job
        lines.append("")
        cap_lines = []
    # Two chat bubbles (the channels split a text at blank lines; the reviews found four per estimate too many):
    # the answer - the card to rent, what changed, what the budget buys - then the details behind it.
    lines.extend(_lead(advice, lang, kb))
    lines.extend(stack_lines.lead_lines(advice, lang))
    lines.extend(_change_lines(advice, previous, lang, kb))
    volume_known = advice.volume_tokens is not None
    if volume_known:
        lines.append(kb.text("volume_line", lang, tokens=tokens(advice.volume_tokens, lang, kb)))
    lines.extend(_budget_lines(advice, lang, kb))

    lines.append("")
    method_key = f"method_{plan.method}" if first or plan.method != "full" else "method_full_short"
    method = kb.text(method_key, lang)
    header_key = "header_gpus" if plan.gpus > 1 else ("header" if first else "header_again")
    lines.append(kb.text(header_key, lang, model=advice.preset.display, method=method,
                         seq_len=number(plan.seq_len, lang, 0), gpus=plan.gpus))
    if advice.by_size:
        size = advice.requested_size_b or advice.preset.size_b
        exact = math.isclose(size, advice.preset.size_b, rel_tol=0.05)
        lines.append(kb.text("preset_by_size" if exact else "preset_by_size_nearest", lang,
                             size=number(size, lang, 1), model=advice.preset.display))
    # A job that fits no card is not "per GPU" yet: it is what one GPU would have to hold.
    if plan.gpus > 1:
        memory_key = "memory_line"
    else:
        memory_key = "memory_line_single" if advice.fitting_cards else "memory_line_one_gpu"
    lines.append(kb.text(memory_key, lang, total=gb(estimate.per_gpu_gib, lang), low=gb(estimate.low_gib, lang),
                         high=gb(estimate.high_gib, lang)))
    lines.append(kb.text("parts_line", lang, parts=_parts(advice, lang, kb)))
    defaults = _defaults(advice, lang, kb)
    if defaults:
        lines.append(defaults)
    lines.extend(stack_lines.detail_lines(advice, lang))
    if advice.pure_bf16_estimate is not None:
        lines.append(kb.text("full_bf16_note", lang, bf16=gb(advice.pure_bf16_estimate.per_gpu_gib, lang)))

    shortlist = advice.shortlist[:TOP_CARDS]
    if shortlist:
        lines.append(kb.text("cards_header_one" if len(shortlist) == 1 else "cards_header", lang))
        for rank, card in enumerate(shortlist, start=1):
            lines.append(_card_line(rank, card, gpus[card.card_id], lang, kb, volume_known))
        if any(card.status == "tight" for card in shortlist):
            lines.append(kb.text(f"tight_remedy_{plan.method}", lang))
        choice = advice.recommendation
        reference = choice.card.price_usd_hour if choice else min(c.price_usd_hour for c in shortlist)
        too_small = [c.name for c in advice.cards if c.status == "no_fit" and c.price_usd_hour <= reference]
        if too_small:
            lines.append(kb.text("too_small_cards", lang, names=names_list(too_small, lang, kb)))
        dominated = [c.name for c in advice.cards if c.card_id in advice.dominated]
        if dominated:
            lines.append(kb.text("dominated_cards", lang, names=names_list(dominated, lang, kb)))
    lines.extend(cap_lines)
    if advice.alternatives:
        lines.append(kb.text("alternatives_header", lang))
        lines.extend(_alternative_line(alt, advice, lang, kb) for alt in advice.alternatives)
    if advice.needs_quote and quote_offer:
        lines.append(kb.text("quote_offer", lang))
    if not volume_known and advice.fitting_cards and first:
        lines.append(kb.text("volume_unknown", lang))
    if first:
        lines.append(kb.text("test_first", lang))
    text = "\n".join(lines)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return _rtl_lines(text.strip(), lang)


# ---------------------------------------------------------------------------------------------- closing hint

# Budgets offered as the example change: the first one above the customer's (a $2 budget gets "20 dollars", not
# "100": the reviews found the fixed $100 tone-deaf next to a tiny budget).
HINT_BUDGETS = (20, 50, 100, 500, 1000, 5000)


def render_estimate_hint(advice, lang: str, kb: Optional[Knowledge] = None) -> str:
    """The closing hint after an estimate, with example changes that differ from the current values (native
    reviews: "what about LoRA?" right after a LoRA estimate, "4096 tokens?" at 4096 changed nothing)."""
    _check_lang(lang)
    kb = kb or load_knowledge()
    plan, request = advice.plan, advice.request
    method = {"lora": "qlora", "qlora": "lora", "full": "lora"}[plan.method]
    seq_len = 4096 if plan.seq_len != 4096 else 2048
    examples = [kb.text("hint_method", lang, method=kb.text(f"method_{method}", lang)),
                kb.text("hint_seq_len", lang, n=number(seq_len, lang, 0))]
    budget = request.budget_usd
    if request.budget_unlimited:
        budget_example = None  # "my budget is 100 dollars" means nothing to a customer without a budget limit
    elif budget is None:
        budget_example = 100
    else:
        budget_example = next((b for b in HINT_BUDGETS if b > budget * 1.5), None)
    if budget_example is not None:
        examples.append(kb.text("hint_budget", lang, n=number(budget_example, lang, 0)))
    separator = kb.text("list_separator", lang)
    joined = kb.text("hint_join", lang, first=separator.join(examples[:-1]), last=examples[-1])
    return kb.text("estimate_hint", lang, examples=joined)


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
    a, b = comparison.options
    mult = load_glossary().multiplication
    method = kb.text(f"method_{comparison.method}", lang) if comparison.method else ""
    seq_len = number(comparison.seq_len, lang, 0)
    if comparison.kind == "gpu":
        lines = [kb.text("compare_header_gpu", lang, a=a.label, b=b.label, model=comparison.model_display,
                         method=method, seq_len=seq_len, need=gb(a.per_gpu_gib, lang), high=gb(a.high_gib, lang))]
    elif comparison.kind == "method":
        labels = [kb.text(f"method_{o.option}", lang) for o in (a, b)]
        lines = [kb.text("compare_header_method", lang, a=labels[0], b=labels[1], model=comparison.model_display,
                         seq_len=seq_len)]
    else:
        lines = [kb.text("compare_header_model", lang, a=a.label, b=b.label, method=method, seq_len=seq_len)]
    gpus = {card.id: card for card in kb.gpus}
    names = {}
    for option in comparison.options:
        label = kb.text(f"method_{option.option}", lang) if comparison.kind == "method" else option.label
        names[option.option] = label
        extra = _compare_extra(option, lang, kb)
        if comparison.kind == "gpu":
            line = kb.text("compare_line_gpu", lang, label=label, vram=number(gpus[option.card_id].vram_gb, lang, 0),
                           status=kb.text(f"status_{option.status}", lang), price=money(option.price_usd_hour, lang),
                           price_vat=money(option.price_usd_hour_with_vat, lang), extra=extra)
        elif option.card_id is None:
            line = kb.text("compare_line_none", lang, label=label, need=gb(option.per_gpu_gib, lang),
                           high=gb(option.high_gib, lang))
        else:
            card = option.card_name if option.gpus == 1 else f"{option.gpus} {mult} {option.card_name}"
            line = kb.text("compare_line", lang, label=label, need=gb(option.per_gpu_gib, lang),
                           high=gb(option.high_gib, lang), card=card, price=money(option.price_usd_hour, lang),
                           price_vat=money(option.price_usd_hour_with_vat, lang), extra=extra)
        lines.append(_list_line(line, lang))
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
    for what in comparison.assumed:
        lines.append(kb.text(f"compare_assumed_{what}", lang))
    if comparison.volume_tokens is None:
        lines.append(kb.text("volume_unknown", lang))
    return _rtl_lines("\n".join(lines), lang)


# ---------------------------------------------------------------------------------------------- own card


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
        lines.append(kb.text(f"own_card_job_{result.status}", lang, card=card.name, usable=usable,
                             model=advice.preset.display, method=kb.text(f"method_{advice.plan.method}", lang),
                             seq_len=number(advice.plan.seq_len, lang, 0), need=gb(estimate.per_gpu_gib, lang),
                             low=gb(estimate.low_gib, lang), high=gb(estimate.high_gib, lang)))
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
        lines.append(kb.text("own_card_cloud_job", lang, card=rec.name, vram=number(kb.gpu(rec.card_id).vram_gb, lang, 0),
                             price=money(rec.price_usd_hour, lang),
                             price_vat=money(_vat_price(rec.price_usd_hour, advice.vat_rate), lang)))
    elif advice.multi_gpu is not None:
        lines.append(kb.text("own_card_cloud_multi", lang, count=advice.multi_gpu.count, card=advice.multi_gpu.name))
    return _rtl_lines("\n".join(lines), lang)


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
            values[name] = (public_url or DEFAULT_PUBLIC_URL).rstrip("/") + figure.path.replace("{lang}", lang)
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
