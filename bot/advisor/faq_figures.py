"""The figures FAQ answers state (knowledge/faq_figures.yml), computed from the estimator, the throughput model and
the price list so that an FAQ never contradicts an estimate (issue 14 #4). Pure: numbers in, numbers out; the
texts are filled by bot.present.render.faq_text."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Dict, Literal, Optional, TypeVar

from pydantic import BaseModel, root_validator

from bot.advisor import throughput
from bot.advisor.estimator import estimate_memory
from bot.advisor.knowledge import DEFAULT_ROOT, Knowledge, load_knowledge
from bot.advisor.plans import default_plan
from bot.advisor.vat import price_with_vat
from bot.knowledge import parse_file

T = TypeVar("T")

Kind = Literal["memory", "ratio", "price", "hours_cost", "speedup", "saving_pct", "url"]


class Figure(BaseModel):
    kind: Kind
    model: Optional[str] = None
    method: Optional[str] = None
    method_a: Optional[str] = None
    method_b: Optional[str] = None
    seq_len: int = 2048
    micro_batch: int = 1
    value: Literal["per_gpu", "high", "weights", "states"] = "per_gpu"
    card: Optional[str] = None
    card_a: Optional[str] = None
    card_b: Optional[str] = None
    vat: bool = False
    hours: Optional[float] = None
    path: Optional[str] = None

    class Config:
        extra = "forbid"

    @root_validator(skip_on_failure=True)
    def _complete(cls, values):
        needs = {"memory": ("model", "method"), "ratio": ("model", "method_a", "method_b"), "price": ("card",),
                 "hours_cost": ("card", "hours"), "speedup": ("card_a", "card_b", "model", "method"),
                 "saving_pct": ("card_a", "card_b", "model", "method"), "url": ("path",)}[values["kind"]]
        missing = [name for name in needs if values.get(name) is None]
        if missing:
            raise ValueError(f"{values['kind']} needs {', '.join(missing)}")
        return values


class FiguresFile(BaseModel):
    figures: Dict[str, Figure]


@lru_cache(maxsize=4)
def load_figures(root: Path = DEFAULT_ROOT) -> Dict[str, Figure]:
    return parse_file(FiguresFile, Path(root) / "faq_figures.yml").figures


def _given(value: Optional[T]) -> T:
    """A field that Figure._complete requires for the figure's kind."""
    assert value is not None
    return value


def _plan(kb: Knowledge, model: Optional[str], method: Optional[str], seq_len: int, micro_batch: int = 1):
    return default_plan(kb.model(_given(model)).arch, _given(method), seq_len, micro_batch=micro_batch)


def compute(figure: Figure, kb: Optional[Knowledge] = None) -> float:
    """The number a figure stands for (GB as the estimator reports them, USD, a ratio or a percentage)."""
    kb = kb or load_knowledge()
    if figure.kind == "url":
        raise ValueError(f"{figure.kind} figures are not numbers")
    if figure.kind == "memory":
        estimate = estimate_memory(_plan(kb, figure.model, figure.method, figure.seq_len))
        parts = estimate.components_gib
        return {"per_gpu": estimate.per_gpu_gib, "high": estimate.high_gib, "weights": parts["weights"],
                "states": parts["weights"] + parts["gradients"] + parts["optimizer"]}[figure.value]
    if figure.kind == "ratio":
        a = estimate_memory(_plan(kb, figure.model, figure.method_a, figure.seq_len)).per_gpu_gib
        b = estimate_memory(_plan(kb, figure.model, figure.method_b, figure.seq_len)).per_gpu_gib
        return a / b
    vat_rate = kb.pricing.vat_rate if figure.vat else 0.0
    if figure.kind == "price":
        return price_with_vat(kb.gpu(_given(figure.card)).price_usd_hour, vat_rate, to_cent=True)
    if figure.kind == "hours_cost":  # VAT on the total, as invoiced
        return price_with_vat(_given(figure.hours) * kb.gpu(_given(figure.card)).price_usd_hour, vat_rate, to_cent=True)
    plan = _plan(kb, figure.model, figure.method, figure.seq_len, figure.micro_batch)
    card_a, card_b = kb.gpu(_given(figure.card_a)), kb.gpu(_given(figure.card_b))
    if figure.kind == "speedup":
        return throughput.tokens_per_second(plan, card_a) / throughput.tokens_per_second(plan, card_b)
    if figure.kind == "saving_pct":
        a = throughput.cost_per_million_tokens(plan, card_a)
        b = throughput.cost_per_million_tokens(plan, card_b)
        return (1 - a / b) * 100
    raise ValueError(f"{figure.kind} figures are not numbers")
