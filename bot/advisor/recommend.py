"""Which catalogue cards a job fits on, what they cost, and what to do when no single card is enough (pure).

* A card **fits** when the estimate is below its usable memory with at least ``TIGHT_HEADROOM`` to spare,
  **tight** when it is below but closer than that, otherwise it does **not fit**.
* Cards that fit (tight ones too) come first, cheapest hourly price first - the catalogue's own ordering key
  (seed article: "starting price, hourly, VAT excluded"); ties go to the faster card. Cards that do not fit follow,
  largest memory first.
* When no single card fits, :func:`multi_gpu_plan` shards the same job with ZeRO-3 over 2, 4 or 8 GPUs of one
  card type and keeps the cheapest per trained token. Multi-GPU servers are confirmed in a quote (seed article:
  "declare it at the quote request stage; capacity and exact price are confirmed in the quote").
"""
from __future__ import annotations

from typing import Callable, Iterable, List, Literal, Optional, Sequence

from pydantic import BaseModel

from bot.advisor import throughput
from bot.advisor.schema import MemoryEstimate, TrainingPlan

# Under 10 % free memory a run is "tight": the estimate's own ±range and library versions can push it over
# (seed article: "always run a short test before deciding").
TIGHT_HEADROOM = 0.10

# Multi-GPU servers offered in quotes hold 2, 4 or 8 GPUs of one type (typical server sizes).
MULTI_GPU_COUNTS = (2, 4, 8)

FitStatus = Literal["fits", "tight", "no_fit"]


class CardFit(BaseModel):
    card_id: str
    name: str
    usable_gib: float
    need_gib: float
    headroom_gib: float
    headroom_fraction: float
    status: FitStatus
    gpus: int = 1
    price_usd_hour: float           # per GPU, VAT excluded
    price_usd_hour_with_vat: float  # per GPU
    tokens_per_second: Optional[float] = None
    cost_per_million_tokens_usd: Optional[float] = None  # VAT excluded
    hours: Optional[float] = None
    cost_usd: Optional[float] = None
    cost_usd_with_vat: Optional[float] = None
    within_budget: Optional[bool] = None
    budget_tokens: Optional[float] = None

    @property
    def fitting(self) -> bool:
        return self.status != "no_fit"


class MultiGpuPlan(BaseModel):
    card_id: str
    name: str
    count: int
    sharding: str
    per_gpu_gib: float
    usable_gib: float
    status: FitStatus
    price_usd_hour_total: float           # all GPUs, VAT excluded
    price_usd_hour_total_with_vat: float
    tokens_per_second: float
    cost_per_million_tokens_usd: float
    hours: Optional[float] = None
    cost_usd: Optional[float] = None
    cost_usd_with_vat: Optional[float] = None
    quote_needed: bool = True


class BudgetVerdict(BaseModel):
    """What a budget (VAT included) buys. ``verdict``:

    unlimited        the user said the budget does not matter
    fits             the volume is known and at least one fitting option finishes within the budget
    over             the volume is known and no fitting option finishes within the budget
    volume_unknown   a budget but no volume: ``tokens_by_card`` says how many tokens it buys
    """

    budget_usd: Optional[float]
    verdict: Literal["unlimited", "fits", "over", "volume_unknown"]
    cards_within: List[str] = []
    tokens_by_card: dict = {}
    cheapest_card: Optional[str] = None
    cheapest_cost_usd_with_vat: Optional[float] = None


def classify(need_gib: float, usable_gib: float) -> FitStatus:
    if need_gib > usable_gib:
        return "no_fit"
    if usable_gib - need_gib < TIGHT_HEADROOM * usable_gib:
        return "tight"
    return "fits"


def rank_cards(cards: Iterable, estimate: MemoryEstimate, *, plan: Optional[TrainingPlan] = None,
               vat_rate: float = 0.0, volume_tokens: Optional[float] = None,
               budget_usd: Optional[float] = None) -> List[CardFit]:
    """Every card with its fit status, price, and (with a plan) speed and cost; cheapest fitting first.

    ``budget_usd`` is compared with the cost including VAT - what leaves the customer's account.
    """
    need = estimate.per_gpu_gib
    gpus = plan.gpus if plan is not None else 1
    fits: List[CardFit] = []
    for card in cards:
        status = classify(need, card.usable_gib)
        fit = CardFit(card_id=card.id, name=card.name, usable_gib=card.usable_gib, need_gib=need,
                      headroom_gib=card.usable_gib - need, headroom_fraction=(card.usable_gib - need) / card.usable_gib,
                      status=status, gpus=gpus, price_usd_hour=card.price_usd_hour,
                      price_usd_hour_with_vat=card.price_usd_hour * (1 + vat_rate))
        if plan is not None:
            fit.tokens_per_second = throughput.tokens_per_second(plan, card)
            fit.cost_per_million_tokens_usd = throughput.cost_per_million_tokens(plan, card)
            if volume_tokens:
                cost = throughput.training_cost(plan, card, volume_tokens, vat_rate)
                fit.hours, fit.cost_usd, fit.cost_usd_with_vat = cost.hours, cost.cost_usd, cost.cost_usd_with_vat
                if budget_usd is not None:
                    fit.within_budget = cost.cost_usd_with_vat <= budget_usd
            if budget_usd is not None:
                fit.budget_tokens = throughput.tokens_for_budget(plan, card, budget_usd, vat_rate)
        fits.append(fit)
    return sorted(fits, key=_rank_key)


def _rank_key(fit: CardFit):
    if fit.fitting:
        return (0, fit.price_usd_hour, -(fit.tokens_per_second or 0), -fit.usable_gib)
    return (1, -fit.usable_gib, fit.price_usd_hour, 0)


def cheapest_fitting(cards: Iterable, need_gib: float) -> Optional[object]:
    """The cheapest card (hourly, VAT excluded) whose usable memory holds ``need_gib``; None if none does."""
    fitting = [card for card in cards if classify(need_gib, card.usable_gib) != "no_fit"]
    return min(fitting, key=lambda card: (card.price_usd_hour, -card.bf16_tflops), default=None)


def multi_gpu_plan(plan: TrainingPlan, cards: Sequence, estimate_fn: Callable[[TrainingPlan], MemoryEstimate],
                   shard_fn: Callable[..., TrainingPlan], *, vat_rate: float = 0.0,
                   volume_tokens: Optional[float] = None, counts: Sequence[int] = MULTI_GPU_COUNTS,
                   sharding: str = "zero3") -> Optional[MultiGpuPlan]:
    """The cheapest way (per trained token) to run ``plan`` sharded over several GPUs of one card type.

    For each card the smallest GPU count in ``counts`` whose per-GPU estimate fits is tried; among cards the one
    with the lowest cost per million tokens wins (speed and multi-GPU scaling included), fewer GPUs on a tie.
    Returns None when the job fits no card even on the largest count.
    """
    options: List[MultiGpuPlan] = []
    for card in cards:
        for count in counts:
            sharded = shard_fn(plan, count, sharding)
            estimate = estimate_fn(sharded)
            status = classify(estimate.per_gpu_gib, card.usable_gib)
            if status == "no_fit":
                continue
            speed = throughput.tokens_per_second(sharded, card)
            option = MultiGpuPlan(
                card_id=card.id, name=card.name, count=count, sharding=sharding, per_gpu_gib=estimate.per_gpu_gib,
                usable_gib=card.usable_gib, status=status, price_usd_hour_total=count * card.price_usd_hour,
                price_usd_hour_total_with_vat=count * card.price_usd_hour * (1 + vat_rate), tokens_per_second=speed,
                cost_per_million_tokens_usd=throughput.cost_per_million_tokens(sharded, card))
            if volume_tokens:
                cost = throughput.training_cost(sharded, card, volume_tokens, vat_rate)
                option.hours, option.cost_usd, option.cost_usd_with_vat = cost.hours, cost.cost_usd, cost.cost_usd_with_vat
            options.append(option)
            break
    if not options:
        return None
    return min(options, key=lambda o: (o.status == "tight", o.cost_per_million_tokens_usd, o.count))


def budget_verdict(budget_usd: Optional[float], unlimited: bool, fits: Sequence[CardFit],
                   multi: Optional[MultiGpuPlan] = None) -> Optional[BudgetVerdict]:
    """Which fitting cards finish within the budget (VAT included) and how many tokens it buys on each."""
    if unlimited:
        return BudgetVerdict(budget_usd=budget_usd, verdict="unlimited")
    if budget_usd is None:
        return None
    fitting = [f for f in fits if f.fitting]
    tokens = {f.card_id: f.budget_tokens for f in fitting if f.budget_tokens is not None}
    if multi is not None and not fitting:
        tokens[multi.card_id] = (budget_usd / multi.price_usd_hour_total_with_vat * 3600 * multi.tokens_per_second)
    costs = [(f.cost_usd_with_vat, f.card_id) for f in fitting if f.cost_usd_with_vat is not None]
    if multi is not None and not fitting and multi.cost_usd_with_vat is not None:
        costs.append((multi.cost_usd_with_vat, multi.card_id))
    if not costs:
        return BudgetVerdict(budget_usd=budget_usd, verdict="volume_unknown", tokens_by_card=tokens)
    within = [card for cost, card in sorted(costs) if cost <= budget_usd]
    cheapest_cost, cheapest = min(costs)
    return BudgetVerdict(budget_usd=budget_usd, verdict="fits" if within else "over", cards_within=within,
                         tokens_by_card=tokens, cheapest_card=cheapest, cheapest_cost_usd_with_vat=cheapest_cost)
