"""Shapes of a decoder-only transformer: parameter counts (total, per layer, active per token) and the linear
layers of each block, from the fields of :class:`bot.advisor.schema.ModelArch`. Pure arithmetic.

The formulas follow the Hugging Face modelling code of each family, checked against exact published counts
(knowledge/models.yml ``published_params``; tests/test_knowledge.py keeps every preset within 0.5 %):

* attention: q (heads*d, doubled by Qwen3.5's output gate), k and v (kv_heads*d each; Gemma 4's full layers use
  global_head_dim / global_kv_heads and let K double as V), o (heads*d -> hidden); optional q/k/v and o biases,
  per-head QK RMSNorm weights (2*d) and gpt-oss's attention sinks (one per head).
* Gated DeltaNet (Qwen3.5 "linear_attention" layers, transformers qwen3_5 / qwen3_next): in_proj_qkv
  (h -> 2*Kd + Vd), in_proj_z (h -> Vd), in_proj_b and in_proj_a (h -> value heads each), a depthwise conv1d over the
  2*Kd + Vd channels, dt_bias and A_log (value heads each), a gated RMSNorm (value head dim), out_proj (Vd -> h).
* MLP: SwiGLU/GeGLU 3*h*I, GELU 2*h*I. MoE: router h*E (+E bias), E experts (+gpt-oss expert biases 2*I_e + h),
  shared experts, Qwen's shared-expert gate (h).
* norms_per_layer RMSNorm weights per block, a final norm, the embedding and (untied) LM head.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Dict, Tuple


def head_dim(m) -> int:
    """config.json head_dim when given, else hidden / heads."""
    return m.head_dim or m.hidden // m.heads


def layer_kinds(m) -> str:
    """One attention-kind letter per layer (the pattern repeated over the layers)."""
    pattern = m.layer_pattern or "F"
    return (pattern * (m.layers // len(pattern) + 1))[:m.layers]


def kind_counts(m) -> Dict[str, int]:
    kinds = layer_kinds(m)
    return {k: kinds.count(k) for k in "FSCL"}


def is_moe_layer(m, index: int) -> bool:
    moe = m.moe
    if moe is None or index < moe.first_dense:
        return False
    return (index + 1 - moe.first_dense) % moe.every == 0


def moe_layer_count(m) -> int:
    return sum(n for _, moe, n in block_variants(m) if moe) if m.moe else 0


def attention_dims(m, kind: str) -> Tuple[int, int, int, bool]:
    """(q width, kv width, head dim, K doubles as V) of a softmax-attention layer of this kind."""
    d, kv_heads, shared_kv = head_dim(m), m.kv_heads, False
    if kind == "F" and m.global_head_dim:
        d = m.global_head_dim
        kv_heads = m.global_kv_heads or m.kv_heads
        shared_kv = m.global_shared_kv
    return m.heads * d, kv_heads * d, d, shared_kv


def linear_attention_dims(m) -> Tuple[int, int]:
    """(key width, value width) of a Gated DeltaNet layer."""
    la = m.linear_attention
    return la.key_heads * la.key_head_dim, la.value_heads * la.value_head_dim


def attention_params(m, kind: str) -> int:
    h = m.hidden
    if kind == "L":
        la = m.linear_attention
        kd, vd = linear_attention_dims(m)
        conv_channels = 2 * kd + vd
        return (h * conv_channels + h * vd + 2 * h * la.value_heads + conv_channels * la.conv_kernel
                + 2 * la.value_heads + la.value_head_dim + vd * h)
    q, kv, d, shared_kv = attention_dims(m, kind)
    q_out = q * (2 if m.attention_output_gate else 1)
    kv_mats = 1 if shared_kv else 2
    n = h * q_out + kv_mats * h * kv + q * h
    if m.qkv_bias:
        n += q_out + kv_mats * kv
    if m.o_bias:
        n += h
    if m.qk_norm:
        n += 2 * d
    if m.attention_sinks:
        n += m.heads
    return n


def _mlp_matrices(m) -> int:
    return 3 if m.mlp == "swiglu" else 2


def dense_mlp_params(m, width: int) -> int:
    return _mlp_matrices(m) * m.hidden * width


def expert_params(m) -> int:
    """One routed expert."""
    moe = m.moe
    n = dense_mlp_params(m, moe.expert_intermediate)
    if moe.expert_bias:
        n += (_mlp_matrices(m) - 1) * moe.expert_intermediate + m.hidden
    return n


def shared_expert_params(m) -> int:
    moe = m.moe
    if not moe.shared_experts:
        return 0
    width = moe.shared_intermediate or moe.expert_intermediate
    return moe.shared_experts * dense_mlp_params(m, width) + (m.hidden if moe.shared_expert_gate else 0)


def router_params(m) -> int:
    moe = m.moe
    return m.hidden * moe.experts + (moe.experts if moe.router_bias else 0)


def mlp_params(m, index: int) -> int:
    if is_moe_layer(m, index):
        return router_params(m) + m.moe.experts * expert_params(m) + shared_expert_params(m)
    return dense_mlp_params(m, m.intermediate)


def embedding_params(m) -> int:
    return m.vocab * m.hidden * (1 if m.tied_embeddings else 2)


def layer_params(m, index: int) -> int:
    kind = layer_kinds(m)[index]
    return attention_params(m, kind) + mlp_params(m, index) + m.norms_per_layer * m.hidden


def count_params(m) -> int:
    """Exact parameter count of the language model (vision tower not included)."""
    return embedding_params(m) + sum(layer_params(m, i) for i in range(m.layers)) + m.hidden


def routed_expert_params_total(m) -> int:
    """All routed experts of all MoE layers (0 for a dense model)."""
    return moe_layer_count(m) * m.moe.experts * expert_params(m) if m.moe else 0


def active_params(m) -> int:
    """Parameters one token touches: everything except the routed experts it is not sent to. Uses ``m.params``
    (authoritative when a calibration case states it) minus the idle experts."""
    if not m.moe:
        return m.params
    idle = moe_layer_count(m) * (m.moe.experts - m.moe.experts_per_token) * expert_params(m)
    return max(m.params - idle, 1)


def module_shapes(m, kind: str, moe_layer: bool) -> Dict[str, Tuple[int, int, int]]:
    """(in_features, out_features, copies) of each linear layer of one block; ``copies`` is how many such matrices
    the block holds (routed experts: E; shared experts: their count). Names follow the estimator's LoRA targets."""
    h = m.hidden
    mods: Dict[str, Tuple[int, int, int]] = {}
    if kind == "L":
        kd, vd = linear_attention_dims(m)
        mods.update({"qkv": (h, 2 * kd + vd, 1), "z": (h, vd, 1), "o": (vd, h, 1)})
    else:
        q, kv, _, shared_kv = attention_dims(m, kind)
        mods.update({"q": (h, q * (2 if m.attention_output_gate else 1), 1), "k": (h, kv, 1), "o": (q, h, 1)})
        if not shared_kv:
            mods["v"] = (h, kv, 1)
    def mlp(prefix: str, width: int, copies: int) -> None:
        if m.mlp == "swiglu":
            mods.update({prefix + "gate": (h, width, copies), prefix + "up": (h, width, copies),
                         prefix + "down": (width, h, copies)})
        else:
            mods.update({prefix + "fc1": (h, width, copies), prefix + "fc2": (width, h, copies)})
    if moe_layer:
        moe = m.moe
        mlp("expert_", moe.expert_intermediate, moe.experts)
        if moe.shared_experts:
            mlp("shared_", moe.shared_intermediate or moe.expert_intermediate, moe.shared_experts)
    else:
        mlp("", m.intermediate, 1)
    return mods


def block_variants(m) -> Tuple[Tuple[str, bool, int], ...]:
    """(attention kind, MoE layer?, how many layers) for the distinct block types of the model."""
    moe = m.moe
    return _variants(m.layers, m.layer_pattern or "F", moe.every if moe else 0, moe.first_dense if moe else 0)


@lru_cache(maxsize=256)
def _variants(layers: int, pattern: str, every: int, first_dense: int) -> Tuple[Tuple[str, bool, int], ...]:
    counts: Dict[Tuple[str, bool], int] = {}
    for i in range(layers):
        moe = bool(every) and i >= first_dense and (i + 1 - first_dense) % every == 0
        key = (pattern[i % len(pattern)], moe)
        counts[key] = counts.get(key, 0) + 1
    return tuple((kind, moe, n) for (kind, moe), n in counts.items())
