"""Two options side by side for the customer's current job (issue 13 #3): "LoRA or QLoRA, which is cheaper?",
"8B or 14B?", "H100 or A100 for this job?".

``compare_options(base, kind, options)`` runs :func:`bot.advisor.advice.advise` once per option with everything
else of the job unchanged and returns what a support engineer would put in two columns: memory (with the top of the
range), the recommended card and its price, time and cost when the volume is known, cost per million tokens, and for
a GPU comparison the fit status of the job on each of the two cards. Values the job lacks are filled with the
advisor's documented defaults and listed in ``assumed`` so the answer can say so.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Literal, Optional, Sequence, cast

from pydantic import BaseModel

from bot.advisor.advice import AdviceRequest, advise
from bot.advisor.knowledge import InputError, Knowledge, load_knowledge

Kind = Literal["method", "model", "gpu"]
DEFAULT_SEQ_LEN = 2048      # the sequence length the form suggests ("2048 is a good start")
DEFAULT_METHOD = "qlora"    # the cheapest method, what the form assumes on "I don't know"


class OptionResult(BaseModel):
    option: str                     # method id, preset id or card id
    label: str                      # how the answer names it ("QLoRA", "Llama 3.1 8B", "H100")
    per_gpu_gib: float
    high_gib: float
    card_id: Optional[str] = None   # recommended card (method/model) or the compared card (gpu)
    card_name: Optional[str] = None
    status: Optional[str] = None    # fits | tight | no_fit on card_id
    gpus: int = 1                   # > 1: a multi-GPU plan
    price_usd_hour: Optional[float] = None
    price_usd_hour_with_vat: Optional[float] = None
    cost_per_million_tokens_usd: Optional[float] = None
    hours: Optional[float] = None
    cost_usd_with_vat: Optional[float] = None


class Comparison(BaseModel):
    kind: Kind
    model_display: Optional[str] = None   # the job's model (method/gpu comparisons)
    method: Optional[str] = None          # the job's method (model/gpu comparisons)
    seq_len: int
    volume_tokens: Optional[float] = None
    assumed: List[str] = []               # "method", "seq_len" filled with defaults
    options: List[OptionResult]
    cheaper: Optional[str] = None         # the option that costs less for the job (total, else per token)
    less_memory: Optional[str] = None


def _size(option: str) -> Optional[float]:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*b", str(option).strip().lower())
    return float(match.group(1)) if match else None


def compare_options(base: Dict[str, Any], kind: str, options: Sequence[str],
                    kb: Optional[Knowledge] = None) -> Comparison:
    """Compare two options for the job described by ``base`` (AdviceRequest fields, e.g. from the slots).

    Raises InputError("model", "missing_model") when a method or GPU comparison has no model to work on, and for
    any option the advisor cannot place (an unknown model, a method that does not exist).
    """
    kb = kb or load_knowledge()
    if kind not in ("method", "model", "gpu") or len(options) != 2:
        raise InputError("compare", "bad_value", f"expected two options of one kind, got {kind!r} {options!r}",
                         name="compare")
    if kind == "gpu":
        known = {card.id for card in kb.gpus}
        unknown = [option for option in options if option not in known]
        if unknown:
            raise InputError("compare", "bad_value", f"unknown GPU {unknown[0]!r}", name=str(unknown[0]))
    if kind == "method" and not set(options) <= {"full", "lora", "qlora"}:
        raise InputError("compare", "bad_method", f"unknown method in {options!r}", value=", ".join(map(str, options)))
    job = {k: v for k, v in base.items() if v is not None}
    assumed: List[str] = []
    if kind != "method" and not job.get("method"):
        job["method"] = DEFAULT_METHOD
        assumed.append("method")
    if not job.get("seq_len"):
        job["seq_len"] = DEFAULT_SEQ_LEN
        assumed.append("seq_len")
    if kind != "model" and not (job.get("model") or job.get("size_b") or job.get("custom_arch")):
        raise InputError("model", "missing_model", "a comparison needs the model of the job")

    results: List[OptionResult] = []
    shared = None
    for option in options:
        request = dict(job)
        if kind == "method":
            request["method"] = option
        elif kind == "model":
            request.pop("custom_arch", None)
            size = _size(option)
            request.update(model=None, size_b=size) if size is not None else request.update(model=option, size_b=None)
        advice = advise(AdviceRequest.from_values(**request), kb)
        shared = shared or advice
        results.append(_result(kind, option, advice, kb))
    assert shared is not None           # two options, checked above
    comparison = Comparison(kind=cast(Kind, kind), seq_len=shared.plan.seq_len, volume_tokens=shared.volume_tokens,
                            assumed=assumed, options=results,
                            model_display=None if kind == "model" else shared.preset.display,
                            method=None if kind == "method" else shared.plan.method)
    comparison.cheaper = _cheaper(results)
    a, b = results
    if abs(a.per_gpu_gib - b.per_gpu_gib) > 0.05 * max(a.per_gpu_gib, b.per_gpu_gib):
        comparison.less_memory = min(results, key=lambda r: r.per_gpu_gib).option
    return comparison


def _result(kind: str, option: str, advice, kb: Knowledge) -> OptionResult:
    estimate = advice.estimate
    if kind == "model":
        label = advice.preset.display
    elif kind == "method":
        label = {"full": "full", "lora": "LoRA", "qlora": "QLoRA"}[option]
    else:
        label = kb.gpu(option).name
    result = OptionResult(option=option, label=label, per_gpu_gib=estimate.per_gpu_gib, high_gib=estimate.high_gib)
    if kind == "gpu":
        card = next(c for c in advice.cards if c.card_id == option)
    else:
        card = advice.recommendation.card if advice.recommendation is not None else None
    if card is not None:
        result.card_id, result.card_name, result.status = card.card_id, card.name, card.status
        result.price_usd_hour, result.price_usd_hour_with_vat = card.price_usd_hour, card.price_usd_hour_with_vat
        result.cost_per_million_tokens_usd = card.cost_per_million_tokens_usd
        if card.status != "no_fit":
            result.hours, result.cost_usd_with_vat = card.hours, card.cost_usd_with_vat
    elif advice.multi_gpu is not None:
        multi = advice.multi_gpu
        result.card_id, result.card_name = multi.card_id, multi.name
        result.status, result.gpus = multi.status, multi.count
        result.price_usd_hour = multi.price_usd_hour_total
        result.price_usd_hour_with_vat = multi.price_usd_hour_total_with_vat
        result.cost_per_million_tokens_usd = multi.cost_per_million_tokens_usd
        result.hours, result.cost_usd_with_vat = multi.hours, multi.cost_usd_with_vat
    return result


def _cheaper(results: List[OptionResult]) -> Optional[str]:
    usable = [r for r in results if r.status in ("fits", "tight")]
    if len(usable) == 1:
        return usable[0].option
    if len(usable) < 2:
        return None
    if all(r.cost_usd_with_vat is not None for r in usable):
        return min(usable, key=lambda r: cast(float, r.cost_usd_with_vat)).option
    if all(r.cost_per_million_tokens_usd is not None for r in usable):
        return min(usable, key=lambda r: cast(float, r.cost_per_million_tokens_usd)).option
    return None


def cards_within_price(kb: Knowledge, usd_hour: float, *, includes_vat: bool = False,
                       job: Optional[Dict[str, Any]] = None) -> List[str]:
    """The catalogue cards whose hourly price (without VAT, or with it when ``includes_vat``) is at or under
    ``usd_hour``, cheapest first; with ``job`` (AdviceRequest fields) only those that hold it on one GPU (round 8)."""
    def price(card: Any) -> float:
        return kb.pricing.with_vat(card.price_usd_hour) if includes_vat else card.price_usd_hour

    cards = sorted((card for card in kb.gpus if price(card) <= usd_hour + 1e-9),
                   key=lambda card: (price(card), card.vram_gb))
    if not job:
        return [card.id for card in cards]
    holding = {fit.card_id for fit in advise(AdviceRequest.from_values(**job)).cards
               if fit.status in ("fits", "tight") and fit.gpus == 1}
    return [card.id for card in cards if card.id in holding]
