"""What one decoder block holds per token, and the shapes behind it (pure helpers of bot/advisor/estimator.py).

* :func:`shapes`: embedding/head/decoder parameter split, the largest block, routed expert parameters;
* :func:`adapter_params`: LoRA parameters over the targeted linear layers (x experts when each routed expert is
  adapted);
* :func:`activation_bytes_per_token_layer`: bytes saved for backward per token in one block, op by op;
* :func:`backward_working_bytes_per_token`: the transient gradients while one block runs backward;
* :func:`stream_bytes`: the residual stream's dtype.

The formulas, with their sources, are in bot/advisor/FORMULA.md.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, Tuple

from bot.advisor import architecture as arch
from bot.advisor.schema import ModelArch, MoESpec, TrainingPlan

BF16_BYTES = 2      # IEEE bfloat16 / fp16
FP32_BYTES = 4

# MoE router per token (transformers MixtralSparseMoeBlock / Qwen3MoeSparseMoeBlock / GptOssTopKRouter): 16-bit
# router logits and the fp32 softmax saved for backward, one value per expert.
ROUTER_BYTES_PER_EXPERT = BF16_BYTES + FP32_BYTES


@dataclass(frozen=True)
class Shapes:
    head_dim: int
    q_dim: int
    kv_dim: int
    embed_params: int      # input embedding
    head_params: int       # separate LM head (0 when tied)
    linear_params: int     # everything else (decoder blocks + norms), from the plan's param count
    layer_params: float    # the largest block (linear_params / layers for a uniform dense model)
    expert_params: int     # routed experts of all MoE layers (0 for dense models)
    variants: Tuple[Tuple[str, bool, int], ...]


def shapes(m: ModelArch) -> Shapes:
    head_dim = arch.head_dim(m)
    kv_dim = head_dim * m.kv_heads
    embed = m.vocab * m.hidden
    head = 0 if m.tied_embeddings else m.vocab * m.hidden
    assert m.params is not None     # ModelArch's validator counts it when the config does not state it
    # The plan's total is authoritative (biases, norms, padded vocabularies, parallel blocks);
    # whatever is not embedding/head lives in the decoder blocks.
    linear = max(m.params - embed - head, 0)
    variants = arch.block_variants(m)
    layer = linear / m.layers
    experts = 0
    if m.moe is not None or len(variants) > 1:
        # blocks differ (MoE and dense layers, linear and full attention): sharded runs gather the largest one
        routed = m.moe.experts if m.moe is not None else 0      # a MoE variant exists only when m.moe does
        by_variant = {(kind, moe): arch.attention_params(m, kind) + m.norms_per_layer * m.hidden
                      + (arch.router_params(m) + routed * arch.expert_params(m) + arch.shared_expert_params(m)
                         if moe else arch.dense_mlp_params(m, m.intermediate))
                      for kind, moe, _ in variants}
        layer = max(layer, max(by_variant.values())) if m.moe is not None else layer
        experts = arch.routed_expert_params_total(m)
    return Shapes(head_dim, m.heads * head_dim, kv_dim, embed, head, linear, layer, experts, variants)


def module_shapes(m: ModelArch, s: Shapes, kind: str = "F", moe_layer: bool = False) -> Dict[str, Tuple[int, int]]:
    """(in_features, out_features) of each linear layer of one decoder block (first of its copies)."""
    return {name: (i, o) for name, (i, o, _) in arch.module_shapes(m, kind, moe_layer).items()}


LORA_TARGET_MODULES = {
    "attention_qv": ("q", "v"),
    "attention": ("q", "k", "v", "o"),
    "all_linear": ("q", "k", "v", "o", "gate", "up", "down", "fc1", "fc2"),
}
_MLP_NAMES = ("gate", "up", "down", "fc1", "fc2")


def _lora_targets(plan: TrainingPlan, kind: str, moe_layer: bool) -> frozenset:
    """Names of the linear layers LoRA adapts in one block (see schema.MoeLoraTargets for MoE models)."""
    if plan.lora is None or plan.method == "full":
        return frozenset()
    return _targets(plan.lora.targets, kind, plan.model.moe is not None, plan.lora.moe_targets)


@lru_cache(maxsize=64)
def _targets(targets: str, kind: str, is_moe_model: bool, moe_targets: str) -> frozenset:
    if kind == "L":
        # Gated DeltaNet projections are not q_proj/k_proj/v_proj/o_proj: only "all-linear" reaches them
        attn = {"qkv", "z", "o"} if targets == "all_linear" else set()
    else:
        attn = set(LORA_TARGET_MODULES[targets]) - set(_MLP_NAMES)
    if targets != "all_linear":
        return frozenset(attn)
    if not is_moe_model:
        return frozenset(attn | set(_MLP_NAMES))
    if moe_targets == "attention":
        return frozenset(attn)
    names = attn | set(_MLP_NAMES) | {"shared_" + n for n in _MLP_NAMES}
    if moe_targets == "all_experts":
        names |= {"expert_" + n for n in _MLP_NAMES}
    return frozenset(names)


def adapter_params(plan: TrainingPlan) -> int:
    """LoRA parameters: rank * (in + out) for every targeted linear layer of every block (x experts when every
    routed expert gets its own adapter)."""
    if plan.lora is None or plan.method == "full":
        return 0
    m = plan.model
    total = 0
    for kind, moe_layer, n in arch.block_variants(m):
        targets = _lora_targets(plan, kind, moe_layer)
        mods = arch.module_shapes(m, kind, moe_layer)
        total += n * sum(plan.lora.rank * (i + o) * copies for name, (i, o, copies) in mods.items()
                         if name in targets)
    return total


def experts_quantized(plan: TrainingPlan) -> bool:
    """QLoRA whose stack quantizes the fused Mixture-of-Experts tensors too (schema.MoeQloraExperts)."""
    return plan.method == "qlora" and plan.qlora_moe_experts == "nf4"


def activation_bytes_per_token_layer(plan: TrainingPlan, s: Shapes, kind: str = "F",
                                      moe_layer: bool = False) -> float:
    """Bytes saved for backward per token in one decoder block, without checkpointing.

    Walks the ops of a Llama/GPT-NeoX block as HF transformers + PEFT run them. Autograd saves a
    tensor only when a gradient that needs it is required, so a frozen torch linear does not save
    its input (grad_input needs only the weight):

    * RMSNorm upcasts its input to fp32 and pow/mul save it (4h); with a trained norm weight the
      normalised tensor is saved too (2h, or 4h when the residual stream is fp32 under AMP). Gemma's
      pre- and post-norms count each; QK-norm does the same on q and k.
    * a trained linear saves its 16-bit input; a LoRA-adapted frozen linear saves the fp32 copy PEFT
      makes for lora_A (``x.to(lora_A.weight.dtype)``), one per adapted module.
    * bitsandbytes 4-bit linears (QLoRA) save their 16-bit input even though the weight is frozen
      (MatMul4Bit keeps ``ctx.tensors = (A, B)`` whenever an input needs a gradient). Fused MoE expert
      tensors that bitsandbytes cannot quantize are plain bf16 parameters and save nothing when frozen.
    * FlashAttention saves q, k, v, out (+ a small logsumexp); eager attention saves q and the
      repeated k, v, the fp32 softmax output and its 16-bit copy (heads * s per token each). Hugging Face's
      eager path builds the full s x s scores on sliding-window and chunked layers too (the window is a mask,
      transformers eager_attention_forward), so only linear-attention layers have no seq^2 term.
    * Gated DeltaNet (flash-linear-attention chunk_gated_delta_rule) saves the conv1d input and output over the
      2*Kd + Vd q/k/v channels, the b/a gates, the core output and z before the gated RMSNorm (fp32 input).
    * SwiGLU saves the gate output (SiLU input), SiLU output and up output (the product's inputs);
      GELU saves the fc1 output. The down/fc2 input is saved only by a trained/adapted/4-bit down.
    * a MoE layer: the router's 16-bit logits and fp32 softmax (per expert), then for each of the k experts a
      token goes to the same MLP tensors at the expert width, plus the expert output that the routing-weight
      multiply saves; shared experts as a dense MLP at their width. Under dense dispatch (Llama 4 in Transformers)
      every token goes through all experts: the repeated input that the routing-weight multiply saves, then the
      same MLP tensors, once per expert.
    """
    m = plan.model
    h, kv, inter = m.hidden, s.kv_dim, m.intermediate
    full = plan.method == "full"
    qlora = plan.method == "qlora"
    act = FP32_BYTES if plan.precision == "fp32" else BF16_BYTES
    stream = stream_bytes(plan)
    targets = _lora_targets(plan, kind, moe_layer)

    def linear_input(names: Tuple[str, ...], width: int) -> float:
        """Saved input bytes of the linears in ``names`` that all read the same tensor."""
        if full:
            return act * width                      # one shared 16-bit input
        saved = FP32_BYTES * width * sum(n in targets for n in names)   # PEFT's fp32 copies
        if qlora and (not names[0].startswith("expert_") or experts_quantized(plan)):
            saved += act * width                    # bnb keeps the shared 16-bit input
        return saved

    def mlp(prefix: str, width: int) -> float:
        if m.mlp == "swiglu":
            return (linear_input((prefix + "gate", prefix + "up"), h)
                    + act * 3 * width                               # gate out, silu out, up out
                    + linear_input((prefix + "down",), width))
        return (linear_input((prefix + "fc1",), h) + act * width    # fc1 out (GELU input)
                + linear_input((prefix + "fc2",), width))

    total = 0.0
    norm = FP32_BYTES * h + (stream * h if full else 0)
    total += max(2, m.norms_per_layer) * norm                       # attention and MLP (pre/post) norms
    if kind == "L":
        la = m.linear_attention
        assert la is not None           # ModelArch's validator: L layers need linear_attention shapes
        kd, vd = arch.linear_attention_dims(m)
        channels = 2 * kd + vd
        total += linear_input(("qkv", "z"), h)
        total += act * (2 * channels + 2 * la.value_heads + 2 * vd)
        total += FP32_BYTES * vd                                    # gated RMSNorm upcasts its input
        total += linear_input(("o",), vd)
    else:
        q, kv, _, _ = arch.attention_dims(m, kind)
        total += linear_input(("q", "k", "v"), h)
        if m.qk_norm:
            total += FP32_BYTES * (q + kv)                          # per-head RMSNorm on q and k
        if m.attention_output_gate:
            total += act * 2 * q                                    # gate logits and the gated output
        if plan.attention == "flash":
            total += act * (2 * q + 2 * kv)                         # q, k, v, out
            if not full:                                            # out doubles as o's input
                total += FP32_BYTES * q * ("o" in targets)
        else:
            total += act * 3 * q                                    # q, repeated k, repeated v
            total += (FP32_BYTES + act) * m.heads * plan.seq_len    # fp32 softmax + 16-bit probs
            total += linear_input(("o",), q)
    if moe_layer:
        moe = m.moe
        assert moe is not None          # only MoE models have MoE layers
        total += ROUTER_BYTES_PER_EXPERT * moe.experts
        total += routed_experts(moe) * (mlp("expert_", moe.expert_intermediate) + act * h)
        if moe.shared_experts:
            total += moe.shared_experts * mlp("shared_", moe.shared_intermediate or moe.expert_intermediate)
    else:
        total += mlp("", inter)
    return total


def routed_experts(moe: MoESpec) -> int:
    """Experts each token passes through: the k selected ones, or all of them under dense dispatch
    (schema.MoESpec.dense_dispatch)."""
    return moe.experts if moe.dense_dispatch else moe.experts_per_token


def stream_bytes(plan: TrainingPlan) -> int:
    """Residual-stream dtype. Under autocast AMP the model is fp32, so hidden states between blocks
    are fp32; FSDP mixed precision and DeepSpeed bf16 run the gathered weights in bf16 instead."""
    if plan.precision == "fp32":
        return FP32_BYTES
    if plan.precision == "mixed" and not (plan.gpus > 1 and plan.sharding in ("fsdp", "zero2", "zero3")):
        return FP32_BYTES
    return BF16_BYTES


def backward_working_bytes_per_token(plan: TrainingPlan, moe_layer: bool = False) -> float:
    """Transient gradients while one block runs backward: the incoming and outgoing hidden-state
    gradients and the gradients of the MLP intermediates (3 for SwiGLU, 2 for GELU; a MoE layer's k
    experts and shared experts)."""
    m = plan.model
    act = FP32_BYTES if plan.precision == "fp32" else BF16_BYTES
    n_inter = 3 if m.mlp == "swiglu" else 2
    width = m.intermediate
    dispatched = 0
    if moe_layer:
        moe = m.moe
        assert moe is not None          # only MoE models have MoE layers
        width = (moe.experts_per_token * moe.expert_intermediate
                 + moe.shared_experts * (moe.shared_intermediate or moe.expert_intermediate))
        # dense dispatch: the gradient of the repeated input (experts x tokens x hidden) fills while the experts'
        # backward runs one after another (their own intermediates' gradients come and go one expert at a time)
        dispatched = moe.experts * m.hidden if moe.dense_dispatch else 0
    return act * (2 * m.hidden + n_inter * width + dispatched)
