"""Which catalogue cards a job fits on, what they cost, and what to do when no single card is enough (pure).

* A card **fits** when the upper bound of the estimate's range is within its usable memory, **tight** when only
  the point estimate is (an out-of-memory risk the answer must state), otherwise it does **not fit**. Without a
  range (a bare number) the old rule applies: under ``TIGHT_HEADROOM`` free memory is tight.
* :func:`shortlist` drops dominated cards: a card is left out when another one is no more expensive per hour, no
  more expensive per trained token and fits at least as safely (native-speaker reviews: "L4 has the same hourly
  price as A40, half the memory and twice the cost per token").
* Cards that fit (tight ones too) come first, cheapest hourly price first - the catalogue's own ordering key
  (seed article: "starting price, hourly, VAT excluded"); ties go to the faster card. Cards that do not fit follow,
  largest memory first.
* When no single card fits, :func:`multi_gpu_plan` shards the same job with ZeRO-3 over 2, 4 or 8 GPUs of one
  card type and keeps the cheapest per trained token. Multi-GPU servers are confirmed in a quote (seed article:
  "declare it at the quote request stage; capacity and exact price are confirmed in the quote").
"""
from __future__ import annotations

from typing import Callable, Dict, Iterable, List, Literal, Optional, Sequence, Tuple, cast

from pydantic import BaseModel

from bot.advisor import throughput
from bot.advisor.schema import MemoryEstimate, TrainingPlan
from bot.advisor.vat import price_with_vat

# Under 10 % free memory a run is "tight": the estimate's own ±range and library versions can push it over
# (seed article: "always run a short test before deciding").
TIGHT_HEADROOM = 0.10

# Multi-GPU servers offered in quotes hold 2, 4 or 8 GPUs of one type (typical server sizes).
MULTI_GPU_COUNTS = (2, 4, 8)
# A job no 8-GPU server holds (full fine-tuning of a 235B or 400B MoE, of a 405B dense model) is planned over several
# such servers, 2 to 16 of them, so the first answer still names a card, a count and the memory per GPU; the quote
# confirms the cluster (seed article: capacity and exact price are confirmed in the quote).
GPUS_PER_SERVER = 8
MULTI_NODE_COUNTS = (16, 32, 64, 128)

FitStatus = Literal["fits", "tight", "no_fit"]


class CardFit(BaseModel):
    card_id: str
    name: str
    usable_gib: float
    need_gib: float
    high_gib: Optional[float] = None  # top of the estimate's range
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
    high_gib: Optional[float] = None      # top of the per-GPU range
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


def classify(need_gib: float, usable_gib: float, high_gib: Optional[float] = None) -> FitStatus:
    """fits / tight / no_fit; with ``high_gib`` (the top of the estimate's range) "fits" means the top fits."""
    if need_gib > usable_gib:
        return "no_fit"
    if high_gib is not None:
        return "fits" if high_gib <= usable_gib else "tight"
    if usable_gib - need_gib < TIGHT_HEADROOM * usable_gib:
        return "tight"
    return "fits"


STATUS_RANK = {"fits": 0, "tight": 1, "no_fit": 2}


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
        status = classify(need, card.usable_gib, estimate.high_gib)
        fit = CardFit(card_id=card.id, name=card.name, usable_gib=card.usable_gib, need_gib=need,
                      high_gib=estimate.high_gib,
                      headroom_gib=card.usable_gib - need, headroom_fraction=(card.usable_gib - need) / card.usable_gib,
                      status=status, gpus=gpus, price_usd_hour=card.price_usd_hour,
                      price_usd_hour_with_vat=price_with_vat(card.price_usd_hour, vat_rate))
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


def cheapest_fitting(cards: Iterable, need_gib: float, high_gib: Optional[float] = None,
                     *, safe_only: bool = False) -> Optional[object]:
    """The cheapest card (hourly, VAT excluded) whose usable memory holds ``need_gib``; None if none does.

    ``safe_only`` with ``high_gib``: only cards that hold the top of the range."""
    wanted = ("fits",) if safe_only else ("fits", "tight")
    fitting = [card for card in cards if classify(need_gib, card.usable_gib, high_gib) in wanted]
    return min(fitting, key=lambda card: (card.price_usd_hour, -card.bf16_tflops), default=None)


def dominates(a: CardFit, b: CardFit) -> bool:
    """``a`` makes ``b`` pointless: no dearer per hour, no dearer per token, at least as safe, better in one."""
    if a.card_id == b.card_id:
        return False
    a_token = a.cost_per_million_tokens_usd if a.cost_per_million_tokens_usd is not None else 0.0
    b_token = b.cost_per_million_tokens_usd if b.cost_per_million_tokens_usd is not None else 0.0
    if a.cost_per_million_tokens_usd is None:  # no plan: memory stands in for speed
        a_token, b_token = -a.usable_gib, -b.usable_gib
    not_worse = (a.price_usd_hour <= b.price_usd_hour and a_token <= b_token
                 and STATUS_RANK[a.status] <= STATUS_RANK[b.status])
    better = (a.price_usd_hour < b.price_usd_hour or a_token < b_token
              or STATUS_RANK[a.status] < STATUS_RANK[b.status])
    return not_worse and better


def shortlist(cards: Sequence[CardFit]) -> List[CardFit]:
    """The fitting cards no other fitting card dominates, in ranking order (cheapest hourly first)."""
    fitting = [card for card in cards if card.fitting]
    return [card for card in fitting if not any(dominates(other, card) for other in fitting)]


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
    # The sharded plan and its estimate depend on the count, not on the card: worked out once per count.
    by_count: Dict[int, Tuple[TrainingPlan, MemoryEstimate]] = {}
    for card in cards:
        for count in counts:
            if count not in by_count:
                sharded_plan = shard_fn(plan, count, sharding)
                by_count[count] = (sharded_plan, estimate_fn(sharded_plan))
            sharded, estimate = by_count[count]
            status = classify(estimate.per_gpu_gib, card.usable_gib, estimate.high_gib)
            if status == "no_fit":
                continue
            speed = throughput.tokens_per_second(sharded, card)
            option = MultiGpuPlan(
                card_id=card.id, name=card.name, count=count, sharding=sharding, per_gpu_gib=estimate.per_gpu_gib,
                high_gib=estimate.high_gib, usable_gib=card.usable_gib, status=status,
                price_usd_hour_total=count * card.price_usd_hour,
                price_usd_hour_total_with_vat=price_with_vat(count * card.price_usd_hour, vat_rate),
                tokens_per_second=speed,
                cost_per_million_tokens_usd=throughput.cost_per_million_tokens(sharded, card))
            if volume_tokens:
                cost = throughput.training_cost(sharded, card, volume_tokens, vat_rate)
                option.hours, option.cost_usd = cost.hours, cost.cost_usd
                option.cost_usd_with_vat = cost.cost_usd_with_vat
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


# ---------------------------------------------------------------------------------------------- one recommendation

Reason = Literal["cheapest_safe", "cheapest_tight", "lowest_total_cost", "lowest_per_token", "fastest_under_cap",
                 "tight_under_cap"]


class Recommendation(BaseModel):
    """The one card the answer opens with, why, and a faster card worth naming next to it."""

    card: CardFit
    reason: Reason
    faster: Optional[CardFit] = None


def _safe_first(cards: Sequence[CardFit]) -> List[CardFit]:
    safe = [c for c in cards if c.status == "fits"]
    return safe or [c for c in cards if c.status == "tight"]


def recommend(cards: Sequence[CardFit], *, volume_known: bool = False, unlimited: bool = False,
              cap_usd_excl_vat: Optional[float] = None) -> Optional[Recommendation]:
    """Pick one card (the reviews: "the first line says 'I recommend X' with a one-line reason").

    * an hourly cap: the fastest card under the cap that fits (the customer set the price, speed decides);
    * no budget limit: the lowest cost per trained token (time matters, money is not wasted), with the fastest
      card named next to it;
    * a known volume: the lowest total cost for that volume;
    * otherwise: the cheapest card per hour that holds the top of the range, with the card that is cheaper per
      token named as the faster option.
    Safe cards (status "fits") always win over tight ones; None when no card fits.
    """
    fitting = [c for c in cards if c.fitting]
    if cap_usd_excl_vat is not None:
        under = _safe_first([c for c in fitting if c.price_usd_hour <= cap_usd_excl_vat + 1e-9])
        if not under:
            return None
        best = max(under, key=lambda c: (c.tokens_per_second or 0, -c.price_usd_hour))
        return Recommendation(card=best, reason="fastest_under_cap" if best.status == "fits" else "tight_under_cap")
    pool = _safe_first(fitting)
    if not pool:
        return None
    per_token = min(pool, key=lambda c: (c.cost_per_million_tokens_usd or float("inf"), c.price_usd_hour))
    fastest = max(pool, key=lambda c: (c.tokens_per_second or 0, -c.price_usd_hour))
    if unlimited:
        return Recommendation(card=per_token, reason="lowest_per_token",
                              faster=fastest if fastest.card_id != per_token.card_id else None)
    if volume_known and all(c.cost_usd_with_vat is not None for c in pool):
        best = min(pool, key=lambda c: (round(c.cost_usd_with_vat or 0.0, 2), -(c.tokens_per_second or 0)))
        faster = fastest if (fastest.card_id != best.card_id and fastest.hours is not None and best.hours
                             and fastest.hours < best.hours / 1.5) else None
        return Recommendation(card=best, reason="lowest_total_cost", faster=faster)
    cheapest = sorted(pool, key=_rank_key)[0]
    faster = None
    if (per_token.card_id != cheapest.card_id and per_token.cost_per_million_tokens_usd is not None
            and cheapest.cost_per_million_tokens_usd is not None
            and per_token.cost_per_million_tokens_usd < cheapest.cost_per_million_tokens_usd):
        faster = per_token
    return Recommendation(card=cheapest, reason="cheapest_safe" if cheapest.status == "fits" else "cheapest_tight",
                          faster=faster)


# ---------------------------------------------------------------------------------------------- budget realism

# Under one hour on the recommended card a budget buys a short test, not a training run: start-up, loading the
# model and saving a checkpoint take a good part of it (native-speaker reviews, "$2 buys about 10 minutes").
TINY_BUDGET_HOURS = 1.0

BudgetPeriod = Literal["total", "month", "run"]


class BudgetPlan(BaseModel):
    """What the budget (VAT included) buys on the recommended card, and what is missing for the volume."""

    budget_usd: float
    period: BudgetPeriod = "total"
    card_id: str
    card_name: str
    gpus: int = 1
    hours: float                     # wall-clock hours the budget pays on the card (all its GPUs)
    tokens: float                    # training tokens in those hours
    tiny: bool                       # under TINY_BUDGET_HOURS: a test, not a run
    volume_cost_usd_with_vat: Optional[float] = None
    missing_usd: Optional[float] = None   # volume known and over budget: how much more is needed
    volume_share: Optional[float] = None  # share of the volume the budget pays for (0-1)


def budget_plan(budget_usd: float, card: CardFit, *, period: str = "total") -> BudgetPlan:
    hourly = card.price_usd_hour_with_vat * card.gpus
    hours = budget_usd / hourly
    tokens = hours * 3600 * (card.tokens_per_second or 0)
    known = cast(BudgetPeriod, period if period in ("total", "month", "run") else "total")
    plan = BudgetPlan(budget_usd=budget_usd, period=known,
                      card_id=card.card_id, card_name=card.name, gpus=card.gpus, hours=hours, tokens=tokens,
                      tiny=hours < TINY_BUDGET_HOURS)
    if card.cost_usd_with_vat is not None:
        # A known volume the budget pays for in full is not a tiny budget, however short the run.
        plan.tiny = plan.tiny and card.cost_usd_with_vat > budget_usd
        plan.volume_cost_usd_with_vat = card.cost_usd_with_vat
        if card.cost_usd_with_vat > budget_usd:
            plan.missing_usd = card.cost_usd_with_vat - budget_usd
            plan.volume_share = budget_usd / card.cost_usd_with_vat
    return plan
