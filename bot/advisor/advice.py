"""One request in, one complete piece of advice out: memory, fitting cards, prices, time, cost, budget, quote.

``advise(AdviceRequest(...))`` validates the values (bad ones raise :class:`bot.advisor.knowledge.InputError`, a
``ValueError`` carrying the field and a text key so the answer can be given in the user's language), builds the
training plan with the documented defaults of :mod:`bot.advisor.plans`, estimates memory with
:mod:`bot.advisor.estimator` and ranks the catalogue with :mod:`bot.advisor.recommend`.
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Tuple, cast

from pydantic import BaseModel, ValidationError

from bot.advisor import recommend
from bot.advisor.estimator import estimate_memory
from bot.advisor.knowledge import InputError, Knowledge, ModelPreset, load_knowledge, resolve_model
from bot.advisor.plans import default_plan, sharded_plan
from bot.advisor.knowledge import GpuCard
from bot.advisor.recommend import BudgetPeriod, BudgetPlan, BudgetVerdict, CardFit, MultiGpuPlan, Recommendation
from bot.advisor.schema import MAX_SEQ_LEN, STACK_IDS, LoraSpec, MemoryEstimate, ModelArch, TrainingPlan
from bot.advisor.stack_choice import StackChoice, choose_layout, choose_stack
from bot.advisor.throughput import volume_tokens as compute_volume
from bot.advisor.vat import price_with_vat, price_without_vat

METHODS = ("full", "lora", "qlora")

# Limits of what the advisor answers. Outside them the input is a typo or a job for a human (quote).
MAX_BUDGET_USD = 10_000_000
MAX_TOTAL_TOKENS = 1e13          # ~ Llama 3's whole pre-training corpus (15T); fine-tuning is far below
MAX_EXAMPLES = 1e9
MAX_EPOCHS = 1000
MAX_GPUS = 64
MAX_MICRO_BATCH = 1024
MAX_HOURLY_CAP_USD = 1000
BUDGET_PERIODS = ("total", "month", "run")
# Alternatives shown under the recommendation, at most (the answer stays short).
MAX_ALTERNATIVES = 3
# Shorter sequences are offered down to this length (below it most chat/instruction samples get cut).
MIN_SUGGESTED_SEQ_LEN = 512
# A bare size is mapped to the nearest preset only when that preset is within this factor of it; a 400B model
# estimated as a 72B one would be wrong by 5x.
SIZE_MATCH_FACTOR = 1.6


class AdviceRequest(BaseModel):
    model: Optional[str] = None      # preset id or alias ("llama 8b")
    size_b: Optional[float] = None   # billions, when only the size is known
    method: str
    seq_len: int
    budget_usd: Optional[float] = None
    budget_unlimited: bool = False
    total_tokens: Optional[float] = None
    examples: Optional[float] = None
    avg_tokens: Optional[float] = None
    epochs: Optional[float] = None
    gpus: Optional[int] = None
    lora_rank: Optional[int] = None
    micro_batch: Optional[int] = None
    # An hourly price ceiling per GPU (issue 13 #2). Without a word on KDV the cap is read WITHOUT KDV and the answer
    # says so (contracts: hourly_cap_vat None -> False).
    hourly_cap_usd: Optional[float] = None
    hourly_cap_includes_vat: bool = False
    budget_period: Optional[str] = None    # "total" (default) | "month" | "run"
    custom_arch: Optional[Dict[str, Any]] = None  # a pasted config.json read by bot.advisor.hf_config (ModelArch dict)
    stack: Optional[str] = None      # the training stack the customer named (knowledge/stacks.yml id); None: advised
    avg_tokens_assumed: bool = False  # set by with_volume_completed: the sequence length stands for each example

    @classmethod
    def from_values(cls, **values: Any) -> "AdviceRequest":
        """Build a request from loose values (CLI, slots); a value of the wrong type raises InputError."""
        try:
            return cls(**{k: v for k, v in values.items() if v is not None})
        except ValidationError as exc:
            error = exc.errors()[0]
            field = str(error["loc"][0]) if error["loc"] else "request"
            raise InputError(field, "bad_value", f"{error['msg']}", name=field) from None


class Alternative(BaseModel):
    """A cheaper variant of the same job the estimator computed, with the cheapest card that holds it."""

    kind: str                  # qlora | lora | bf16 | adamw_8bit | shorter_seq | smaller_model | multi_gpu
    per_gpu_gib: float
    high_gib: float
    card_id: Optional[str] = None
    card_name: Optional[str] = None
    status: Optional[str] = None
    count: int = 1
    price_usd_hour: Optional[float] = None           # all GPUs, VAT excluded
    price_usd_hour_with_vat: Optional[float] = None
    cost_usd_with_vat: Optional[float] = None        # for the stated volume
    seq_len: Optional[int] = None
    model_display: Optional[str] = None
    size_b: Optional[float] = None


class CapAdvice(BaseModel):
    """The answer to an hourly price ceiling."""

    cap_usd: float                     # as the customer gave it
    includes_vat: bool
    cap_usd_excl_vat: float
    under_cap: List[CardFit] = []      # fitting cards at or under the cap, fastest first
    recommended: Optional[CardFit] = None
    cheapest_fitting: Optional[CardFit] = None   # the cheapest card that holds the job, above the cap
    fixes: List[Alternative] = []      # variants that fit a card under the cap


class Advice(BaseModel):
    request: AdviceRequest
    preset: ModelPreset
    by_size: bool
    requested_size_b: Optional[float] = None
    plan: TrainingPlan
    estimate: MemoryEstimate
    pure_bf16_estimate: Optional[MemoryEstimate] = None  # full fine-tuning only: the same job in pure bf16
    cards: List[CardFit]
    best: Optional[CardFit] = None           # cheapest card that holds the job (hourly price)
    best_value: Optional[CardFit] = None     # fitting card with the lowest cost per trained token
    multi_gpu: Optional[MultiGpuPlan] = None
    multi_gpu_counts_tried: List[int] = []   # GPU counts tried for a multi-GPU plan (empty: not needed)
    needs_quote: bool
    volume_tokens: Optional[float] = None
    budget_verdict: Optional[BudgetVerdict] = None
    vat_rate: float
    assumptions: List[str]
    recommendation: Optional[Recommendation] = None
    shortlist: List[CardFit] = []            # fitting cards no other card dominates
    dominated: List[str] = []                # card ids left out because another card beats them
    alternatives: List[Alternative] = []
    cap: Optional[CapAdvice] = None
    budget: Optional[BudgetPlan] = None
    budget_alternative: Optional[Alternative] = None  # a variant whose cost fits the budget (over/tiny budgets)
    stack_choice: Optional[StackChoice] = None  # the stack the figures assume, named or advised (stack_choice.py)

    @property
    def recommended_card(self) -> Optional[CardFit]:
        return self.recommendation.card if self.recommendation is not None else self.best

    @property
    def fitting_cards(self) -> List[CardFit]:
        return [card for card in self.cards if card.fitting]

    def summary(self) -> Dict[str, Any]:
        """The ``estimate_summary`` slot (docs/architecture.md)."""
        return {
            "per_gpu_gib": round(self.estimate.per_gpu_gib, 2),
            "low_gib": round(self.estimate.low_gib, 2),
            "high_gib": round(self.estimate.high_gib, 2),
            "best_card": self.recommended_card.card_id if self.recommended_card else None,
            "best_price_usd_hour": self.recommended_card.price_usd_hour if self.recommended_card else None,
            "fitting_cards": [card.card_id for card in self.fitting_cards],
            "needs_quote": self.needs_quote,
            "multi_gpu": ({"card": self.multi_gpu.card_id, "count": self.multi_gpu.count,
                           "sharding": self.multi_gpu.sharding} if self.multi_gpu else None),
            "model_display": self.preset.display,
        }


def _number(name: str, value: Optional[float], low: float, high: float, key: str, *, integer: bool = False):
    if value is None:
        return None
    # Limits travel as numbers so render_error can write them the user's way (1.000.000 in Turkish).
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(name, key, f"expected a number, got {value!r}", low=low, high=high)
    if integer and value != int(value):
        raise InputError(name, key, f"expected a whole number, got {value!r}", low=low, high=high)
    if not (low <= value <= high):
        raise InputError(name, key, f"must be between {_fmt(low)} and {_fmt(high)}, got {_fmt(value)}",
                         low=low, high=high, value=value)
    return int(value) if integer else float(value)


def _fmt(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


def _resolve(req: AdviceRequest, kb: Knowledge):
    if req.model:
        return resolve_model(req.model, kb)
    if req.size_b is None:
        raise InputError("model", "missing_model", "give a model name or its size in billions of parameters")
    sizes = sorted(kb.representative_by_size)
    low, high = sizes[0] / SIZE_MATCH_FACTOR, sizes[-1] * SIZE_MATCH_FACTOR
    size = _number("size_b", req.size_b, 0, float("inf"), "bad_size")
    if size <= 0:
        raise InputError("size_b", "bad_size", f"model size must be positive, got {req.size_b!r}",
                         low=round(low, 1), high=round(high), value=req.size_b)
    if not (low <= size <= high):
        raise InputError("size_b", "size_out_of_range",
                         f"no preset near {_fmt(size)}B (presets cover {_fmt(round(low, 1))}-{_fmt(round(high))}B)",
                         low=round(low, 1), high=round(high), value=size)
    return resolve_model(size, kb)


def validate(req: AdviceRequest) -> None:
    """Raise InputError for the first bad value, naming its field."""
    if req.method not in METHODS:
        raise InputError("method", "bad_method", f"expected full, lora or qlora, got {req.method!r}",
                         value=str(req.method))
    _number("seq_len", req.seq_len, 1, MAX_SEQ_LEN, "bad_seq_len", integer=True)
    _number("budget_usd", req.budget_usd, 0.01, MAX_BUDGET_USD, "bad_budget")
    _number("total_tokens", req.total_tokens, 1, MAX_TOTAL_TOKENS, "bad_tokens", integer=True)
    _number("examples", req.examples, 1, MAX_EXAMPLES, "bad_examples", integer=True)
    _number("avg_tokens", req.avg_tokens, 1, MAX_SEQ_LEN, "bad_avg_tokens")
    _number("epochs", req.epochs, 0.01, MAX_EPOCHS, "bad_epochs")
    _number("gpus", req.gpus, 1, MAX_GPUS, "bad_gpus", integer=True)
    _number("micro_batch", req.micro_batch, 1, MAX_MICRO_BATCH, "bad_micro_batch", integer=True)
    _number("hourly_cap_usd", req.hourly_cap_usd, 0.01, MAX_HOURLY_CAP_USD, "bad_hourly_cap")
    if req.stack is not None and req.stack not in STACK_IDS:
        raise InputError("stack", "bad_value", f"expected one of {STACK_IDS}, got {req.stack!r}", name="stack")
    if req.budget_period is not None and req.budget_period not in BUDGET_PERIODS:
        raise InputError("budget_period", "bad_value", f"expected one of {BUDGET_PERIODS}, got {req.budget_period!r}",
                         name="budget_period")
    if req.lora_rank is not None:
        _number("lora_rank", req.lora_rank, 1, 4096, "bad_lora_rank", integer=True)
        if req.method == "full":
            raise InputError("lora_rank", "rank_without_lora", "a LoRA rank only applies to lora/qlora")


def _build_plan(req: AdviceRequest, preset: ModelPreset, stack: Optional[str] = None, kb=None) -> TrainingPlan:
    """The job's plan under ``stack``; on several GPUs laid out as people run it (stack_choice.choose_layout)."""
    plan = default_plan(preset.arch, req.method, int(req.seq_len), micro_batch=int(req.micro_batch or 1),
                        stack=stack)
    plan = _with_rank(req, preset, plan)
    if req.gpus and req.gpus > 1:
        plan = choose_layout(sharded_plan(plan, int(req.gpus)), (kb or load_knowledge()).gpus)
    return plan


def _with_rank(req: AdviceRequest, preset: ModelPreset, plan: TrainingPlan) -> TrainingPlan:
    if req.lora_rank is not None:
        if req.lora_rank > preset.arch.hidden:
            raise InputError("lora_rank", "rank_above_hidden",
                             f"LoRA rank {req.lora_rank} is above the hidden size {preset.arch.hidden}",
                             value=int(req.lora_rank), hidden=preset.arch.hidden, model=preset.display)
        data = plan.dict()
        assert plan.lora is not None    # validate(): a rank only comes with lora/qlora
        data["lora"] = LoraSpec(rank=int(req.lora_rank), targets=plan.lora.targets)
        plan = TrainingPlan(**data)
    return plan


def _planned(req: AdviceRequest, preset: ModelPreset, kb: Knowledge):
    """(plan, stack choice): the stack the customer named, or the one that makes the job cheapest and safe."""
    volume = compute_volume(req.total_tokens, req.examples, req.avg_tokens, req.epochs)
    choice = choose_stack(lambda sid: _build_plan(req, preset, sid, kb), kb.gpus, req.stack, int(req.gpus or 1),
                          volume)
    return _build_plan(req, preset, choice.stack, kb), choice


def with_volume_completed(req: AdviceRequest) -> AdviceRequest:
    """A count of examples without their length ("5,000 examples, 1,024 tokens", where the length read is the
    sequence length) takes the sequence length as each example's length: an upper bound of the time, said in the
    answer (assumption ``avg_tokens_seq_len``). A length without a count is no volume. Customers got no card at all
    when either was missing (issue 21: the estimator needs no volume to recommend)."""
    if req.total_tokens is not None or (req.examples is None) == (req.avg_tokens is None):
        return req
    if req.examples is not None:
        return req.copy(update={"avg_tokens": float(req.seq_len), "avg_tokens_assumed": True})
    return req.copy(update={"avg_tokens": None})


def advise(req: AdviceRequest, kb: Optional[Knowledge] = None) -> Advice:
    """The complete advice for one request (see the module docstring)."""
    kb = kb or load_knowledge()
    validate(req)
    req = with_volume_completed(req)
    if req.custom_arch and not req.model:
        try:
            arch = ModelArch(**req.custom_arch)
        except (ValidationError, TypeError) as exc:
            raise InputError("custom_arch", "bad_value", str(exc), name="config.json") from None
        preset = preset_for_arch(arch, kb)
        plan, choice = _planned(req, preset, kb)
        return advise_plan(plan, req, kb, stack_choice=choice)
    resolved = _resolve(req, kb)
    plan, choice = _planned(req, resolved.preset, kb)
    return advise_plan(plan, req, kb, preset=resolved.preset, by_size=resolved.by_size,
                       requested_size_b=resolved.requested_size_b, stack_choice=choice)


def preset_for_arch(arch, kb: Knowledge) -> ModelPreset:
    """The catalogue preset with exactly this architecture, or an ad-hoc one for a custom model."""
    for preset in kb.models:
        if preset.arch == arch:
            return preset
    fields: Dict[str, Any] = dict(id="custom", display=arch.name, size_b=round(arch.params / 1e9, 2),
                                  source="plan file", aliases=[], arch=arch)
    # Fields the preset schema may carry (family and published size since the model catalogue grew them).
    optional = {"family": "custom", "published_params": arch.params, "published_source": "config.json", "shape": {}}
    fields.update({key: value for key, value in optional.items() if key in ModelPreset.__fields__})
    return ModelPreset(**fields)


def advise_plan(plan: TrainingPlan, req: AdviceRequest, kb: Optional[Knowledge] = None, *,
                preset: Optional[ModelPreset] = None, by_size: bool = False,
                requested_size_b: Optional[float] = None, stack_choice: Optional[StackChoice] = None) -> Advice:
    """Advice for an explicit plan (a plan file, or the plan :func:`advise` built). ``req`` supplies the budget,
    the volume and the user's wording; its model/method/seq_len are informational here."""
    kb = kb or load_knowledge()
    validate(req)
    preset = preset or preset_for_arch(plan.model, kb)
    estimate = estimate_memory(plan)
    vat = kb.pricing.vat_rate
    volume = compute_volume(req.total_tokens, req.examples, req.avg_tokens, req.epochs)
    budget = None if req.budget_unlimited else req.budget_usd

    cards = recommend.rank_cards(kb.gpus, estimate, plan=plan, vat_rate=vat, volume_tokens=volume, budget_usd=budget)
    fitting = [card for card in cards if card.fitting]
    best = fitting[0] if fitting else None
    best_value = min(fitting, key=lambda c: cast(float, c.cost_per_million_tokens_usd)) if fitting else None

    multi, counts = None, []
    if not any(card.status == "fits" for card in cards):
        # Nothing holds the job comfortably: offer the same job sharded over more GPUs of one type.
        counts = [n for n in recommend.MULTI_GPU_COUNTS if n > plan.gpus]
        multi = recommend.multi_gpu_plan(plan, kb.gpus, estimate_memory, sharded_plan, vat_rate=vat,
                                         volume_tokens=volume, counts=counts)
        if multi is None:
            # No one server holds it: the same job over several 8-GPU servers (a cluster the quote confirms).
            nodes = [n for n in recommend.MULTI_NODE_COUNTS if n > plan.gpus]
            multi = recommend.multi_gpu_plan(plan, kb.gpus, estimate_memory, sharded_plan, vat_rate=vat,
                                             volume_tokens=volume, counts=nodes)
            counts = counts + nodes
    pure_bf16 = None
    if plan.method == "full" and plan.precision != "bf16":
        data = plan.dict()
        data["precision"] = "bf16"
        pure_bf16 = estimate_memory(TrainingPlan(**data))

    assumptions = _assumptions(req, plan, by_size, volume)
    verdict = recommend.budget_verdict(budget, req.budget_unlimited, cards, multi)
    short = recommend.shortlist(cards)
    kept = {c.card_id for c in short}  # one CardFit per card; comparing models field by field was a tenth of advise
    dominated = [c.card_id for c in fitting if c.card_id not in kept]

    cap = None
    cap_excl = None
    if req.hourly_cap_usd is not None:
        cap_excl = price_without_vat(req.hourly_cap_usd, vat) if req.hourly_cap_includes_vat else req.hourly_cap_usd
    choice = recommend.recommend(cards, volume_known=volume is not None, unlimited=req.budget_unlimited,
                                 cap_usd_excl_vat=cap_excl)
    context = _VariantContext(plan=plan, preset=preset, kb=kb, vat=vat, volume=volume, cap_excl=cap_excl)
    if cap_excl is not None:
        under = sorted([c for c in fitting if c.price_usd_hour <= cap_excl + 1e-9],
                       key=lambda c: (recommend.STATUS_RANK[c.status], -(c.tokens_per_second or 0)))
        fixes = [] if under else _alternatives(context, for_cap=True)
        assert req.hourly_cap_usd is not None   # cap_excl is computed from it
        cap = CapAdvice(cap_usd=req.hourly_cap_usd, includes_vat=req.hourly_cap_includes_vat, cap_usd_excl_vat=cap_excl,
                        under_cap=under, recommended=choice.card if choice else None,
                        cheapest_fitting=min(fitting, key=lambda c: c.price_usd_hour) if fitting else None,
                        fixes=fixes[:MAX_ALTERNATIVES])
        if choice is None:  # nothing under the cap: the rest of the answer still names the card that holds it
            choice = recommend.recommend(cards, volume_known=volume is not None, unlimited=req.budget_unlimited)
    alternatives = _alternatives(context, for_cap=False)
    shown = _worth_showing(alternatives, choice, cards, multi)

    budget_plan, budget_alt = None, None
    if budget is not None:
        basis = choice.card if choice else None
        if basis is not None:
            budget_plan = recommend.budget_plan(budget, basis, period=req.budget_period or "total")
        elif multi is not None:
            budget_plan = _multi_budget_plan(budget, multi, req.budget_period or "total")
        if budget_plan is not None and (budget_plan.tiny or budget_plan.missing_usd):
            budget_alt = _budget_alternative(alternatives, budget, budget_plan, basis)
    return Advice(request=req, preset=preset, by_size=by_size, requested_size_b=requested_size_b,
                  plan=plan, estimate=estimate, pure_bf16_estimate=pure_bf16, cards=cards, best=best,
                  best_value=best_value, multi_gpu=multi, multi_gpu_counts_tried=counts,
                  needs_quote=not fitting or plan.gpus > 1,
                  volume_tokens=volume, budget_verdict=verdict, vat_rate=vat,
                  assumptions=assumptions + [c for c in estimate.assumptions if c not in assumptions],
                  recommendation=choice, shortlist=short, dominated=dominated, alternatives=shown, cap=cap,
                  budget=budget_plan, budget_alternative=budget_alt,
                  stack_choice=stack_choice or StackChoice(stack=plan.stack, named=True))


# ---------------------------------------------------------------------------------------------- alternatives


class _VariantContext(BaseModel):
    plan: TrainingPlan
    preset: ModelPreset
    kb: Knowledge
    vat: float
    volume: Optional[float]
    cap_excl: Optional[float]

    class Config:
        arbitrary_types_allowed = True


def _variant_plans(plan: TrainingPlan, preset: ModelPreset, kb: Knowledge):
    """(kind, plan, extra) for the cheaper variants of the same job the estimator can compute."""
    data = plan.dict()
    variants: List[Tuple[str, TrainingPlan, Dict[str, Any]]] = []
    if plan.method == "full":
        if plan.precision != "bf16":
            variants.append(("bf16", TrainingPlan(**{**data, "precision": "bf16"}), {}))
        if plan.optimizer == "adamw":
            variants.append(("adamw_8bit", TrainingPlan(**{**data, "optimizer": "adamw_8bit"}), {}))
        variants.append(("lora", default_plan(plan.model, "lora", plan.seq_len, micro_batch=plan.micro_batch,
                                               stack=plan.stack), {}))
    if plan.method in ("full", "lora"):
        variants.append(("qlora", default_plan(plan.model, "qlora", plan.seq_len, micro_batch=plan.micro_batch,
                                                stack=plan.stack), {}))
    if plan.seq_len > 1024:
        shorter = max(MIN_SUGGESTED_SEQ_LEN, plan.seq_len // 2)
        variants.append(("shorter_seq", TrainingPlan(**{**data, "seq_len": shorter}), {"seq_len": shorter}))
    if plan.method != "full":
        smaller = sorted((s for s in kb.representative_by_size if s < preset.size_b * 0.8), reverse=True)
        for size in smaller:
            small = kb.model(kb.representative_by_size[size])
            variants.append(("smaller_model", default_plan(small.arch, plan.method, plan.seq_len,
                                                           micro_batch=plan.micro_batch),
                             {"model_display": small.display, "size_b": size}))
    return variants


def _place(kind: str, variant: TrainingPlan, extra: dict, ctx: _VariantContext) -> Alternative:
    """The cheapest card that holds the variant (under the cap when there is one), safe cards first."""
    estimate = estimate_memory(variant)
    cards = [c for c in ctx.kb.gpus if ctx.cap_excl is None or c.price_usd_hour <= ctx.cap_excl + 1e-9]
    card = cast(Optional[GpuCard],      # cheapest_fitting returns one of the cards given
                recommend.cheapest_fitting(cards, estimate.per_gpu_gib, estimate.high_gib, safe_only=True)
                or recommend.cheapest_fitting(cards, estimate.per_gpu_gib, estimate.high_gib))
    alt = Alternative(kind=kind, per_gpu_gib=estimate.per_gpu_gib, high_gib=estimate.high_gib, **extra)
    if card is None:
        return alt
    alt.card_id, alt.card_name = card.id, card.name
    alt.status = recommend.classify(estimate.per_gpu_gib, card.usable_gib, estimate.high_gib)
    alt.price_usd_hour = card.price_usd_hour
    alt.price_usd_hour_with_vat = price_with_vat(card.price_usd_hour, ctx.vat)
    if ctx.volume:
        from bot.advisor import throughput
        alt.cost_usd_with_vat = throughput.training_cost(variant, card, ctx.volume, ctx.vat).cost_usd_with_vat
    return alt


def _alternatives(ctx: _VariantContext, *, for_cap: bool) -> List[Alternative]:
    """Placed variants, cheapest card first; for a cap only those that fit under it (one smaller model at most)."""
    placed: List[Alternative] = []
    seen_smaller = False
    for kind, variant, extra in _variant_plans(ctx.plan, ctx.preset, ctx.kb):
        if kind == "smaller_model" and seen_smaller:
            continue
        alt = _place(kind, variant, extra, ctx if for_cap else ctx.copy(update={"cap_excl": None}))
        if alt.card_id is None:
            continue
        if kind == "smaller_model":
            seen_smaller = True  # the largest smaller model that fits is the useful one
        placed.append(alt)
    # The same job with a leaner setting first (what the reviewers asked for: pure bf16 or 8-bit AdamW keeps full
    # fine-tuning), then a change of method, then a smaller model; cheaper cards first within each group.
    group = {"bf16": 0, "adamw_8bit": 0, "shorter_seq": 0, "qlora": 1, "lora": 1, "smaller_model": 2}
    return sorted(placed, key=lambda a: (group.get(a.kind, 9), a.price_usd_hour))


def _worth_showing(alternatives: List[Alternative], choice: Optional[Recommendation], cards: List[CardFit],
                   multi: Optional[MultiGpuPlan]) -> List[Alternative]:
    """Variants that land on a cheaper card than the recommendation, shown when 0 or 1 card holds the job safely
    or when they cut the hourly price (full fine-tuning on an 80 GB card instead of a 141 GB one)."""
    safe = [c for c in cards if c.status == "fits"]
    # Cheaper than the cheapest card that already holds the job safely (or than the recommendation when none does).
    if safe:
        reference = min(c.price_usd_hour for c in safe)
    else:
        reference = choice.card.price_usd_hour * choice.card.gpus if choice else (
            multi.price_usd_hour_total if multi else float("inf"))
    shown = [a for a in alternatives if a.kind != "smaller_model" and a.price_usd_hour is not None
             and a.price_usd_hour < reference - 1e-9]
    if len(safe) > 1:
        shown = [a for a in shown if a.status == "fits"]
    result = shown[:MAX_ALTERNATIVES]
    if multi is not None and (choice is None or choice.card.status == "tight"):
        result.append(Alternative(kind="multi_gpu", per_gpu_gib=multi.per_gpu_gib, high_gib=multi.high_gib or 0.0,
                                  card_id=multi.card_id, card_name=multi.name, status=multi.status, count=multi.count,
                                  price_usd_hour=multi.price_usd_hour_total,
                                  price_usd_hour_with_vat=multi.price_usd_hour_total_with_vat,
                                  cost_usd_with_vat=multi.cost_usd_with_vat))
    return result


def _multi_budget_plan(budget: float, multi: MultiGpuPlan, period: str) -> BudgetPlan:
    hours = budget / multi.price_usd_hour_total_with_vat
    over = multi.cost_usd_with_vat is None or multi.cost_usd_with_vat > budget
    plan = BudgetPlan(budget_usd=budget, period=cast(BudgetPeriod, period), card_id=multi.card_id, card_name=multi.name,
                      gpus=multi.count, hours=hours, tokens=hours * 3600 * multi.tokens_per_second,
                      tiny=hours < recommend.TINY_BUDGET_HOURS and over)
    if multi.cost_usd_with_vat is not None:
        plan.volume_cost_usd_with_vat = multi.cost_usd_with_vat
    if multi.cost_usd_with_vat is not None and multi.cost_usd_with_vat > budget:
        plan.volume_cost_usd_with_vat = multi.cost_usd_with_vat
        plan.missing_usd = multi.cost_usd_with_vat - budget
        plan.volume_share = budget / multi.cost_usd_with_vat
    return plan


def _budget_alternative(alternatives: List[Alternative], budget: float, plan: BudgetPlan,
                        basis: Optional[CardFit]) -> Optional[Alternative]:
    """For a budget that is too small: the variant whose volume cost fits it (volume known), or the one that buys
    the most hours (a tiny budget without a volume) - only when it is cheaper per hour than the basis."""
    hourly = basis.price_usd_hour_with_vat if basis else float("inf")
    cheaper = [a for a in alternatives if a.price_usd_hour_with_vat is not None
               and a.price_usd_hour_with_vat < hourly - 1e-9 and a.kind != "smaller_model"]
    if plan.missing_usd:
        within = [a for a in cheaper if a.cost_usd_with_vat is not None and a.cost_usd_with_vat <= budget]
        if within:
            return min(within, key=lambda a: cast(float, a.cost_usd_with_vat))
    if plan.tiny:
        return min(cheaper, key=lambda a: cast(float, a.price_usd_hour_with_vat), default=None)
    return None


def _assumptions(req: AdviceRequest, plan: TrainingPlan, by_size: bool, volume: Optional[float]) -> List[str]:
    """Codes for the defaults the advice relied on (texts in knowledge/texts.yml, key ``assume_<code>``)."""
    codes = []
    if by_size:
        codes.append("preset_by_size")
    if plan.method != "full" and req.lora_rank is None and plan.lora is not None and plan.lora.targets == "all_linear":
        codes.append("default_lora")
    if req.micro_batch is None and plan.micro_batch == 1:
        codes.append("micro_batch_1")
    if plan.gradient_checkpointing:
        codes.append("checkpointing_on")
    if plan.method == "full" and plan.precision == "mixed":
        codes.append("full_mixed_precision")
    if plan.gpus > 1 and plan.sharding in ("zero3", "fsdp"):
        codes.append("multi_gpu_sharded")
    if volume is not None and req.epochs is None:
        codes.append("one_epoch")
    if volume is not None and req.avg_tokens_assumed:
        codes.append("avg_tokens_seq_len")
    if req.budget_usd is not None and not req.budget_unlimited:
        codes.append("budget_includes_vat")
    codes.append("time_compute_only")
    return codes
