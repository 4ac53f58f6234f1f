"""Training plans with the advisor's documented defaults (see docs/estimate.md).

* LoRA / QLoRA: bf16 frozen base (NF4 for QLoRA), AdamW, LoRA rank 16 on all linear layers,
  micro-batch 1, gradient checkpointing on, flash attention, one GPU.
* Full fine-tuning: precision "mixed" (fp32 master weights + fp32 AdamW states, about 16 B/param
  before activations: the Hugging Face Trainer AMP regime), gradient checkpointing on, micro-batch 1.
* More than one GPU: DDP when the model state fits on each card (what people run), ZeRO-3 / FSDP only when it does
  not (bot/advisor/advice.py chooses; a bare plan with several GPUs and no layout gets ZeRO-3).
* The stack (knowledge/stacks.yml): Transformers + PEFT + TRL unless one is given; ``stack=`` writes that stack's
  expert quantization, loss and checkpointing mode into the plan (bot/advisor/stacks.py).
* Mixture-of-Experts: LoRA "all linear" adapts attention, dense-layer MLPs and shared experts, not the routed experts
  (``moe_targets="attention_dense_shared"``, what PEFT's "all-linear" reaches on Transformers v5 fused experts);
  QLoRA leaves the fused experts in bf16 (``qlora_moe_experts="bf16"``, stock bitsandbytes) and the estimate gives
  the NF4 figure beside it. Both can be changed per plan.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Mapping, Optional, cast

from pydantic import ValidationError

from bot.advisor.schema import (LoraSpec, LoraTargets, Method, ModelArch, MoeLoraTargets, MoeQloraExperts, Precision,
                                TrainingPlan)

DEFAULT_LORA_RANK = 16
DEFAULT_LORA_TARGETS: LoraTargets = "all_linear"
DEFAULT_MULTI_GPU_SHARDING = "zero3"

_PLAN_FIELDS = set(TrainingPlan.__fields__)


def default_precision(method: str) -> Precision:
    return "mixed" if method == "full" else "bf16"


DEFAULT_MOE_LORA_TARGETS = "attention_dense_shared"
DEFAULT_QLORA_MOE_EXPERTS = "bf16"


def _default_lora(arch: ModelArch, moe_targets: str = DEFAULT_MOE_LORA_TARGETS) -> LoraSpec:
    # a string: pydantic checks it against MoeLoraTargets when the spec is built
    return LoraSpec(rank=min(DEFAULT_LORA_RANK, arch.hidden), targets=DEFAULT_LORA_TARGETS,
                    moe_targets=cast(MoeLoraTargets, moe_targets))


def default_plan(arch: ModelArch, method: str, seq_len: int, *, gpus: int = 1,
                 micro_batch: int = 1, moe_targets: str = DEFAULT_MOE_LORA_TARGETS,
                 qlora_moe_experts: str = DEFAULT_QLORA_MOE_EXPERTS, stack: Optional[str] = None,
                 sharding: str = DEFAULT_MULTI_GPU_SHARDING) -> TrainingPlan:
    """The plan the advisor assumes when the user only gives model, method and sequence length (the MoE options
    only matter for a Mixture-of-Experts model)."""
    if method not in ("full", "lora", "qlora"):
        raise ValueError(f"method: expected full, lora or qlora, got {method!r}")
    plan = TrainingPlan(
        model=arch,
        method=cast(Method, method),        # checked just above
        precision=default_precision(method),
        optimizer="adamw",
        lora=None if method == "full" else _default_lora(arch, moe_targets),
        seq_len=seq_len,
        micro_batch=micro_batch,
        gradient_checkpointing=True,
        attention="flash",
        gpus=1,
        sharding="none",
        offload="none",
        qlora_moe_experts=cast(MoeQloraExperts, qlora_moe_experts),   # a string: pydantic checks it
    )
    if stack is not None:
        from bot.advisor.stacks import apply_stack

        plan = apply_stack(plan, stack)
    return sharded_plan(plan, gpus, sharding) if gpus > 1 else plan


def sharded_plan(plan: TrainingPlan, gpus: int, sharding: str = DEFAULT_MULTI_GPU_SHARDING) -> TrainingPlan:
    """The same job spread over ``gpus`` GPUs (one GPU means no sharding)."""
    if not isinstance(gpus, int) or gpus < 1:
        raise ValueError(f"gpus: expected a whole number >= 1, got {gpus!r}")
    if sharding not in ("ddp", "fsdp", "zero2", "zero3"):
        raise ValueError(f"sharding: expected ddp, fsdp, zero2 or zero3, got {sharding!r}")
    data = plan.dict()
    data.update(gpus=gpus, sharding=sharding if gpus > 1 else "none")
    return TrainingPlan(**data)


def _field_error(exc: ValidationError, prefix: str = "") -> ValueError:
    """A ValueError whose message starts with the dotted name of the bad field."""
    parts = []
    for err in exc.errors():
        loc = [str(x) for x in err["loc"] if x != "__root__"]
        if not loc:  # a cross-field check: name the first field its message mentions
            words = err["msg"].replace(",", " ").split()
            loc = [next((w for w in words if w in _PLAN_FIELDS or w in ModelArch.__fields__), "plan")]
        parts.append(f"{prefix}{'.'.join(loc)}: {err['msg']}")
    return ValueError("; ".join(parts))


def _model_field(model: Any, resolve_preset: Callable[[str], ModelArch]) -> ModelArch:
    """A plan's ``model``: a preset name, a ModelArch or its dict (errors name the field)."""
    if isinstance(model, str):
        try:
            arch = resolve_preset(model)
        except Exception as exc:  # the resolver's own error type; the field name is what matters
            raise ValueError(f"model: unknown model preset {model!r} ({exc})") from exc
        if not isinstance(arch, ModelArch):
            raise ValueError(f"model: preset {model!r} did not resolve to a model architecture")
        return arch
    if isinstance(model, ModelArch):
        return model
    if isinstance(model, Mapping):
        try:
            return ModelArch(**model)
        except ValidationError as exc:
            raise _field_error(exc, "model.") from exc
        except TypeError as exc:
            raise ValueError(f"model: {exc}") from exc
    raise ValueError(f"model: expected a preset name or a mapping, got {type(model).__name__}")


def _fill_from_stack(fields: Dict[str, Any]) -> None:
    """A named stack fills in what the plan does not say (its expert quantization, loss, checkpointing mode)."""
    from bot.advisor.stacks import STACK_PLAN_FIELDS, load_stacks

    stacks = load_stacks()
    if fields["stack"] not in stacks.stacks:
        raise ValueError(f"stack: expected one of {', '.join(stacks.stacks)}, got {fields['stack']!r}")
    settings = stacks.get(fields["stack"]).plan.dict()
    for name in STACK_PLAN_FIELDS:
        fields.setdefault(name, settings[name])


def plan_from_mapping(data: Mapping[str, Any], resolve_preset: Callable[[str], ModelArch]) -> TrainingPlan:
    """Build a plan from a calibration-style dict.

    ``model`` is a full ModelArch dict or a preset name resolved by ``resolve_preset``. Optional
    fields take the defaults of :func:`default_plan` (for lora/qlora a missing ``lora`` becomes rank
    16 on all linear layers). Keys ending in ``_note`` are annotations and are ignored. Errors are
    ``ValueError`` whose message starts with the offending field name.
    """
    if not isinstance(data, Mapping):
        raise ValueError(f"plan: expected a mapping, got {type(data).__name__}")
    # None means "not given": the default applies
    fields: Dict[str, Any] = {k: v for k, v in data.items() if not str(k).endswith("_note") and v is not None}
    unknown = sorted(set(fields) - _PLAN_FIELDS)
    if unknown:
        raise ValueError(f"{unknown[0]}: unknown plan field (known: {', '.join(sorted(_PLAN_FIELDS))})")
    for required in ("model", "method", "seq_len"):
        if fields.get(required) is None:
            raise ValueError(f"{required}: missing required field")

    arch = _model_field(fields["model"], resolve_preset)

    method = fields["method"]
    if method not in ("full", "lora", "qlora"):
        raise ValueError(f"method: expected full, lora or qlora, got {method!r}")
    fields["model"] = arch
    fields.setdefault("precision", default_precision(method))
    if method != "full" and fields.get("lora") is None:
        fields["lora"] = _default_lora(arch)
    if fields.get("stack") is not None:
        _fill_from_stack(fields)
    if fields.get("sharding") is None:
        gpus = fields.get("gpus", 1)
        fields["sharding"] = DEFAULT_MULTI_GPU_SHARDING if isinstance(gpus, int) and gpus > 1 else "none"
    try:
        return TrainingPlan(**fields)
    except ValidationError as exc:
        raise _field_error(exc) from exc
