"""One request in, one complete piece of advice out: memory, fitting cards, prices, time, cost, budget, quote.

``advise(AdviceRequest(...))`` validates the values (bad ones raise :class:`bot.advisor.knowledge.InputError`, a
``ValueError`` carrying the field and a text key so the answer can be given in the user's language), builds the
training plan with the documented defaults of :mod:`bot.advisor.plans`, estimates memory with :mod:`bot.advisor.estimator` and
ranks the catalogue with :mod:`bot.advisor.recommend`.
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional

from pydantic import BaseModel, ValidationError

from bot.advisor import recommend
from bot.advisor.estimator import estimate_memory
from bot.advisor.knowledge import InputError, Knowledge, ModelPreset, load_knowledge, resolve_model
from bot.advisor.plans import default_plan, sharded_plan
from bot.advisor.recommend import BudgetVerdict, CardFit, MultiGpuPlan
from bot.advisor.schema import MAX_SEQ_LEN, LoraSpec, MemoryEstimate, TrainingPlan
from bot.advisor.throughput import volume_tokens as compute_volume

METHODS = ("full", "lora", "qlora")

# Limits of what the advisor answers. Outside them the input is a typo or a job for a human (quote).
MAX_BUDGET_USD = 10_000_000
MAX_TOTAL_TOKENS = 1e13          # ~ Llama 3's whole pre-training corpus (15T); fine-tuning is far below
MAX_EXAMPLES = 1e9
MAX_EPOCHS = 1000
MAX_GPUS = 64
MAX_MICRO_BATCH = 1024
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

    @classmethod
    def from_values(cls, **values: Any) -> "AdviceRequest":
        """Build a request from loose values (CLI, slots); a value of the wrong type raises InputError."""
        try:
            return cls(**{k: v for k, v in values.items() if v is not None})
        except ValidationError as exc:
            error = exc.errors()[0]
            field = str(error["loc"][0]) if error["loc"] else "request"
            raise InputError(field, "bad_value", f"{error['msg']}", name=field) from None


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

    @property
    def fitting_cards(self) -> List[CardFit]:
        return [card for card in self.cards if card.fitting]

    def summary(self) -> Dict[str, Any]:
        """The ``estimate_summary`` slot (docs/architecture.md)."""
        return {
            "per_gpu_gib": round(self.estimate.per_gpu_gib, 2),
            "low_gib": round(self.estimate.low_gib, 2),
            "high_gib": round(self.estimate.high_gib, 2),
            "best_card": self.best.card_id if self.best else None,
            "best_price_usd_hour": self.best.price_usd_hour if self.best else None,
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
    if req.lora_rank is not None:
        _number("lora_rank", req.lora_rank, 1, 4096, "bad_lora_rank", integer=True)
        if req.method == "full":
            raise InputError("lora_rank", "rank_without_lora", "a LoRA rank only applies to lora/qlora")
    if (req.examples is None) != (req.avg_tokens is None) and req.total_tokens is None:
        missing = "avg_tokens" if req.avg_tokens is None else "examples"
        raise InputError(missing, "volume_incomplete", "give both the number of examples and their average tokens")


def _build_plan(req: AdviceRequest, preset: ModelPreset) -> TrainingPlan:
    plan = default_plan(preset.arch, req.method, int(req.seq_len), gpus=int(req.gpus or 1),
                        micro_batch=int(req.micro_batch or 1))
    if req.lora_rank is not None:
        if req.lora_rank > preset.arch.hidden:
            raise InputError("lora_rank", "rank_above_hidden",
                             f"LoRA rank {req.lora_rank} is above the hidden size {preset.arch.hidden}",
                             value=int(req.lora_rank), hidden=preset.arch.hidden, model=preset.display)
        data = plan.dict()
        data["lora"] = LoraSpec(rank=int(req.lora_rank), targets=plan.lora.targets)
        plan = TrainingPlan(**data)
    return plan


def advise(req: AdviceRequest, kb: Optional[Knowledge] = None) -> Advice:
    """The complete advice for one request (see the module docstring)."""
    kb = kb or load_knowledge()
    validate(req)
    resolved = _resolve(req, kb)
    plan = _build_plan(req, resolved.preset)
    return advise_plan(plan, req, kb, preset=resolved.preset, by_size=resolved.by_size,
                       requested_size_b=resolved.requested_size_b)


def preset_for_arch(arch, kb: Knowledge) -> ModelPreset:
    """The catalogue preset with exactly this architecture, or an ad-hoc one for a custom model."""
    for preset in kb.models:
        if preset.arch == arch:
            return preset
    return ModelPreset(id="custom", display=arch.name, size_b=round(arch.params / 1e9, 2), source="plan file",
                       aliases=[], arch=arch, shape={})


def advise_plan(plan: TrainingPlan, req: AdviceRequest, kb: Optional[Knowledge] = None, *,
                preset: Optional[ModelPreset] = None, by_size: bool = False,
                requested_size_b: Optional[float] = None) -> Advice:
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
    best_value = min(fitting, key=lambda c: c.cost_per_million_tokens_usd) if fitting else None

    multi, counts = None, []
    if not any(card.status == "fits" for card in cards):
        # Nothing holds the job comfortably: offer the same job sharded over more GPUs of one type.
        counts = [n for n in recommend.MULTI_GPU_COUNTS if n > plan.gpus]
        multi = recommend.multi_gpu_plan(plan, kb.gpus, estimate_memory, sharded_plan, vat_rate=vat,
                                         volume_tokens=volume, counts=counts)
    pure_bf16 = None
    if plan.method == "full" and plan.precision != "bf16":
        data = plan.dict()
        data["precision"] = "bf16"
        pure_bf16 = estimate_memory(TrainingPlan(**data))

    assumptions = _assumptions(req, plan, by_size, volume)
    verdict = recommend.budget_verdict(budget, req.budget_unlimited, cards, multi)
    return Advice(request=req, preset=preset, by_size=by_size, requested_size_b=requested_size_b,
                  plan=plan, estimate=estimate, pure_bf16_estimate=pure_bf16, cards=cards, best=best,
                  best_value=best_value, multi_gpu=multi, multi_gpu_counts_tried=counts,
                  needs_quote=not fitting or plan.gpus > 1,
                  volume_tokens=volume, budget_verdict=verdict, vat_rate=vat,
                  assumptions=assumptions + [c for c in estimate.assumptions if c not in assumptions])


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
    if plan.gpus > 1 and plan.sharding == "zero3":
        codes.append("multi_gpu_zero3")
    if volume is not None and req.epochs is None:
        codes.append("one_epoch")
    if req.budget_usd is not None and not req.budget_unlimited:
        codes.append("budget_includes_vat")
    codes.append("time_compute_only")
    return codes
