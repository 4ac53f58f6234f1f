"""The answer's lines about the training stack and the multi-GPU layout (texts in knowledge/stacks.yml).

* lead_lines: for a Mixture-of-Experts QLoRA job, the stack the figures assume and why (it loads the experts in 4
  bit) with the plain Transformers + PEFT figure beside it; a customer on plain PEFT gets the 4-bit-expert figure.
* detail_lines: which stack the figures are for (said when it is not the plain default or the customer named it) and
  which multi-GPU layout was assumed and why (DDP when the model fits each card, sharding only when it does not).
"""
from __future__ import annotations

from typing import List

from bot.advisor.stacks import load_stacks


def _gb(value: float, lang: str) -> str:
    from bot.present.render import gb

    return gb(value, lang)


def _stack_names(advice, lang: str) -> str:
    stacks = load_stacks()
    name = stacks.get(advice.stack_choice.stack).name
    if advice.stack_choice.same_card:
        return stacks.text("stack_or", lang, first=name, second=advice.stack_choice.same_card[0])
    return name


def _is_moe_qlora(advice) -> bool:
    return advice.plan.method == "qlora" and advice.plan.model.moe is not None


def lead_lines(advice, lang: str) -> List[str]:
    """The MoE QLoRA expert line, right under the recommendation."""
    choice = getattr(advice, "stack_choice", None)
    if choice is None or not _is_moe_qlora(advice):
        return []
    stacks = load_stacks()
    card = advice.recommended_card
    if advice.plan.qlora_moe_experts == "nf4" and choice.plain is not None and card is not None:
        plain_card = (stacks.text("moe_experts_4bit_plain_card", lang, card=choice.plain.card_name)
                      if choice.plain.card_name else "")
        return [stacks.text("moe_experts_4bit", lang, stack=_stack_names(advice, lang),
                            gib=_gb(advice.estimate.per_gpu_gib, lang), card=card.name,
                            plain=choice.plain.name, plain_gib=_gb(choice.plain.per_gpu_gib, lang),
                            plain_card=plain_card)]
    multi = advice.multi_gpu
    if advice.plan.qlora_moe_experts == "nf4" and choice.plain is not None and card is None and multi is not None:
        # no single card holds it even with 4-bit experts (Llama 4 Maverick): the sharded plan's per-GPU figure
        return [stacks.text("moe_experts_4bit_multi", lang, stack=_stack_names(advice, lang),
                            gib=_gb(multi.per_gpu_gib, lang), count=multi.count, card=multi.name,
                            plain=choice.plain.name, plain_gib=_gb(choice.plain.per_gpu_gib, lang))]
    four_bit = choice.four_bit
    if advice.plan.qlora_moe_experts == "bf16" and four_bit is not None:
        card_text = (stacks.text("moe_experts_4bit_plain_card", lang, card=four_bit.card_name)
                     if four_bit.card_name else "")
        return [stacks.text("moe_experts_16bit", lang, stack=stacks.get(advice.plan.stack).name,
                            four_bit=four_bit.name, alt_gib=_gb(four_bit.per_gpu_gib, lang), alt_card=card_text)]
    return []


def named_stack_lines(advice, lang: str) -> List[str]:
    """The first answer (actions/answer_first.py) for a customer who named a stack ("Axolotl ile", «با Unsloth»):
    which stack its figures are for, the default stack too (issue 21: the named stack went unsaid)."""
    if _is_moe_qlora(advice):
        return []  # lead_lines already names the stack of a MoE QLoRA job
    stacks = load_stacks()
    return [stacks.text("stack_named", lang, stack=stacks.get(advice.plan.stack).name)]


def detail_lines(advice, lang: str) -> List[str]:
    """Which stack the figures assume, and the multi-GPU layout."""
    choice = getattr(advice, "stack_choice", None)
    if choice is None:
        return []
    stacks = load_stacks()
    lines: List[str] = []
    name = stacks.get(advice.plan.stack).name
    if choice.named and advice.plan.stack != stacks.default or (choice.named and _is_moe_qlora(advice)):
        lines.append(stacks.text("stack_named", lang, stack=name))
    elif advice.plan.stack != stacks.default and not _is_moe_qlora(advice):
        lines.append(stacks.text("stack_assumed", lang, stack=name))
    lines.extend(_layout_lines(advice, lang))
    lines.extend(_estimated_speed_lines(advice, lang))
    return lines


def _estimated_speed_lines(advice, lang: str) -> List[str]:
    """The recommended card's speed rests on no published measurement (knowledge/calibration/throughput_model.yml
    measured: false): the answer says the time and cost are estimated."""
    from bot.advisor.knowledge import load_knowledge
    from bot.advisor.throughput import is_estimated

    card = advice.recommended_card
    if card is None or card.tokens_per_second is None:
        return []
    catalogue = {c.id: c for c in load_knowledge().gpus}
    if not is_estimated(advice.plan, catalogue[card.card_id]):
        return []
    return [load_stacks().text("speed_estimated", lang, card=card.name)]


def _layout_lines(advice, lang: str) -> List[str]:
    stacks = load_stacks()
    plan = advice.plan
    if plan.gpus <= 1:
        return []
    if plan.sharding == "ddp":
        return [stacks.text("layout_ddp", lang)]
    card = advice.recommended_card
    from bot.advisor.knowledge import load_knowledge

    nvlink = next((c.nvlink for c in load_knowledge().gpus if card is not None and c.id == card.card_id), False)
    layout = {"zero3": "ZeRO-3", "zero2": "ZeRO-2", "fsdp": "FSDP"}.get(plan.sharding, plan.sharding)
    return [stacks.text("layout_sharded", lang, layout=layout,
                        link=stacks.text("link_nvlink" if nvlink else "link_pcie", lang))]
