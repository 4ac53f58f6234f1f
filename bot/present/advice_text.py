"""The estimate's answer: the recommended card first, what changed, what the budget buys, then the details (memory,
shortlist, cheaper variants, the hourly cap) and the closing hint."""
from __future__ import annotations

import math
from typing import Dict, List, Optional

from bot.advisor.glossary import load_glossary
from bot.advisor.knowledge import Knowledge, load_knowledge
from bot.advisor.vat import price_with_vat
from bot.present import stack_lines
from bot.present.formatting import (_check_lang, _list_line, _rtl_lines, duration, gb, money, names_list,
                                    number, tokens)

TOP_CARDS = 4
MAX_PARTS = 3


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
        extra += kb.text("card_tight", lang, high=gb(card.high_gib or card.need_gib, lang))
    if volume_known and card.hours is not None:
        extra += kb.text("card_time", lang, duration=duration(card.hours, lang, kb),
                         cost_vat=money(card.cost_usd_with_vat, lang))
    elif card.cost_per_million_tokens_usd is not None:
        extra += kb.text("card_per_million", lang, per_million=money(card.cost_per_million_tokens_usd, lang))
    return _list_line(kb.text("card_line", lang, rank=rank, name=card.name, vram=number(gpu.vram_gb, lang, 0),
                              price=money(card.price_usd_hour, lang),
                              price_vat=money(card.price_usd_hour_with_vat, lang), extra=extra), lang)


def _multi_prices(multi, advice) -> Dict[str, float]:
    per_card = multi.price_usd_hour_total / multi.count
    price_vat = multi.count * price_with_vat(per_card, advice.vat_rate, to_cent=True)
    return {"price": multi.price_usd_hour_total, "price_vat": price_vat}


def _speedup(fast, slow, lang: str) -> str:
    ratio = (fast.tokens_per_second or 0) / max(slow.tokens_per_second or 1e-9, 1e-9)
    return number(ratio, lang, 0 if ratio >= 3 else 1)


def _lead(advice, lang: str, kb: Knowledge) -> List[str]:
    """The opening: one recommended card with its price and why (or the multi-GPU plan), then a faster option."""
    choice = advice.recommendation
    if choice is None:
        return [_no_single_card(advice, lang, kb)]
    card = choice.card
    values = dict(card=card.name, vram=number(kb.gpu(card.card_id).vram_gb, lang, 0),
                  price=money(card.price_usd_hour * card.gpus, lang),
                  price_vat=money(price_with_vat(card.price_usd_hour, advice.vat_rate, to_cent=True) * card.gpus, lang))
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
        lines.extend(_faster_line(choice, faster, lang, kb))
    return lines


def _no_single_card(advice, lang: str, kb: Knowledge) -> str:
    """No one card holds the job: the multi-GPU plan, or that none does."""
    estimate = advice.estimate
    largest = max(kb.gpus, key=lambda card: card.usable_gib)
    multi = advice.multi_gpu
    if multi is None:
        return kb.text("rec_none", lang, total=gb(estimate.per_gpu_gib, lang), largest=number(largest.vram_gb, lang, 0),
                       count=max(advice.multi_gpu_counts_tried or [advice.plan.gpus]))
    time = ""
    if multi.hours is not None:
        time = kb.text("card_time", lang, duration=duration(multi.hours, lang, kb),
                       cost_vat=money(multi.cost_usd_with_vat, lang))
    prices = _multi_prices(multi, advice)
    from bot.advisor.recommend import GPUS_PER_SERVER

    key = "rec_multi_gpu" if multi.count <= GPUS_PER_SERVER else "rec_multi_node"
    return kb.text(key, lang, total=gb(estimate.per_gpu_gib, lang), servers=-(-multi.count // GPUS_PER_SERVER),
                   largest=number(largest.vram_gb, lang, 0), count=multi.count, name=multi.name,
                   per_gpu=gb(multi.per_gpu_gib, lang), price=money(prices["price"], lang),
                   price_vat=money(prices["price_vat"], lang), time=time)


def _faster_line(choice, faster, lang: str, kb: Knowledge) -> List[str]:
    card = choice.card
    if choice.reason == "lowest_per_token":
        return [kb.text("faster_unlimited", lang, name=faster.name, price=money(faster.price_usd_hour, lang),
                        speedup=_speedup(faster, card, lang))]
    if choice.reason == "lowest_total_cost" and faster.hours is not None:
        return [kb.text("faster_total", lang, name=faster.name, duration=duration(faster.hours, lang, kb),
                        cost_vat=money(faster.cost_usd_with_vat, lang))]
    if faster.cost_per_million_tokens_usd is not None:
        return [kb.text("faster_per_token", lang, name=faster.name, price=money(faster.price_usd_hour, lang),
                        speedup=_speedup(faster, card, lang),
                        per_million=money(faster.cost_per_million_tokens_usd, lang),
                        rec_per_million=money(card.cost_per_million_tokens_usd, lang))]
    return []


def _alternative_line(alt, advice, lang: str, kb: Knowledge) -> str:
    extra = ""
    if alt.cost_usd_with_vat is not None:
        extra += kb.text("alternative_cost", lang, cost_vat=money(alt.cost_usd_with_vat, lang))
    if alt.kind == "multi_gpu":
        per_card_vat = price_with_vat(alt.price_usd_hour / alt.count, advice.vat_rate, to_cent=True)
        return _list_line(kb.text("alternative_multi_line", lang, count=alt.count, card=alt.card_name,
                                  need=gb(alt.per_gpu_gib, lang), price=money(alt.price_usd_hour, lang),
                                  price_vat=money(alt.count * per_card_vat, lang),
                                  extra=extra), lang)
    if alt.status == "tight":
        extra += kb.text("alternative_tight", lang)
    if alt.kind == "bf16":
        extra += kb.text("alternative_stability", lang)
    return _list_line(kb.text("alternative_line", lang, variant=variant_name(alt, lang, kb),
                              need=gb(alt.per_gpu_gib, lang), high=gb(alt.high_gib, lang), card=alt.card_name,
                              price=money(alt.price_usd_hour, lang),
                              price_vat=money(price_with_vat(alt.price_usd_hour, advice.vat_rate, to_cent=True), lang),
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
                             price_vat=money(price_with_vat(card.price_usd_hour, advice.vat_rate, to_cent=True), lang)))
    else:
        lines.append(kb.text("cap_none_no_card", lang))
    if cap.fixes:
        lines.append(kb.text("cap_fixes_header", lang))
        lines.extend(_alternative_line(alt, advice, lang, kb) for alt in cap.fixes)
    else:
        lines.append(kb.text("cap_no_fix", lang))
    return lines


def budget_lines(advice, lang: str, kb: Knowledge) -> List[str]:
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
            price_vat = price_with_vat(alt.price_usd_hour, advice.vat_rate, to_cent=True)
            hours = plan.budget_usd / price_vat
            lines.append(kb.text("budget_tiny_alternative", lang, variant=variant_name(alt, lang, kb),
                                 card=alt.card_name, price_vat=money(price_vat, lang),
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
            lines.append(kb.text("budget_runs_month", lang, budget=budget, runs=number(runs, lang,
                                                                                       0 if runs >= 10 else 1),
                                 cost=money(plan.volume_cost_usd_with_vat, lang), card=card))
        else:
            lines.append(kb.text("budget_fits_volume", lang, label=label, card=card, duration=duration(hours, lang, kb),
                                 cost=money(plan.volume_cost_usd_with_vat, lang)))
        return lines
    lines.append(kb.text(f"budget_hours_{plan.period}", lang, budget=budget, duration=duration(plan.hours, lang, kb),
                         card=card, tokens=tokens(plan.tokens, lang, kb)))
    return lines


def _stack_change_line(advice, previous: dict, lang: str, kb: Knowledge) -> Optional[str]:
    """The stack the advisor chose changed with the job (Gemma 2 9B QLoRA at 8,192 tokens: Unsloth, where 4,096 was
    Transformers+PEFT): said beside the memory change. A stack the customer named is said by its own answer."""
    from bot.advisor.stacks import load_stacks

    choice = getattr(advice, "stack_choice", None)
    before, after = previous.get("stack"), advice.plan.stack
    if not before or before == after or choice is None or choice.named:
        return None
    stacks = load_stacks()
    try:
        return kb.text("change_stack", lang, before=stacks.get(before).name, after=stacks.get(after).name)
    except KeyError:  # a summary from an older release with a stack no longer listed
        return None


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
    stack_line = _stack_change_line(advice, previous, lang, kb)
    if stack_line:
        lines.append(stack_line)
    was = set(previous.get("fitting_cards") or [])
    now = {card.card_id for card in advice.fitting_cards}
    separator = kb.text("list_separator", lang)
    for key, changed in (("change_dropped", was - now), ("change_added", now - was)):
        names = [card.name for card in kb.gpus if card.id in changed]  # in catalogue order
        if names:
            lines.append(kb.text(key, lang, names=separator.join(names)))
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
    if advice.volume_tokens is not None:
        lines.append(kb.text("volume_line", lang, tokens=tokens(advice.volume_tokens, lang, kb)))
    lines.extend(budget_lines(advice, lang, kb))
    lines.append("")
    lines.extend(_estimate_lines(advice, lang, kb, first))
    lines.extend(_shortlist_lines(advice, lang, kb))
    lines.extend(cap_lines)
    lines.extend(_closing_lines(advice, lang, kb, first, quote_offer))
    text = "\n".join(lines)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return _rtl_lines(text.strip(), lang)


def render_first_answer(advice, lang: str, kb: Optional[Knowledge] = None) -> str:
    """The short answer given before the form's remaining questions (actions/answer_first.py): the recommended
    card with its price and the memory the job needs; the details come with the full estimate."""
    _check_lang(lang)
    kb = kb or load_knowledge()
    estimate = advice.estimate
    lines = _lead(advice, lang, kb) + stack_lines.lead_lines(advice, lang)
    memory_key = "memory_line_single" if advice.fitting_cards and advice.plan.gpus == 1 else "memory_line_one_gpu"
    if advice.plan.gpus > 1:
        memory_key = "memory_line"
    lines.append(kb.text(memory_key, lang, total=gb(estimate.per_gpu_gib, lang), low=gb(estimate.low_gib, lang),
                         high=gb(estimate.high_gib, lang)))
    return _rtl_lines("\n".join(lines), lang)


def _estimate_lines(advice, lang: str, kb: Knowledge, first: bool) -> List[str]:
    """The job as understood (model, method, length), the memory it needs, its parts and the defaults assumed."""
    plan, estimate = advice.plan, advice.estimate
    method_key = f"method_{plan.method}" if first or plan.method != "full" else "method_full_short"
    header_key = "header_gpus" if plan.gpus > 1 else ("header" if first else "header_again")
    lines = [kb.text(header_key, lang, model=advice.preset.display, method=kb.text(method_key, lang),
                     seq_len=number(plan.seq_len, lang, 0), gpus=plan.gpus)]
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
    return lines


def _shortlist_lines(advice, lang: str, kb: Knowledge) -> List[str]:
    """The cards that hold the job, best first, and the cheaper ones that do not or are never worth it."""
    shortlist = advice.shortlist[:TOP_CARDS]
    if not shortlist:
        return []
    gpus = {card.id: card for card in kb.gpus}
    volume_known = advice.volume_tokens is not None
    lines = [kb.text("cards_header_one" if len(shortlist) == 1 else "cards_header", lang)]
    for rank, card in enumerate(shortlist, start=1):
        lines.append(_card_line(rank, card, gpus[card.card_id], lang, kb, volume_known))
    if any(card.status == "tight" for card in shortlist):
        lines.append(kb.text(f"tight_remedy_{advice.plan.method}", lang))
    return lines + _left_out_lines(advice, shortlist, lang, kb)


def _left_out_lines(advice, shortlist, lang: str, kb: Knowledge) -> List[str]:
    """The cheaper cards that do not hold the job, and those never worth their price for it."""
    choice = advice.recommendation
    reference = choice.card.price_usd_hour if choice else min(c.price_usd_hour for c in shortlist)
    too_small = [c.name for c in advice.cards if c.status == "no_fit" and c.price_usd_hour <= reference]
    dominated = [c.name for c in advice.cards if c.card_id in advice.dominated]
    return [kb.text(key, lang, names=names_list(names, lang, kb))
            for key, names in (("too_small_cards", too_small), ("dominated_cards", dominated)) if names]


def _closing_lines(advice, lang: str, kb: Knowledge, first: bool, quote_offer: bool) -> List[str]:
    lines: List[str] = []
    if advice.alternatives:
        lines.append(kb.text("alternatives_header", lang))
        lines.extend(_alternative_line(alt, advice, lang, kb) for alt in advice.alternatives)
    if advice.needs_quote and quote_offer:
        lines.append(kb.text("quote_offer", lang))
    if advice.volume_tokens is None and advice.fitting_cards and first:
        lines.append(kb.text("volume_unknown", lang))
    if first:
        lines.append(kb.text("test_first", lang))
    return lines


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

