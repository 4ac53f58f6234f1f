"""Training stacks (Transformers+PEFT+TRL, Unsloth, Axolotl, torchtune, NeMo AutoModel) from knowledge/stacks.yml.

A stack changes what it really changes, and nothing else: whether a QLoRA run quantizes a Mixture-of-Experts model's
fused experts, how the loss holds the logits, whether checkpointed activations are offloaded, which multi-GPU layouts
it runs; its speed factors are in knowledge/calibration/throughput_model.yml (fitted to published runs). Each effect
carries its source in the data file. :func:`apply_stack` writes a stack's settings into a plan; the estimator and the
throughput model read the plan as before.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Optional, Tuple, Union

from pydantic import BaseModel, Field, root_validator, validator

from bot.advisor.schema import STACK_IDS, CrossEntropy, MoeQloraExperts, TrainingPlan
from bot.knowledge import LocalizedText, parse_file

DEFAULT_PATH = Path(__file__).resolve().parents[2] / "knowledge" / "stacks.yml"
LANGS = ("fa", "tr", "en")
LAYOUTS = ("ddp", "fsdp", "zero2", "zero3")
# The plan fields a stack may set (bot/advisor/schema.py TrainingPlan).
STACK_PLAN_FIELDS = ("qlora_moe_experts", "cross_entropy", "activation_offload")


class _Strict(BaseModel):
    class Config:
        extra = "forbid"
        allow_mutation = False


class Effect(_Strict):
    effect: str = Field(..., min_length=3)
    source: str = Field(..., min_length=8)
    quote: str = Field(..., min_length=8)


class StackPlan(_Strict):
    qlora_moe_experts: MoeQloraExperts
    cross_entropy: CrossEntropy
    activation_offload: bool


class Stack(_Strict):
    id: str
    name: str
    words: List[str] = Field(..., min_items=1)
    plan: StackPlan
    layouts: List[str] = []
    effects: List[Effect] = Field(..., min_items=1)

    @validator("layouts", each_item=True)
    def _layout(cls, v):
        if v not in LAYOUTS:
            raise ValueError(f"layout must be one of {LAYOUTS}, got {v!r}")
        return v


StackText = LocalizedText  # the one text model of the knowledge layer (bot/knowledge/texts.py)


class Stacks(_Strict):
    default: str
    stacks: Dict[str, Stack]
    candidates: List[str]
    texts: Dict[str, StackText]

    @root_validator(pre=True)
    def _ids(cls, values):
        stacks = values.get("stacks") or {}
        values["stacks"] = {sid: {**data, "id": sid} for sid, data in stacks.items()} if isinstance(stacks, dict) \
            else stacks
        return values

    @root_validator(skip_on_failure=True)
    def _consistent(cls, values):
        ids = set(values["stacks"])
        if ids != set(STACK_IDS):
            raise ValueError(f"stacks must be exactly {sorted(STACK_IDS)} (schema.STACK_IDS), got {sorted(ids)}")
        for sid in [values["default"], *values["candidates"]]:
            if sid not in ids:
                raise ValueError(f"unknown stack {sid!r}")
        return values

    def get(self, stack_id: str) -> Stack:
        return self.stacks[stack_id]

    def text(self, key: str, lang: str, **params) -> str:
        entry = self.texts[key]
        return getattr(entry, lang if lang in LANGS else "en").format(**params)

    def word_table(self) -> List[Tuple[str, str]]:
        """(folded word, stack id), longest first, for bot/text/stack_names.py."""
        pairs = [(word.casefold(), sid) for sid, stack in self.stacks.items() for word in stack.words]
        return sorted(pairs, key=lambda pair: -len(pair[0]))


@lru_cache(maxsize=4)
def load_stacks(path: Union[str, Path, None] = None) -> Stacks:
    """knowledge/stacks.yml, validated (a bad file raises KnowledgeError, a ValueError naming file and field)."""
    return parse_file(Stacks, Path(path) if path is not None else DEFAULT_PATH)


def stack(stack_id: Optional[str] = None) -> Stack:
    stacks = load_stacks()
    return stacks.get(stack_id or stacks.default)


def plan_settings(stack_id: str) -> Dict[str, object]:
    """The TrainingPlan fields the stack sets."""
    return stack(stack_id).plan.dict()


def apply_stack(plan: TrainingPlan, stack_id: str, *, keep: Tuple[str, ...] = ()) -> TrainingPlan:
    """The same plan run with ``stack_id``: its expert quantization, loss and checkpointing mode (fields in ``keep``
    stay as the plan has them). A sharded layout the stack does not run becomes one it does."""
    settings = {k: v for k, v in plan_settings(stack_id).items() if k not in keep}
    data = plan.dict()
    data.update(settings, stack=stack_id)
    layouts = stack(stack_id).layouts
    if plan.gpus > 1 and data["sharding"] not in layouts and layouts:
        sharded = [x for x in layouts if x != "ddp"]
        data["sharding"] = sharded[0] if data["sharding"] != "ddp" and sharded else layouts[0]
    return TrainingPlan(**data)


def runs_on(stack_id: str, gpus: int) -> bool:
    """Whether the stack runs a job on this many GPUs."""
    return gpus <= 1 or bool(stack(stack_id).layouts)
