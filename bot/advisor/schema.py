"""The data the advisor works on: a training plan in, a memory estimate out.

Pydantic v1 models (rasa 3.6 pins pydantic<1.10.10). The plan schema is the one of
``knowledge/calibration/vram_cases.yaml`` so every published measurement can be replayed; the architecture fields
added for 2025-2026 models (explicit head_dim, biases, QK-norm, per-layer attention kinds, Mixture-of-Experts,
a frozen vision tower, logit soft-capping) all default to the plain dense decoder, so older cases read unchanged.
"""
from __future__ import annotations

from typing import Dict, List, Literal, Optional

from types import SimpleNamespace

from pydantic import BaseModel, Field, root_validator, validator

Method = Literal["full", "lora", "qlora"]
Precision = Literal["bf16", "mixed", "fp32"]
Optimizer = Literal["adamw", "adamw_8bit", "paged_adamw", "paged_adamw_8bit", "sgd"]
LoraTargets = Literal["attention_qv", "attention", "all_linear"]
# What "all_linear" LoRA adapts in a Mixture-of-Experts layer (bot/advisor/estimator.py, docs/estimate.md):
#   attention               only attention (and linear-attention) projections on MoE layers
#   attention_dense_shared  + the dense layers' MLP and the shared experts (default: what PEFT's "all-linear" reaches
#                           on Transformers v5, whose fused 3-D expert tensors are not nn.Linear; Axolotl
#                           docs/expert_quantization.qmd; the router stays frozen as in Unsloth/Axolotl/torchtune)
#   all_experts             + one adapter per routed expert (adapter size x experts; torchtune LoRAGroupedExperts,
#                           Axolotl lora_target_parameters)
MoeLoraTargets = Literal["attention", "attention_dense_shared", "all_experts"]
# QLoRA of a MoE: are the routed experts really stored in NF4?
#   bf16  stock bitsandbytes + PEFT on Transformers v5 cannot quantize fused expert tensors, so they load in bf16
#         (default; Axolotl docs/expert_quantization.qmd)
#   nf4   the framework quantizes them itself (Axolotl quantize_moe_experts, Unsloth kernels, Transformers v4
#         per-expert nn.Linear)
MoeQloraExperts = Literal["bf16", "nf4"]
ExpertDtype = Literal["bf16", "mxfp4"]
Attention = Literal["flash", "eager"]
Sharding = Literal["none", "ddp", "fsdp", "zero2", "zero3"]
Offload = Literal["none", "optimizer", "optimizer_and_params"]
Lang = Literal["fa", "tr", "en"]
# Extensions beyond the calibration case schema (all default to the plain Hugging Face stack):
CrossEntropy = Literal["standard", "chunked", "fused"]
# Training stacks (knowledge/stacks.yml, bot/advisor/stacks.py): hf = Transformers + PEFT + TRL as shipped.
Stack = Literal["hf", "unsloth", "axolotl", "torchtune", "nemo_automodel", "llama_factory"]
STACK_IDS = ("hf", "unsloth", "axolotl", "torchtune", "nemo_automodel", "llama_factory")

MAX_SEQ_LEN = 1_000_000


class Strict(BaseModel):
    class Config:
        extra = "forbid"
        allow_mutation = False


# Per-layer attention kinds, one letter per layer in a repeating cycle (``layer_pattern``):
#   F full causal attention        S sliding window (``sliding_window`` tokens)
#   C chunked local attention (Llama 4: attention inside fixed chunks of ``sliding_window`` tokens)
#   L linear attention (Gated DeltaNet: a fixed-size recurrent state instead of a key/value history)
# Examples: "F" (Llama), "SF" (Gemma 2, gpt-oss), "SSSSSF" (Gemma 3/4), "CCCF" (Llama 4), "LLLF" (Qwen3.5).
ATTENTION_KINDS = "FSCL"


class LinearAttention(Strict):
    """Gated DeltaNet shapes (config.json linear_num_key_heads, linear_num_value_heads, linear_key_head_dim,
    linear_value_head_dim, linear_conv_kernel_dim)."""

    key_heads: int = Field(..., gt=0)
    value_heads: int = Field(..., gt=0)
    key_head_dim: int = Field(..., gt=0)
    value_head_dim: int = Field(..., gt=0)
    conv_kernel: int = Field(4, ge=0, le=64)


class MoESpec(Strict):
    """Mixture-of-Experts MLP. A layer ``i`` (0-based) is MoE when ``i >= first_dense`` and
    ``(i + 1 - first_dense) % every == 0`` (Llama 4 interleave_moe_layer_step, Qwen decoder_sparse_step,
    DeepSeek first_k_dense_replace); the other layers have a dense MLP of width ``ModelArch.intermediate``."""

    experts: int = Field(..., gt=1, le=4096)              # routed experts per MoE layer
    experts_per_token: int = Field(..., gt=0)             # top-k
    expert_intermediate: int = Field(..., gt=0)           # moe_intermediate_size (intermediate_size for Mixtral)
    shared_experts: int = Field(0, ge=0, le=64)
    shared_intermediate: Optional[int] = Field(None, gt=0)   # width of one shared expert (default: expert width)
    shared_expert_gate: bool = False                     # Qwen MoE sigmoid gate on the shared expert (h -> 1)
    every: int = Field(1, gt=0)
    first_dense: int = Field(0, ge=0)
    router_bias: bool = False
    expert_bias: bool = False                            # gpt-oss: biases on gate_up and down of every expert
    expert_dtype: ExpertDtype = "bf16"                   # how the checkpoint stores the experts
    dequantize_for_training: bool = True                 # MXFP4 experts turned into bf16 when loaded to train
    # Transformers runs every routed expert on every token and zeroes the unselected ones through the router score
    # (modeling_llama4.py Llama4TextMoe.forward: "routed_in = hidden_states.repeat(router_scores.shape[1], 1)";
    # Axolotl's linearized Llama 4 experts keep that input, monkeypatch/models/llama4/modeling.py): activations follow
    # all experts, not the k selected ones (bot/advisor/activations.py)
    dense_dispatch: bool = False

    @root_validator(skip_on_failure=True)
    def _top_k(cls, values):
        if values["experts_per_token"] > values["experts"]:
            raise ValueError("experts_per_token must not exceed experts")
        return values


class ModelArch(Strict):
    """A decoder-only transformer as its config.json describes it.

    ``params`` counts the language model (embeddings, decoder, head); a multimodal checkpoint's vision tower is
    ``vision_params`` (stored, frozen, never fine-tuned by default). When ``params`` is not given it is computed
    from the shapes (bot/advisor/architecture.py count_params)."""

    name: str
    params: Optional[int] = Field(None, gt=0, lt=5_000_000_000_000)
    layers: int = Field(..., gt=0, le=1000)
    hidden: int = Field(..., gt=0, le=131072)
    heads: int = Field(..., gt=0)
    kv_heads: int = Field(..., gt=0)
    intermediate: int = Field(..., gt=0)
    vocab: int = Field(..., gt=0, le=2_000_000)
    tied_embeddings: bool
    mlp: Literal["swiglu", "gelu"]
    # --- extensions (defaults = the plain Llama-style decoder) ---
    head_dim: Optional[int] = Field(None, gt=0, le=4096)    # config head_dim; never derived when given
    qkv_bias: bool = False                                  # biases on q, k, v (Qwen2.x, gpt-oss)
    o_bias: bool = False                                    # bias on the output projection (gpt-oss)
    qk_norm: bool = False                                   # RMSNorm on q and k per head (Qwen3, Gemma 3/4)
    norms_per_layer: int = Field(2, ge=0, le=8)             # Gemma 2/3/4: pre- and post-norms = 4
    attention_sinks: bool = False                           # gpt-oss: one learned sink logit per head
    attention_output_gate: bool = False                     # Qwen3.5/Qwen3-Next: q_proj also emits a gate
    layer_pattern: str = Field("F", min_length=1, max_length=64)
    sliding_window: Optional[int] = Field(None, gt=0)
    global_head_dim: Optional[int] = Field(None, gt=0)      # Gemma 4 full-attention layers
    global_kv_heads: Optional[int] = Field(None, gt=0)
    global_shared_kv: bool = False                          # Gemma 4: K doubles as V on full-attention layers
    linear_attention: Optional[LinearAttention] = None
    moe: Optional[MoESpec] = None
    vision_params: int = Field(0, ge=0)
    final_logit_softcap: Optional[float] = Field(None, gt=0)   # Gemma 2/4: logits = cap * tanh(logits / cap)

    @root_validator(skip_on_failure=True)
    def _consistent(cls, values):
        if values["heads"] % values["kv_heads"]:
            raise ValueError("heads must be a multiple of kv_heads")
        pattern = values["layer_pattern"]
        bad = sorted(set(pattern) - set(ATTENTION_KINDS))
        if bad:
            raise ValueError(f"layer_pattern letters must be among {ATTENTION_KINDS}, got {''.join(bad)!r}")
        if ("S" in pattern or "C" in pattern) and not values.get("sliding_window"):
            raise ValueError("layer_pattern with S or C layers needs sliding_window")
        if "L" in pattern and values.get("linear_attention") is None:
            raise ValueError("layer_pattern with L layers needs linear_attention shapes")
        if values.get("global_kv_heads") and values["heads"] % values["global_kv_heads"]:
            raise ValueError("heads must be a multiple of global_kv_heads")
        if values.get("params") is None:
            from bot.advisor.architecture import count_params

            values["params"] = count_params(SimpleNamespace(**values))
        return values


class LoraSpec(Strict):
    rank: int = Field(16, gt=0, le=4096)
    targets: LoraTargets = "all_linear"
    moe_targets: MoeLoraTargets = "attention_dense_shared"   # only read for MoE models


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
    qlora_moe_experts: MoeQloraExperts = "bf16"   # QLoRA of a MoE: experts left in bf16 (stock) or really NF4
    # The software that runs the job: sets the speed (bot/advisor/throughput.py); its memory effects are the fields
    # above, written by bot/advisor/stacks.apply_stack from knowledge/stacks.yml.
    stack: Stack = "hf"

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
    # The same plan under the other reading of an assumption the stack decides (code -> per-GPU GiB), e.g.
    # {"qlora_moe_experts_nf4": 21.4} when the estimate assumed bf16 experts. Empty for dense models.
    alternatives_gib: Dict[str, float] = {}
    # gpt-oss and other MXFP4 checkpoints: GiB the loading GPU holds while the experts are dequantized to bf16
    # (Hugging Face trainers dequantize on one GPU before sharding). None when nothing is dequantized.
    load_peak_gib: Optional[float] = None

    @validator("components_gib")
    def _all_components(cls, v):
        missing = set(COMPONENTS) - set(v)
        if missing:
            raise ValueError(f"missing components: {sorted(missing)}")
        return v


COMPONENTS = ("weights", "adapters", "gradients", "optimizer", "activations", "logits", "overhead")
