"""Per-GPU peak memory of one fine-tuning step, from the model's real shapes.

``estimate_memory(plan)`` is pure arithmetic over a :class:`bot.advisor.schema.TrainingPlan` (no I/O, no
fitting per case). It sums what the caching allocator holds at the worst moment of a step and adds
what the allocator and CUDA keep on top:

* weights      frozen or trained base weights (NF4 + quantisation constants for QLoRA, with the
               embedding and LM head kept in 16 bit), FSDP/ZeRO-3 shards plus the gathered units
* adapters     LoRA A/B matrices (PEFT keeps them in fp32)
* gradients    one gradient per trained parameter (DDP adds its bucket copy)
* optimizer    AdamW / 8-bit / paged / SGD state for the trained parameters; the optimizer-step
               temporaries when the step, not the backward pass, sets the peak
* activations  tensors saved for backward (per layer, per token, from the block's real ops), or with
               gradient checkpointing the layer inputs plus one recomputed layer
* logits       the b*s*V logits and the cross-entropy copies at the start of backward
* overhead     CUDA context + caching-allocator reserve (fragmentation, block rounding)

Comparing with measurements: ``allocated_gib(estimate)`` is the figure ``max_memory_allocated``
reports, ``reserved_gib(estimate)`` adds the allocator reserve (``max_memory_reserved``);
``per_gpu_gib`` also adds the CUDA context, which nvidia-smi sees and torch does not.

Assumption codes (``MemoryEstimate.assumptions``; rendered to text from ``knowledge/texts.yml``):

    mixed_precision_fp32_master   full fine-tuning with AMP: fp32 weights/master, fp32 grads, fp32
                                  AdamW states (16 B/param)
    pure_bf16_halves_static       (with mixed precision) training in pure bf16 instead would halve the
                                  static part: weights, grads and AdamW states all 16-bit, 8 B/param
    full_pure_bf16                full fine-tuning in pure bf16: weights, grads and AdamW states all
                                  16-bit (8 B/param)
    fp32_everything               weights, grads, states and activations all fp32
    lora_base_fp32                LoRA with mixed precision: the frozen base is held in fp32 (4 B/param)
    lora_base_bf16                LoRA: frozen base in bf16 (2 B/param)
    qlora_nf4_base                QLoRA: linear layers in NF4 (0.5 B/param + block constants)
    qlora_embeddings_unquantized  QLoRA: embedding and LM head stay 16-bit
    adapters_fp32                 LoRA adapters, their grads and AdamW states in fp32 (PEFT default)
    optimizer_adamw               AdamW: two states per trained parameter
    optimizer_8bit                8-bit AdamW: two 1-byte states per trained parameter
    optimizer_paged               paged optimizer: states live in CUDA unified memory, outside the peak
    optimizer_sgd                 SGD without momentum: no optimizer state
    gradient_checkpointing        only each layer's input is kept; one layer is recomputed in backward
    no_gradient_checkpointing     every layer's saved activations are kept until backward
    flash_attention               FlashAttention/SDPA: no seq^2 score matrix is stored
    eager_attention_scores        eager attention: seq^2 scores (fp32 softmax + 16-bit copy) per head
    logits_fp32_cross_entropy     cross-entropy upcasts the b*s*V logits to fp32 (several copies)
    compiled_cross_entropy        torch.compile fuses the loss: one fp32 gradient copy of the logits
    chunked_cross_entropy         chunked cross-entropy: fp32 work on one chunk of logits at a time
    fused_cross_entropy           fused linear + cross-entropy: full logits never materialised
    optimizer_in_backward         optimizer step fused into backward: no full set of gradients
    activation_offload            checkpointed activations are offloaded to CPU memory
    fsdp_mixed_wrap_grads         FSDP units mixing frozen and trained weights hold gradients for
                                  the frozen weights too
    large_vocab_logits            logits + loss take more than 10 % of the peak
    tied_embeddings               embedding and LM head share one matrix
    gqa_kv_heads                  grouped-query attention: K/V projections are smaller than Q
    grads_freed_each_step         gradients are freed after each step (set_to_none, no accumulation);
                                  the high end of the range keeps them alive (gradient accumulation)
    peak_at_optimizer_step        the optimizer step (grads + states + temporaries) sets the peak
    sharded_zero2                 ZeRO-2: grads and optimizer states divided across GPUs
    sharded_zero3                 ZeRO-3: weights, grads and states divided across GPUs
    sharded_fsdp                  FSDP full shard: weights, grads and states divided across GPUs
    ddp_replicated                DDP: every GPU holds a full copy plus gradient buckets
    gathered_layers               sharded runs gather the current and the next layer (and the root
                                  embedding/head) in full
    offload_optimizer             optimizer states (and fp32 master) live in CPU memory
    offload_params                parameters and gradients live in CPU memory too
    cuda_context_not_in_torch     the CUDA context is not counted by torch's memory statistics
    allocator_reserve             the caching allocator reserves more than it hands out
    explicit_head_dim             config.json head_dim differs from hidden/heads (q/k/v widths use it)
    sliding_window_layers         some layers attend within a window (no effect on FlashAttention's
                                  linear memory; Hugging Face eager still builds full scores)
    linear_attention_layers       Gated DeltaNet layers: a fixed-size state, no seq^2 scores
    logit_softcap                 Gemma's final logit soft-capping adds a tanh copy of the logits
    vision_tower_frozen           the checkpoint's vision tower is loaded and kept frozen
    moe_all_experts_resident      Mixture-of-Experts: every expert is stored (weights, and for full
                                  fine-tuning gradients and optimizer states, follow the total)
    moe_active_experts            activations follow the k experts each token is routed to
    moe_lora_attention_only       MoE LoRA adapts attention only
    moe_lora_dense_shared         MoE LoRA adapts attention, dense-layer MLPs and shared experts
                                  (PEFT "all-linear" on fused experts; the default)
    moe_lora_all_experts          MoE LoRA adds one adapter per routed expert (x experts)
    qlora_moe_experts_bf16        QLoRA of a MoE: fused expert tensors stay bf16 (stock bitsandbytes
                                  + PEFT on Transformers v5); alternatives_gib has the NF4 figure
    qlora_moe_experts_nf4         QLoRA of a MoE: the framework quantizes the experts to NF4 too;
                                  alternatives_gib has the bf16 figure
    mxfp4_dequantized_bf16        MXFP4 experts (gpt-oss) are dequantized to bf16 for training
    mxfp4_experts_kept            MXFP4 experts kept at 4.25 bit (frameworks with native MXFP4 kernels)
    dequantized_load_peak         loading (bf16 dequantization) sets the peak, not training
    dequantized_load_sharded      FSDP/ZeRO-3 load: each GPU holds its share of the bf16 model plus one layer
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, List, Tuple

from bot.advisor import architecture as arch
from bot.advisor.schema import COMPONENTS, MemoryEstimate, ModelArch, TrainingPlan

GIB = 2 ** 30

# --- bytes per element ---------------------------------------------------------------------------
BF16_BYTES = 2      # IEEE bfloat16 / fp16
FP32_BYTES = 4
INT8_BYTES = 1

# NF4 (QLoRA paper, Dettmers et al. 2023, §3): 4-bit codes, one fp32 absmax per block of 64 weights
# (bitsandbytes default blocksize 64). Double quantisation is off by default in transformers'
# BitsAndBytesConfig (bnb_4bit_use_double_quant=False), so the constants cost 32/64 bit per weight.
NF4_BYTES_PER_PARAM = 0.5
NF4_BLOCK = 64
NF4_CONSTANT_BYTES_PER_PARAM = FP32_BYTES / NF4_BLOCK   # 0.0625 B/param

# 8-bit AdamW (bitsandbytes, Dettmers et al. 2022 "8-bit Optimizers via Block-wise Quantization"):
# two uint8 states + one fp32 absmax per 2048-value block.
ADAM8BIT_BYTES_PER_PARAM = 2 * INT8_BYTES + 2 * FP32_BYTES / 2048

# Paged optimizers (bitsandbytes PagedAdamW): the state is allocated with cudaMallocManaged, which
# torch's caching allocator does not see; research note vram-estimators.md §0 and the torchtune
# low-memory row (full FT of 6.74B in 13.94 GiB). We keep this fraction resident in the peak.
PAGED_STATE_VISIBLE_FRACTION = 0.0

# CUDA context (driver, kernels, cuBLAS workspace): "between 300 MiB and 2 GiB" (vram.asmirnov.xyz,
# "Breaking down GPU VRAM consumption", 2023); torch.cuda statistics do not include it. With lazy
# module loading (CUDA >= 11.7) the usual figure on data-centre cards is at the low end.
CUDA_CONTEXT_GIB = 0.5

# Caching allocator: reserved runs "roughly 10-25 % above allocated in published logs"
# (vram-estimators.md §4.9). The point estimate takes the low end, the high end of the range the top.
ALLOCATOR_RESERVE_FRACTION = 0.10
ALLOCATOR_RESERVE_FRACTION_HIGH = 0.25

# Cross-entropy over b*s*V logits, HF transformers >= 4.45 (ForCausalLMLoss): the model returns
# 16-bit logits (kept alive by the output object), the loss upcasts them to fp32, log_softmax saves
# its fp32 output; at the start of backward nll_loss_backward writes a dense fp32 gradient and
# log_softmax_backward another one. Peak = 2 + 3 * 4 bytes per logit.
LOGITS_HELD_BYTES = BF16_BYTES

# torchtune CEWithChunkedOutputLoss default num_output_chunks = 8 (torchtune/modules/loss).
CE_CHUNKS = 8

# torchtune OffloadActivations: one block's tensors being copied out, one being prefetched back.
ACTIVATION_OFFLOAD_RESIDENT_LAYERS = 2

# Range: activations and logits are the least certain part (kernels, framework versions, compile);
# vram-estimators.md §4 shows ±30 % swings between stacks for the same configuration.
DYNAMIC_LOW_FACTOR = 0.75
DYNAMIC_HIGH_FACTOR = 1.25


# MXFP4 (OCP Microscaling Formats spec v1.0): 4-bit E2M1 elements plus one 8-bit E8M0 scale per 32-element block,
# 4.25 bit per weight: how gpt-oss ships its experts when training does not dequantize them (Unsloth's native path).
MXFP4_BYTES_PER_PARAM = (4 + 8 / 32) / 8

# Final logit soft-capping (Gemma 2/4; transformers modeling_gemma2.py Gemma2ForCausalLM.forward:
# logits / cap -> tanh -> * cap on the whole b*s*V tensor): tanh saves its 16-bit output for backward, and the
# gradient passes back through one more 16-bit b*s*V tensor at the start of backward.
SOFTCAP_HELD_BYTES = BF16_BYTES
SOFTCAP_WORK_BYTES = BF16_BYTES

# MoE router per token (transformers MixtralSparseMoeBlock / Qwen3MoeSparseMoeBlock / GptOssTopKRouter): 16-bit
# router logits and the fp32 softmax saved for backward, one value per expert.
ROUTER_BYTES_PER_EXPERT = BF16_BYTES + FP32_BYTES


@dataclass(frozen=True)
class _Shapes:
    head_dim: int
    q_dim: int
    kv_dim: int
    embed_params: int      # input embedding
    head_params: int       # separate LM head (0 when tied)
    linear_params: int     # everything else (decoder blocks + norms), from the plan's param count
    layer_params: float    # the largest block (linear_params / layers for a uniform dense model)
    expert_params: int     # routed experts of all MoE layers (0 for dense models)
    variants: Tuple[Tuple[str, bool, int], ...]


def _shapes(m: ModelArch) -> _Shapes:
    head_dim = arch.head_dim(m)
    kv_dim = head_dim * m.kv_heads
    embed = m.vocab * m.hidden
    head = 0 if m.tied_embeddings else m.vocab * m.hidden
    # The plan's total is authoritative (biases, norms, padded vocabularies, parallel blocks);
    # whatever is not embedding/head lives in the decoder blocks.
    linear = max(m.params - embed - head, 0)
    variants = arch.block_variants(m)
    layer = linear / m.layers
    experts = 0
    if m.moe is not None or len(variants) > 1:
        # blocks differ (MoE and dense layers, linear and full attention): sharded runs gather the largest one
        by_variant = {(kind, moe): arch.attention_params(m, kind) + m.norms_per_layer * m.hidden
                      + (arch.router_params(m) + m.moe.experts * arch.expert_params(m) + arch.shared_expert_params(m)
                         if moe else arch.dense_mlp_params(m, m.intermediate))
                      for kind, moe, _ in variants}
        layer = max(layer, max(by_variant.values())) if m.moe is not None else layer
        experts = arch.routed_expert_params_total(m)
    return _Shapes(head_dim, m.heads * head_dim, kv_dim, embed, head, linear, layer, experts, variants)


def _module_shapes(m: ModelArch, s: _Shapes, kind: str = "F", moe_layer: bool = False) -> Dict[str, Tuple[int, int]]:
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


def _experts_quantized(plan: TrainingPlan) -> bool:
    return plan.method == "qlora" and plan.qlora_moe_experts == "nf4"


def _activation_bytes_per_token_layer(plan: TrainingPlan, s: _Shapes, kind: str = "F",
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
      multiply saves; shared experts as a dense MLP at their width.
    """
    m = plan.model
    h, kv, inter = m.hidden, s.kv_dim, m.intermediate
    full = plan.method == "full"
    qlora = plan.method == "qlora"
    act = FP32_BYTES if plan.precision == "fp32" else BF16_BYTES
    stream = _stream_bytes(plan)
    targets = _lora_targets(plan, kind, moe_layer)

    def linear_input(names: Tuple[str, ...], width: int) -> float:
        """Saved input bytes of the linears in ``names`` that all read the same tensor."""
        if full:
            return act * width                      # one shared 16-bit input
        saved = FP32_BYTES * width * sum(n in targets for n in names)   # PEFT's fp32 copies
        if qlora and (not names[0].startswith("expert_") or _experts_quantized(plan)):
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
        kd, vd = arch.linear_attention_dims(m)
        channels = 2 * kd + vd
        total += linear_input(("qkv", "z"), h)
        total += act * (2 * channels + 2 * m.linear_attention.value_heads + 2 * vd)
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
        total += ROUTER_BYTES_PER_EXPERT * moe.experts
        total += moe.experts_per_token * (mlp("expert_", moe.expert_intermediate) + act * h)
        if moe.shared_experts:
            total += moe.shared_experts * mlp("shared_", moe.shared_intermediate or moe.expert_intermediate)
    else:
        total += mlp("", inter)
    return total


def _stream_bytes(plan: TrainingPlan) -> int:
    """Residual-stream dtype. Under autocast AMP the model is fp32, so hidden states between blocks
    are fp32; FSDP mixed precision and DeepSpeed bf16 run the gathered weights in bf16 instead."""
    if plan.precision == "fp32":
        return FP32_BYTES
    if plan.precision == "mixed" and not (plan.gpus > 1 and plan.sharding in ("fsdp", "zero2", "zero3")):
        return FP32_BYTES
    return BF16_BYTES


def _layer_backward_working_bytes_per_token(plan: TrainingPlan, moe_layer: bool = False) -> float:
    """Transient gradients while one block runs backward: the incoming and outgoing hidden-state
    gradients and the gradients of the MLP intermediates (3 for SwiGLU, 2 for GELU; a MoE layer's k
    experts and shared experts)."""
    m = plan.model
    act = FP32_BYTES if plan.precision == "fp32" else BF16_BYTES
    n_inter = 3 if m.mlp == "swiglu" else 2
    width = m.intermediate
    if moe_layer:
        moe = m.moe
        width = (moe.experts_per_token * moe.expert_intermediate
                 + moe.shared_experts * (moe.shared_intermediate or moe.expert_intermediate))
    return act * (2 * m.hidden + n_inter * width)


def estimate_memory(plan: TrainingPlan) -> MemoryEstimate:
    """Per-GPU peak memory of one training step of ``plan`` (see the module docstring).

    For a QLoRA plan of a MoE model the estimate assumes the stack's reading of ``plan.qlora_moe_experts`` and
    gives the other reading in ``alternatives_gib``."""
    est = _estimate(plan)
    m = plan.model
    if plan.method == "qlora" and m.moe is not None:
        other = "nf4" if plan.qlora_moe_experts == "bf16" else "bf16"
        alt = _estimate(plan.copy(update={"qlora_moe_experts": other}))
        est = est.copy(update={"alternatives_gib": {f"qlora_moe_experts_{other}": alt.per_gpu_gib}})
    return est


def _estimate(plan: TrainingPlan) -> MemoryEstimate:
    m = plan.model
    s = _shapes(m)
    sharding = plan.sharding if plan.gpus > 1 else "none"
    n = plan.gpus if sharding != "none" else 1
    shards_params = sharding in ("fsdp", "zero3")
    shards_states = sharding in ("fsdp", "zero2", "zero3")
    offload_opt = plan.offload in ("optimizer", "optimizer_and_params")
    offload_params = plan.offload == "optimizer_and_params"
    deepspeed_like = sharding in ("zero2", "zero3") or (offload_opt and sharding != "fsdp")
    tokens = plan.micro_batch * plan.seq_len
    full = plan.method == "full"
    codes: List[str] = []

    # ---- bytes per parameter of weights, gradients, optimizer states -------------------------------
    emb_head = s.embed_params + s.head_params
    head_unit = m.vocab * m.hidden                       # the LM head (the embedding when tied)
    autocast_copies = 0.0
    frozen_bytes = FP32_BYTES if plan.precision in ("mixed", "fp32") else BF16_BYTES
    expert_bytes_frozen = BF16_BYTES
    if m.moe is not None:
        codes += ["moe_all_experts_resident", "moe_active_experts"]
        if m.moe.expert_dtype == "mxfp4":
            if m.moe.dequantize_for_training or full:
                codes.append("mxfp4_dequantized_bf16")
            else:
                expert_bytes_frozen = MXFP4_BYTES_PER_PARAM
                codes.append("mxfp4_experts_kept")
        if plan.lora is not None and not full:
            codes.append({"attention": "moe_lora_attention_only", "attention_dense_shared": "moe_lora_dense_shared",
                          "all_experts": "moe_lora_all_experts"}[plan.lora.moe_targets])
    if m.layer_pattern and set(m.layer_pattern) & set("SC"):
        codes.append("sliding_window_layers")
    if m.layer_pattern and "L" in m.layer_pattern:
        codes.append("linear_attention_layers")
    if m.head_dim and m.head_dim * m.heads != m.hidden:
        codes.append("explicit_head_dim")
    if full:
        trained = m.params
        master_bytes = 0
        if plan.precision == "bf16":
            # torch AdamW keeps its states in the parameter dtype (vram-estimators.md §0, pure bf16)
            w_bytes = g_bytes = state_bytes = BF16_BYTES
            codes.append("full_pure_bf16")
        elif plan.precision == "mixed":
            codes += ["mixed_precision_fp32_master", "pure_bf16_halves_static"]
            state_bytes = FP32_BYTES
            if deepspeed_like:
                # DeepSpeed bf16/fp16: 16-bit params and grads on the GPU, fp32 master + m + v in the
                # optimizer partition ("2 + 2 + 4 + 8", ZeRO paper; deepspeed stage_1_and_2.py)
                w_bytes, g_bytes, master_bytes = BF16_BYTES, BF16_BYTES, FP32_BYTES
            else:
                # HF Trainer AMP / FSDP mixed: the fp32 weights are the master copy, fp32 grads,
                # fp32 m and v: 4 + 4 + 8 = 16 B/param (ZeRO paper's 16 Psi).
                w_bytes = g_bytes = FP32_BYTES
                if sharding in ("none", "ddp") and plan.offload == "none":
                    # torch.autocast caches the bf16 copy of every trainable leaf weight until the
                    # autocast region (forward + loss) ends: +2 B/param (LLaMA-Factory's "Full AMP
                    # 18x" vs the 16x static count).
                    autocast_copies = m.params * BF16_BYTES
        else:
            w_bytes = g_bytes = state_bytes = FP32_BYTES
            master_bytes = 0
            codes.append("fp32_everything")
        weights_full = m.params * w_bytes
        layer_unit = s.layer_params * (BF16_BYTES if plan.precision == "mixed" else w_bytes)
        head_unit_bytes = head_unit * (BF16_BYTES if plan.precision == "mixed" else w_bytes)
    else:
        trained = adapter_params(plan)
        # PEFT autocast_adapter_dtype=True: adapters, their grads and AdamW states in fp32
        w_bytes = g_bytes = state_bytes = FP32_BYTES
        master_bytes = 0
        base_bytes = FP32_BYTES if plan.precision in ("mixed", "fp32") else BF16_BYTES
        if plan.method == "qlora":
            nf4 = NF4_BYTES_PER_PARAM + NF4_CONSTANT_BYTES_PER_PARAM
            quantized = s.linear_params
            weights_full = emb_head * base_bytes
            if s.expert_params and not _experts_quantized(plan):
                # fused 3-D expert tensors: bitsandbytes cannot quantize them (stock PEFT + Transformers v5)
                quantized -= s.expert_params
                weights_full += s.expert_params * expert_bytes_frozen
                codes.append("qlora_moe_experts_bf16")
            elif s.expert_params:
                codes.append("qlora_moe_experts_nf4")
            weights_full += quantized * nf4
            # bitsandbytes dequantises one weight matrix at a time into a 16-bit buffer
            weights_full += max(i * o for kind, moe_layer, _ in s.variants
                                for name, (i, o) in _module_shapes(m, s, kind, moe_layer).items()
                                if _experts_quantized(plan) or not name.startswith("expert_")) * BF16_BYTES
            layer_unit = s.layer_params * nf4
            codes += ["qlora_nf4_base", "qlora_embeddings_unquantized"]
        else:
            weights_full = m.params * base_bytes
            if s.expert_params and expert_bytes_frozen != base_bytes:
                weights_full += s.expert_params * (expert_bytes_frozen - base_bytes)
            # FSDP/ZeRO mixed precision gathers the fp32 shards as bf16
            layer_unit = s.layer_params * (BF16_BYTES if sharding != "none" else base_bytes)
            codes.append("lora_base_fp32" if base_bytes == FP32_BYTES else "lora_base_bf16")
            if plan.precision == "mixed" and sharding in ("none", "ddp"):
                # autocast casts each frozen fp32 weight to bf16 per call; F.linear saves that copy
                # for grad_input. Without checkpointing every block's copies live until backward.
                blocks = 1 if plan.gradient_checkpointing else m.layers
                autocast_copies = (blocks * s.layer_params + head_unit) * BF16_BYTES
        head_unit_bytes = head_unit * (BF16_BYTES if sharding != "none" else base_bytes)
        codes.append("adapters_fp32")
    if m.vision_params:
        # a multimodal checkpoint's vision tower is loaded and kept frozen (not trained, no adapters)
        weights_full += m.vision_params * frozen_bytes
        codes.append("vision_tower_frozen")
    if m.tied_embeddings:
        codes.append("tied_embeddings")
    if m.kv_heads < m.heads:
        codes.append("gqa_kv_heads")

    # ---- weights on this GPU -----------------------------------------------------------------------
    # Sharded runs keep their shard plus the units in use: the current block and the prefetched
    # next one (FSDP forward/backward prefetch; ZeRO-3 prefetch bucket) and the LM head, which is
    # gathered while the logits are computed.
    gathered = 0.0
    if offload_params and (shards_params or sharding == "none"):
        weights = 0.0
        gathered = 2 * layer_unit + head_unit_bytes
        codes.append("offload_params")
    elif shards_params:
        weights = weights_full / n
        gathered = 2 * layer_unit + head_unit_bytes
    else:
        weights = weights_full
    if gathered:
        codes.append("gathered_layers")
    weights += gathered
    adapters = 0.0 if full else trained * w_bytes / (n if shards_params else 1)

    # ---- gradients ---------------------------------------------------------------------------------
    grads_full = trained * g_bytes
    layer_grads = (s.layer_params if full else trained / m.layers) * g_bytes
    if offload_params or plan.optimizer_in_backward:
        # CPU offload moves each block's grads away; optimizer-in-backward steps and frees them
        gradients = layer_grads
        if plan.optimizer_in_backward:
            codes.append("optimizer_in_backward")
    elif shards_states:
        # ZeRO-2/3 and FSDP reduce-scatter per bucket/unit: the shard plus one unsharded unit
        gradients = grads_full / n + layer_grads
    else:
        gradients = grads_full
    if sharding == "ddp":
        # DDP copies every gradient into its communication buckets unless gradient_as_bucket_view
        # (PyTorch DDP docs: the saving "will be equal to the total gradients size").
        gradients += grads_full
        codes.append("ddp_replicated")
    elif sharding != "none":
        codes.append({"zero2": "sharded_zero2", "zero3": "sharded_zero3", "fsdp": "sharded_fsdp"}[sharding])
    # FSDP with frozen and trainable parameters in one flat parameter (use_orig_params=True, e.g.
    # Lightning Fabric) allocates gradients for the whole block (PyTorch FSDP docs warn of "higher
    # than expected gradient memory"); PEFT's fsdp_auto_wrap_policy avoids it, so only the high end.
    fsdp_mixed_grad_pitfall = 0.0
    if sharding == "fsdp" and not full:
        # the gradient buffer has the size of the blocks' flat parameters (packed NF4 storage for QLoRA)
        fsdp_mixed_grad_pitfall = layer_unit * m.layers
        if plan.fsdp_mixed_wrap:
            gradients += fsdp_mixed_grad_pitfall
            fsdp_mixed_grad_pitfall = 0.0
            codes.append("fsdp_mixed_wrap_grads")

    # ---- optimizer states ----------------------------------------------------------------------------
    opt = plan.optimizer
    if opt == "sgd":
        per_param_state = 0.0                            # torch SGD without momentum keeps no state
        codes.append("optimizer_sgd")
    elif opt in ("adamw_8bit", "paged_adamw_8bit"):
        per_param_state = ADAM8BIT_BYTES_PER_PARAM
    else:
        # fused AdamW (transformers' adamw_torch_fused, torchtune's fused=True): m and v only,
        # no parameter-sized temporaries in the step
        per_param_state = 2 * state_bytes
    if opt.startswith("paged"):
        per_param_state *= PAGED_STATE_VISIBLE_FRACTION
        codes.append("optimizer_paged")
    elif opt == "adamw_8bit":
        codes.append("optimizer_8bit")
    elif opt == "adamw":
        codes.append("optimizer_adamw")
    if offload_opt:
        optimizer = 0.0
        codes.append("offload_optimizer")
    else:
        optimizer = trained * (per_param_state + master_bytes) / (n if shards_states else 1)

    # ---- activations ---------------------------------------------------------------------------------
    per_variant = [(_activation_bytes_per_token_layer(plan, s, kind, moe_layer),
                    _layer_backward_working_bytes_per_token(plan, moe_layer) * tokens, n)
                   for kind, moe_layer, n in s.variants]
    # Activation offloading (torchtune) streams saved tensors to CPU and keeps about two blocks'
    # worth in flight (the one being offloaded and the one being prefetched back).
    resident_layers = min(m.layers, ACTIVATION_OFFLOAD_RESIDENT_LAYERS) if plan.activation_offload else m.layers
    if plan.activation_offload:
        codes.append("activation_offload")
    if plan.gradient_checkpointing:
        stored = resident_layers * tokens * m.hidden * _stream_bytes(plan)   # each block's input
        # one block recomputed at a time: the most expensive kind of block sets it
        recompute = max(per_tok * tokens + working for per_tok, working, _ in per_variant)
        codes.append("gradient_checkpointing")
    else:
        per_layer_avg = sum(per_tok * n for per_tok, _, n in per_variant) / m.layers
        stored = resident_layers * tokens * per_layer_avg
        recompute = max(working for _, working, _ in per_variant)
        codes.append("no_gradient_checkpointing")
    codes.append("flash_attention" if plan.attention == "flash" else "eager_attention_scores")

    # ---- logits / loss -------------------------------------------------------------------------------
    logit_elems = tokens * m.vocab
    held_bytes = FP32_BYTES if plan.precision == "fp32" else LOGITS_HELD_BYTES
    # standard: fp32 log_softmax output saved + the dense fp32 gradients of nll and log_softmax
    ce_work = 3 * FP32_BYTES
    if plan.cross_entropy == "chunked":
        # torchtune CEWithChunkedOutputLoss: the 16-bit logits stay as chunks. Eager: every chunk's
        # fp32 log_softmax output is saved, the two fp32 gradients exist one chunk at a time.
        # Compiled: only the chunk being differentiated holds fp32 work.
        ce_work = FP32_BYTES / CE_CHUNKS if plan.compiled else FP32_BYTES + 2 * FP32_BYTES / CE_CHUNKS
        codes.append("chunked_cross_entropy")
    elif plan.cross_entropy == "fused":
        # Liger FusedLinearCrossEntropy / cut-cross-entropy: the full logits are never materialised;
        # one chunk of 16-bit logits and its fp32 gradient exist at a time
        held_bytes = held_bytes / CE_CHUNKS
        ce_work = FP32_BYTES / CE_CHUNKS
        codes.append("fused_cross_entropy")
    elif plan.compiled:
        # torch.compile fuses upcast + log_softmax + nll (only the logsumexp is saved); backward
        # writes one fp32 gradient
        ce_work = FP32_BYTES
        codes.append("compiled_cross_entropy")
    else:
        codes.append("logits_fp32_cross_entropy")
    if m.final_logit_softcap and plan.cross_entropy == "standard" and not plan.compiled:
        held_bytes += SOFTCAP_HELD_BYTES
        ce_work += SOFTCAP_WORK_BYTES
        codes.append("logit_softcap")
    logits_peak = logit_elems * (held_bytes + ce_work)
    logits_held = logit_elems * held_bytes
    # The start of backward (all saved activations + the cross-entropy copies) or a block's backward
    # (saved activations + held logits + one recomputed block), whichever is larger.
    if logits_peak >= logits_held + recompute:
        activations, logits = stored, logits_peak
    else:
        activations, logits = stored + recompute, logits_held
    activations += autocast_copies

    # ---- which moment sets the peak --------------------------------------------------------------------
    # Full fine-tuning: without gradient accumulation, zero_grad(set_to_none=True) (torch >= 2.0
    # default) frees the gradients before the next forward, so the whole-model gradients (end of
    # backward, optimizer step) and the activations (start of backward) do not coexist. With
    # accumulation they do: that case is the high end of the range. LoRA gradients are tiny and
    # are simply added.
    fwd_bwd = activations + logits
    if full:
        codes.append("grads_freed_each_step")
        peak_dynamic = max(fwd_bwd, gradients)
        grads_overlap = gradients + fwd_bwd - peak_dynamic
        if gradients >= fwd_bwd:
            codes.append("peak_at_optimizer_step")
    else:
        peak_dynamic = fwd_bwd + gradients
        grads_overlap = 0.0

    components = {"weights": weights, "adapters": adapters, "gradients": gradients,
                  "optimizer": optimizer, "activations": activations, "logits": logits}
    if grads_overlap:
        # components describe the peak moment: what gradients and activations share is shown once
        if gradients >= fwd_bwd:
            components["activations"] = components["logits"] = 0.0
        else:
            components["gradients"] = 0.0
    allocated = weights + adapters + optimizer + peak_dynamic
    reserve = allocated * ALLOCATOR_RESERVE_FRACTION
    context = CUDA_CONTEXT_GIB * GIB
    components["overhead"] = reserve + context
    codes += ["allocator_reserve", "cuda_context_not_in_torch"]
    total = allocated + reserve + context
    if logits / total > 0.10 and components["logits"]:
        codes.append("large_vocab_logits")

    low = weights + adapters + optimizer + DYNAMIC_LOW_FACTOR * peak_dynamic + context
    high_alloc = (weights + adapters + optimizer + DYNAMIC_HIGH_FACTOR * fwd_bwd
                  + gradients + fsdp_mixed_grad_pitfall)
    high = high_alloc * (1 + ALLOCATOR_RESERVE_FRACTION_HIGH) + context

    # MXFP4 checkpoints (gpt-oss): Hugging Face trainers load with Mxfp4Config(dequantize=True) (OpenAI cookbook
    # "Fine-tuning with gpt-oss and Hugging Face Transformers"), and transformers' integrations/mxfp4.py
    # `dequantize` turns each expert projection to bf16 as it is loaded and moves it to the device that holds that
    # layer (`.to(target_device)`). One GPU, DDP or ZeRO-2 (weights replicated) must therefore hold the whole bf16
    # model once (hiyouga/LlamaFactory#8872: ~50 GB on an A100 for gpt-oss-20b, OOM on 24 GB cards). A sharded
    # load - FSDP / ZeRO-3 (huggingface/gpt-oss-recipes trains gpt-oss on 8 GPUs with configs/zero3.yaml), or a
    # device_map over the GPUs - leaves each GPU its share of the dequantized weights plus the layer being
    # converted and partitioned (the largest block in bf16).
    load_peak = None
    # A stack that quantizes the experts for QLoRA loads a checkpoint already in 4 bit (Unsloth's bnb-4bit gpt-oss
    # uploads, Axolotl's quantize_moe_experts at load time): nothing is held in bf16 first.
    if (m.moe is not None and m.moe.expert_dtype == "mxfp4" and (m.moe.dequantize_for_training or full)
            and not _experts_quantized(plan)):
        dequantized = (m.params + m.vision_params) * BF16_BYTES
        if shards_params:
            load_peak = dequantized / n + s.layer_params * BF16_BYTES + context
            codes.append("dequantized_load_sharded")
        else:
            load_peak = dequantized + context
        if load_peak > total:
            components["weights"] += load_peak - total
            total = load_peak
            codes.append("dequantized_load_peak")
        low, high = max(low, load_peak), max(high, load_peak)

    # construct(): the fields are built right here from COMPONENTS, so pydantic's validation (most of the cost of
    # an estimate) adds nothing; the estimate + rank budget is < 1 ms per plan (bench/bench_advice.py).
    return MemoryEstimate.construct(
        per_gpu_gib=round(total / GIB, 3),
        components_gib={k: round(components[k] / GIB, 3) for k in COMPONENTS},
        low_gib=round(low / GIB, 3),
        high_gib=round(max(high, total) / GIB, 3),
        assumptions=list(dict.fromkeys(codes)),
        load_peak_gib=round(load_peak / GIB, 3) if load_peak is not None else None,
    )


def allocated_gib(est: MemoryEstimate) -> float:
    """What torch.cuda.max_memory_allocated would report: the estimate without overhead."""
    return est.per_gpu_gib - est.components_gib["overhead"]


def reserved_gib(est: MemoryEstimate) -> float:
    """What torch.cuda.max_memory_reserved would report: allocated + allocator reserve."""
    return est.per_gpu_gib - CUDA_CONTEXT_GIB
