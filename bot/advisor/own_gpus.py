"""The customer's own card (knowledge/own_gpus.yml): will the job fit on it, what fits on it, and what CloudRUX offers.

``own_card_advice(card_id, job)`` judges the job on the card exactly as the catalogue cards are judged
(:func:`bot.advisor.recommend.classify` on the estimate's range). Without a job it says which model sizes fit the
card per method (QLoRA/LoRA at 2048 tokens), computed with the estimator rather than rules of thumb.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional

from pydantic import BaseModel, Field, validator

from bot.advisor import recommend
from bot.advisor.advice import Advice, AdviceRequest, Alternative, _variant_plans, advise
from bot.advisor.estimator import estimate_memory
from bot.advisor.knowledge import (DEFAULT_ROOT, InputError, Knowledge, duplicates,
                                   load_knowledge, usable_within_marketed)
from bot.advisor.plans import default_plan, sharded_plan
from bot.knowledge import parse_file

CAPACITY_SEQ_LEN = 2048   # the length the form suggests; the capacity table is computed at it
CAPACITY_METHODS = ("qlora", "lora")


class OwnGpu(BaseModel):
    id: str = Field(..., regex=r"^[a-z0-9][a-z0-9.-]*$")
    name: str
    aliases: List[str] = []
    vram_gb: float = Field(..., gt=0, le=1024)
    usable_gib: float = Field(..., gt=0, le=1024)
    display: bool = True
    bf16: bool
    bf16_tflops: Optional[float] = Field(None, gt=0)
    source: str = Field(..., min_length=10)
    usable_source: str = Field(..., min_length=5)
    # A card CloudRUX also rents (knowledge/gpus.yml): only the customer's own when they say so ("bizde A100 var").
    catalogue: bool = False

    class Config:
        extra = "forbid"

    @validator("usable_gib")
    def _not_above_marketed(cls, v, values):
        return usable_within_marketed(v, values)


class OwnGpusFile(BaseModel):
    cards: List[OwnGpu] = Field(..., min_items=1)

    @validator("cards")
    def _unique(cls, v):
        dupes = duplicates(c.id for c in v)
        if dupes:
            raise ValueError(f"duplicate ids: {dupes}")
        return v


@lru_cache(maxsize=4)
def load_own_gpus(root: Path = DEFAULT_ROOT) -> List[OwnGpu]:
    path = Path(root) / "own_gpus.yml"
    return parse_file(OwnGpusFile, path).cards


def own_gpu(card_id: str) -> OwnGpu:
    for card in load_own_gpus():
        if card.id == card_id:
            return card
    raise InputError("own_gpu", "bad_value", f"unknown own card {card_id!r}", name="GPU")


class Capacity(BaseModel):
    method: str
    model_display: Optional[str] = None   # the largest representative model that fits safely; None: none does
    size_b: Optional[float] = None
    per_gpu_gib: Optional[float] = None


class OwnCardAdvice(BaseModel):
    card: OwnGpu
    advice: Optional[Advice] = None       # the job, when it is known
    status: Optional[str] = None          # the job on the own card: fits | tight | no_fit
    fixes: List[Any] = []                 # bot.advisor.advice.Alternative that fit the own card
    capacity: List[Capacity] = []         # without a job: the largest model per method
    gpus: int = 1                         # how many of the card the customer has (round 8)
    layout: Optional[str] = None          # several own cards: "ddp" (each holds the job) or the sharded layout
    single_gib: Optional[float] = None    # several own cards: what the job needs on one card alone


def _capacity(card: OwnGpu, kb: Knowledge) -> List[Capacity]:
    result = []
    for method in CAPACITY_METHODS:
        best = Capacity(method=method)
        for size in sorted(kb.representative_by_size):
            preset = kb.model(kb.representative_by_size[size])
            estimate = estimate_memory(default_plan(preset.arch, method, CAPACITY_SEQ_LEN))
            if recommend.classify(estimate.per_gpu_gib, card.usable_gib, estimate.high_gib) == "fits":
                best = Capacity(method=method, model_display=preset.display, size_b=size,
                                per_gpu_gib=estimate.per_gpu_gib)
        result.append(best)
    return result


def own_card_advice(card_id: str, job: Optional[Dict[str, Any]] = None,
                    kb: Optional[Knowledge] = None) -> OwnCardAdvice:
    """The job (AdviceRequest fields; None or without model/method/seq_len: no job) judged on the customer's card."""
    kb = kb or load_knowledge()
    card = own_gpu(card_id)
    job = {k: v for k, v in (job or {}).items() if v is not None}
    if not (job.get("model") or job.get("size_b") or job.get("custom_arch")) or not job.get("method"):
        return OwnCardAdvice(card=card, capacity=_capacity(card, kb))
    job.setdefault("seq_len", CAPACITY_SEQ_LEN)
    count = int(job.pop("gpus", None) or 1)
    advice = advise(AdviceRequest.from_values(**job), kb)  # the cloud advice: the job as one card would run it
    estimate = advice.estimate
    if count > 1:
        return _on_several(card, count, advice, kb)
    status = recommend.classify(estimate.per_gpu_gib, card.usable_gib, estimate.high_gib)
    fixes = []
    if status != "fits":
        seen_smaller = False
        for kind, variant, extra in _variant_plans(advice.plan, advice.preset, kb):
            est = estimate_memory(variant)
            if recommend.classify(est.per_gpu_gib, card.usable_gib, est.high_gib) != "fits":
                continue
            if kind == "smaller_model":
                if seen_smaller:
                    continue
                seen_smaller = True
            fixes.append(Alternative(kind=kind, per_gpu_gib=est.per_gpu_gib, high_gib=est.high_gib, **extra))
    return OwnCardAdvice(card=card, advice=advice, status=status, fixes=fixes[:3])


def _on_several(card: OwnGpu, count: int, advice: Advice, kb: Knowledge) -> OwnCardAdvice:
    """The job on ``count`` of the customer's cards (round 8): DDP when a whole copy fits each card safely, else
    sharded (FSDP / ZeRO-3), memory per card; the one-card figure is kept only to say it does not apply."""
    single = advice.estimate
    layout = "ddp"
    estimate = estimate_memory(sharded_plan(advice.plan, count, "ddp"))
    if recommend.classify(estimate.per_gpu_gib, card.usable_gib, estimate.high_gib) != "fits":
        layout = "zero3"
        estimate = estimate_memory(sharded_plan(advice.plan, count, "zero3"))
    status = recommend.classify(estimate.per_gpu_gib, card.usable_gib, estimate.high_gib)
    return OwnCardAdvice(card=card, advice=advice.copy(update={"estimate": estimate}), status=status, gpus=count,
                         layout=layout, single_gib=single.per_gpu_gib)
