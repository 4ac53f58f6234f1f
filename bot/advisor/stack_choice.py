"""Which training stack and which multi-GPU layout the advice assumes (pure: plans, estimates and the catalogue in).

* Stack: the customer's, when they name one. Otherwise each candidate of knowledge/stacks.yml is estimated and the
  one that puts the job on the cheapest card holding it safely wins (then the cheapest that holds it at all); on a
  tie the default stack (nothing extra to install). A Mixture-of-Experts QLoRA job therefore lands on a stack that
  quantizes the experts, and the answer gives the plain-PEFT figure beside it.
* Layout: with several GPUs, DDP when the model state fits on each card (what people run: fastest, no weight
  traffic), ZeRO-3 / FSDP only when it does not.
"""
from __future__ import annotations

from typing import Callable, Iterable, List, Optional, Tuple

from pydantic import BaseModel

from bot.advisor import recommend, throughput
from bot.advisor.estimator import estimate_memory
from bot.advisor.plans import sharded_plan
from bot.advisor.schema import MemoryEstimate, TrainingPlan
from bot.advisor.stacks import load_stacks, runs_on

# Sharded layouts in order of preference per stack: ZeRO-3 for the Hugging Face Trainer / Axolotl (DeepSpeed), FSDP
# for the stacks that only shard with FSDP (torchtune, NeMo AutoModel).
SHARDED_PREFERENCE = ("zero3", "fsdp", "zero2")


class StackFigure(BaseModel):
    """The same job under another stack: its per-GPU memory and the cheapest card that holds it."""

    stack: str
    name: str
    per_gpu_gib: float
    card_id: Optional[str] = None
    card_name: Optional[str] = None


class StackChoice(BaseModel):
    stack: str
    named: bool                              # the customer named it
    plain: Optional[StackFigure] = None      # the default stack's figure when it differs (MoE QLoRA experts)
    four_bit: Optional[StackFigure] = None   # a named stack that keeps MoE experts 16-bit: the best 4-bit stack
    same_card: List[str] = []                # other stacks (names) that put the job on the same card


def _safe_card(cards: Iterable, estimate: MemoryEstimate):
    cards = list(cards)
    return (recommend.cheapest_fitting(cards, estimate.per_gpu_gib, estimate.high_gib, safe_only=True)
            or recommend.cheapest_fitting(cards, estimate.per_gpu_gib, estimate.high_gib))


def _score(cards, estimate: MemoryEstimate, plan: Optional[TrainingPlan] = None,
           volume: Optional[float] = None) -> Tuple[int, float, float]:
    """(fit status, price, memory): the hourly price of the cheapest card that holds the job, or with a known
    volume the lowest total cost among the cards that hold it as safely (what the recommendation then picks)."""
    card = _safe_card(cards, estimate)
    if card is None:
        return (2, float("inf"), estimate.per_gpu_gib)
    status = recommend.classify(estimate.per_gpu_gib, card.usable_gib, estimate.high_gib)
    if volume is None or plan is None:
        return (recommend.STATUS_RANK[status], card.price_usd_hour, estimate.per_gpu_gib)
    same = [c for c in cards if recommend.classify(estimate.per_gpu_gib, c.usable_gib, estimate.high_gib) == status]
    cost = min(throughput.training_cost(plan, c, volume, 0.0).cost_usd for c in same)
    return (recommend.STATUS_RANK[status], cost, estimate.per_gpu_gib)


def choose_stack(build: Callable[[str], TrainingPlan], cards, named: Optional[str], gpus: int = 1,
                 volume: Optional[float] = None) -> StackChoice:
    """``build(stack_id)`` makes the job's plan under a stack; ``cards`` is the catalogue; ``volume`` the training
    tokens when known (the total cost decides, as in the recommendation)."""
    stacks = load_stacks()
    cards = list(cards)
    if named:
        return StackChoice(stack=named, named=True, plain=_plain_figure(build, cards, named),
                           four_bit=_four_bit_figure(build, cards, named, gpus))
    scored = []
    for order, sid in enumerate(stacks.candidates):
        if not runs_on(sid, gpus):
            continue
        plan = build(sid)
        estimate = estimate_memory(plan)
        rank = _score(cards, estimate, plan, volume)
        # same card: a layout without sharded weights is faster, then the default stack (nothing to install)
        scored.append((rank[:2], plan.sharding in ("zero3", "fsdp"), sid != stacks.default, order, sid))
    if scored and min(row[0][0] for row in scored) == recommend.STATUS_RANK["no_fit"]:
        # no stack puts the job on one card: compare the stacks sharded over several GPUs, as the advice then plans
        scored = [(_multi_score(build(row[4]), cards, volume),) + row[1:] for row in scored]
    scored.sort(key=lambda row: row[:4])
    best = scored[0]
    chosen = best[4]
    same = [stacks.get(row[4]).name for row in scored[1:] if row[:2] == best[:2] and row[4] != stacks.default]
    plain = _plain_figure(build, cards, chosen) if chosen != stacks.default else None
    return StackChoice(stack=chosen, named=False, plain=plain, same_card=same,
                       four_bit=_four_bit_figure(build, cards, chosen, gpus))


def _multi_score(plan: TrainingPlan, cards, volume: Optional[float]) -> Tuple[int, float]:
    """(fit status, cost) of the job sharded over several GPUs of one card type under the plan's stack, as
    advice.advise_plan offers it when no single card holds it (Maverick QLoRA: NF4 experts over 4 cards, not bf16
    experts over 8)."""
    layouts = load_stacks().get(plan.stack).layouts
    sharding = next((x for x in SHARDED_PREFERENCE if x in layouts), None)
    counts = [n for n in recommend.MULTI_GPU_COUNTS if n > plan.gpus]
    multi = (recommend.multi_gpu_plan(plan, cards, estimate_memory, sharded_plan, volume_tokens=volume, counts=counts,
                                      sharding=sharding) if sharding else None)
    if multi is None:
        return (recommend.STATUS_RANK["no_fit"], float("inf"))
    cost = multi.cost_usd if volume and multi.cost_usd is not None else multi.cost_per_million_tokens_usd
    return (recommend.STATUS_RANK[multi.status], cost)


def _plain_figure(build, cards, chosen: str) -> Optional[StackFigure]:
    """The default stack's figure for a MoE QLoRA job under another stack (the experts are where they differ)."""
    stacks = load_stacks()
    plan = build(chosen)
    if chosen == stacks.default or plan.method != "qlora" or plan.model.moe is None:
        return None
    default_plan = build(stacks.default)
    if default_plan.qlora_moe_experts == plan.qlora_moe_experts:
        return None
    estimate = estimate_memory(default_plan)
    card = _safe_card(cards, estimate)
    return StackFigure(stack=stacks.default, name=stacks.get(stacks.default).name, per_gpu_gib=estimate.per_gpu_gib,
                       card_id=card.id if card else None, card_name=card.name if card else None)


def _four_bit_figure(build, cards, named: str, gpus: int) -> Optional[StackFigure]:
    """For a MoE QLoRA job on a stack that keeps the experts 16-bit: the candidate stack that quantizes them and
    puts the job on the cheapest card."""
    plan = build(named)
    if plan.method != "qlora" or plan.model.moe is None or plan.qlora_moe_experts == "nf4":
        return None
    stacks = load_stacks()
    best = None
    for sid in stacks.candidates:
        if stacks.get(sid).plan.qlora_moe_experts != "nf4" or not runs_on(sid, gpus):
            continue
        estimate = estimate_memory(build(sid))
        key = _score(cards, estimate)
        if best is None or key < best[0]:
            best = (key, sid, estimate)
    if best is None:
        return None
    card = _safe_card(cards, best[2])
    return StackFigure(stack=best[1], name=stacks.get(best[1]).name, per_gpu_gib=best[2].per_gpu_gib,
                       card_id=card.id if card else None, card_name=card.name if card else None)


def choose_layout(plan: TrainingPlan, cards) -> TrainingPlan:
    """A plan on several GPUs laid out as people run it: DDP when its state fits safely on the cheapest card that
    holds the job (so DDP never moves the job to a dearer card), else the stack's sharded layout."""
    if plan.gpus <= 1:
        return plan
    cards = list(cards)
    layouts = load_stacks().get(plan.stack).layouts
    preferred = next((x for x in SHARDED_PREFERENCE if x in layouts), None)
    ddp = sharded_plan(plan, plan.gpus, "ddp")
    sharded = sharded_plan(plan, plan.gpus, preferred) if preferred else ddp
    if "ddp" not in layouts:
        return sharded
    ddp_estimate = estimate_memory(ddp)
    target = _safe_card(cards, estimate_memory(sharded)) if preferred else None
    candidates = [target] if target is not None else cards
    if any(recommend.classify(ddp_estimate.per_gpu_gib, c.usable_gib, ddp_estimate.high_gib) == "fits"
           for c in candidates):
        return ddp
    return sharded
