"""The data the advisor works on: a training plan in, a memory estimate out.

Pydantic v1 models (rasa 3.6 pins pydantic<1.10.10). The plan schema is exactly the one of
``../shared/calibration/vram_cases.yaml`` so every published measurement can be replayed.
"""
from __future__ import annotations

from typing import Dict, List, Literal, Optional

from pydantic import BaseModel, Field, root_validator, validator

Method = Literal["full", "lora", "qlora"]
Precision = Literal["bf16", "mixed", "fp32"]
Optimizer = Literal["adamw", "adamw_8bit", "paged_adamw", "paged_adamw_8bit", "sgd"]
LoraTargets = Literal["attention_qv", "attention", "all_linear"]
Attention = Literal["flash", "eager"]
Sharding = Literal["none", "ddp", "fsdp", "zero2", "zero3"]
Offload = Literal["none", "optimizer", "optimizer_and_params"]
Lang = Literal["fa", "tr", "en"]
# Extensions beyond the calibration case schema (all default to the plain Hugging Face stack):
CrossEntropy = Literal["standard", "chunked", "fused"]

MAX_SEQ_LEN = 1_000_000


class Strict(BaseModel):
    class Config:
        extra = "forbid"
        allow_mutation = False


class ModelArch(Strict):
    """A decoder-only transformer as its config.json describes it."""

    name: str
    params: int = Field(..., gt=0, lt=5_000_000_000_000)
    layers: int = Field(..., gt=0, le=1000)
    hidden: int = Field(..., gt=0, le=131072)
    heads: int = Field(..., gt=0)
    kv_heads: int = Field(..., gt=0)
    intermediate: int = Field(..., gt=0)
    vocab: int = Field(..., gt=0, le=2_000_000)
    tied_embeddings: bool
    mlp: Literal["swiglu", "gelu"]

    @root_validator(skip_on_failure=True)
    def _heads_consistent(cls, values):
        if values["heads"] % values["kv_heads"]:
            raise ValueError("heads must be a multiple of kv_heads")
        return values


class LoraSpec(Strict):
    rank: int = Field(16, gt=0, le=4096)
    targets: LoraTargets = "all_linear"


class TrainingPlan(Strict):
    """One fine-tuning job. Field names and values follow the calibration case schema."""

    model: ModelArch
    method: Method
    precision: Precision
    optimizer: Optimizer = "adamw"
    lora: Optional[LoraSpec] = None
    seq_len: int = Field(..., gt=0, le=MAX_SEQ_LEN)
    micro_batch: int = Field(1, gt=0, le=4096)
    gradient_checkpointing: bool = True
    attention: Attention = "flash"
    gpus: int = Field(1, gt=0, le=4096)
    sharding: Sharding = "none"
    offload: Offload = "none"
    # --- extensions (defaults = plain HF transformers/PEFT training; see docs/estimate.md) ---
    # standard: full fp32 cross-entropy over b*s*V logits; chunked: torchtune CEWithChunkedOutputLoss;
    # fused: Liger / cut-cross-entropy / Unsloth kernels that never hold the full fp32 logits
    cross_entropy: CrossEntropy = "standard"
    compiled: bool = False                 # torch.compile over model and loss
    optimizer_in_backward: bool = False    # optimizer step fused into backward (torchtune)
    activation_offload: bool = False       # checkpointed activations moved to CPU memory
    fsdp_mixed_wrap: bool = False          # FSDP units mixing frozen and trainable params (use_orig_params)

    @root_validator(skip_on_failure=True)
    def _lora_matches_method(cls, values):
        method, lora, model = values["method"], values.get("lora"), values["model"]
        if method in ("lora", "qlora") and lora is None:
            raise ValueError("lora settings are required for method lora/qlora")
        if lora is not None and lora.rank > model.hidden:
            raise ValueError(f"lora rank {lora.rank} is above the hidden size {model.hidden}")
        return values


class MemoryEstimate(Strict):
    """Per-GPU peak memory of one training step.

    components_gib keys (always all present, GiB = 2**30 bytes):
    weights, adapters, gradients, optimizer, activations, logits, overhead
    """

    per_gpu_gib: float
    components_gib: Dict[str, float]
    low_gib: float
    high_gib: float
    assumptions: List[str] = []  # machine-readable codes, rendered to text from knowledge/

    @validator("components_gib")
    def _all_components(cls, v):
        missing = set(COMPONENTS) - set(v)
        if missing:
            raise ValueError(f"missing components: {sorted(missing)}")
        return v


COMPONENTS = ("weights", "adapters", "gradients", "optimizer", "activations", "logits", "overhead")
