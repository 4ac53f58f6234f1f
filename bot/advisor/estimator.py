"""Per-GPU peak memory of one fine-tuning step, from the model's real shapes.

``estimate_memory(plan)`` is pure arithmetic over a :class:`bot.advisor.schema.TrainingPlan` (no I/O, no fitting per
case). Like Unsloth's VRAM estimator it composes the estimate from one small function per memory component, each
returning bytes and the assumption codes it relied on; bot/advisor/FORMULA.md writes every formula out with its
source, and lists the assumption codes (``MemoryEstimate.assumptions``, rendered to text from knowledge/texts.yml).

* weights      frozen or trained base weights (NF4 + quantisation constants for QLoRA, with the embedding and LM
               head kept in 16 bit), FSDP/ZeRO-3 shards plus the gathered units
* adapters     LoRA A/B matrices (PEFT keeps them in fp32)
* gradients    one gradient per trained parameter (DDP adds its bucket copy)
* optimizer    AdamW / 8-bit / paged / SGD state for the trained parameters
* activations  tensors saved for backward (bot/advisor/activations.py), or with gradient checkpointing the layer
               inputs plus one recomputed layer
* logits       the b*s*V logits and the cross-entropy copies at the start of backward
* overhead     CUDA context + caching-allocator reserve (fragmentation, block rounding)

Comparing with measurements: ``allocated_gib(estimate)`` is the figure ``max_memory_allocated`` reports,
``reserved_gib(estimate)`` adds the allocator reserve (``max_memory_reserved``); ``per_gpu_gib`` also adds the CUDA
context, which nvidia-smi sees and torch does not.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Tuple

from bot.advisor.activations import (BF16_BYTES, FP32_BYTES, Shapes, activation_bytes_per_token_layer,
                                     adapter_params, backward_working_bytes_per_token, experts_quantized,
                                     module_shapes, shapes, stream_bytes)
from bot.advisor.schema import COMPONENTS, MemoryEstimate, ModelArch, TrainingPlan

__all__ = ["GIB", "adapter_params", "allocated_gib", "estimate_memory", "reserved_gib"]

GIB = 2 ** 30

# --- bytes per element (BF16_BYTES = 2, FP32_BYTES = 4: bot/advisor/activations.py) --------------------
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





@dataclass(frozen=True)
class _Layout:
    """How the plan spreads over its GPUs."""

    sharding: str
    gpus: int                 # the divisor of sharded state (1 when nothing is sharded)
    shards_params: bool
    shards_states: bool
    offload_opt: bool
    offload_params: bool
    deepspeed_like: bool
    tokens: int               # micro-batch x sequence length
    full: bool


def _layout(plan: TrainingPlan) -> _Layout:
    sharding = plan.sharding if plan.gpus > 1 else "none"
    offload_opt = plan.offload in ("optimizer", "optimizer_and_params")
    return _Layout(sharding=sharding, gpus=plan.gpus if sharding != "none" else 1,
                   shards_params=sharding in ("fsdp", "zero3"), shards_states=sharding in ("fsdp", "zero2", "zero3"),
                   offload_opt=offload_opt, offload_params=plan.offload == "optimizer_and_params",
                   deepspeed_like=sharding in ("zero2", "zero3") or (offload_opt and sharding != "fsdp"),
                   tokens=plan.micro_batch * plan.seq_len, full=plan.method == "full")


@dataclass
class _Static:
    """Bytes per parameter and whole-model sizes of weights, gradients and optimizer states."""

    trained: float = 0.0
    w_bytes: float = FP32_BYTES
    g_bytes: float = FP32_BYTES
    state_bytes: float = FP32_BYTES
    master_bytes: float = 0.0
    weights_full: float = 0.0
    layer_unit: float = 0.0          # one gathered block (sharded runs)
    head_unit_bytes: float = 0.0     # the gathered LM head
    autocast_copies: float = 0.0
    codes: List[str] = field(default_factory=list)


def _expert_bytes_frozen(plan: TrainingPlan, codes: List[str]) -> float:
    """Bytes per frozen routed-expert weight, and the MoE codes."""
    m = plan.model
    if m.moe is None:
        return BF16_BYTES
    codes += ["moe_all_experts_resident", "moe_dense_dispatch" if m.moe.dense_dispatch else "moe_active_experts"]
    expert_bytes: float = BF16_BYTES
    if m.moe.expert_dtype == "mxfp4":
        if m.moe.dequantize_for_training or plan.method == "full":
            codes.append("mxfp4_dequantized_bf16")
        else:
            expert_bytes = MXFP4_BYTES_PER_PARAM
            codes.append("mxfp4_experts_kept")
    if plan.lora is not None and plan.method != "full":
        codes.append({"attention": "moe_lora_attention_only", "attention_dense_shared": "moe_lora_dense_shared",
                      "all_experts": "moe_lora_all_experts"}[plan.lora.moe_targets])
    return expert_bytes


def _shape_codes(m: ModelArch) -> List[str]:
    codes = []
    if m.layer_pattern and set(m.layer_pattern) & set("SC"):
        codes.append("sliding_window_layers")
    if m.layer_pattern and "L" in m.layer_pattern:
        codes.append("linear_attention_layers")
    if m.head_dim and m.head_dim * m.heads != m.hidden:
        codes.append("explicit_head_dim")
    return codes


def _full_static(plan: TrainingPlan, s: Shapes, lay: _Layout) -> _Static:
    """Full fine-tuning: every parameter trained (pure bf16, AMP with fp32 master, DeepSpeed bf16, or fp32)."""
    m = plan.model
    assert m.params is not None     # ModelArch's validator counts it when the config does not state it
    st = _Static(trained=m.params)
    if plan.precision == "bf16":
        # torch AdamW keeps its states in the parameter dtype (vram-estimators.md §0, pure bf16)
        st.w_bytes = st.g_bytes = st.state_bytes = BF16_BYTES
        st.codes.append("full_pure_bf16")
    elif plan.precision == "mixed":
        st.codes += ["mixed_precision_fp32_master", "pure_bf16_halves_static"]
        if lay.deepspeed_like:
            # DeepSpeed bf16/fp16: 16-bit params and grads on the GPU, fp32 master + m + v in the optimizer
            # partition ("2 + 2 + 4 + 8", ZeRO paper; deepspeed stage_1_and_2.py)
            st.w_bytes, st.g_bytes, st.master_bytes = BF16_BYTES, BF16_BYTES, FP32_BYTES
        elif lay.sharding in ("none", "ddp") and plan.offload == "none":
            # HF Trainer AMP: fp32 weights (the master copy), fp32 grads and m, v = 16 B/param (ZeRO paper's 16 Psi);
            # torch.autocast caches the bf16 copy of every trainable leaf weight until the autocast region ends:
            # +2 B/param (LLaMA-Factory's "Full AMP 18x" vs the 16x static count).
            st.autocast_copies = m.params * BF16_BYTES
    else:
        st.codes.append("fp32_everything")
    st.weights_full = m.params * st.w_bytes
    unit_bytes = BF16_BYTES if plan.precision == "mixed" else st.w_bytes
    st.layer_unit = s.layer_params * unit_bytes
    st.head_unit_bytes = m.vocab * m.hidden * unit_bytes
    return st


def _qlora_weights(plan: TrainingPlan, s: Shapes, expert_bytes: float, base_bytes: float, st: _Static) -> None:
    """NF4 linear layers + 16-bit embedding/head (+ 16-bit fused experts when the stack leaves them) + the
    dequantisation buffer of the largest matrix."""
    m = plan.model
    nf4 = NF4_BYTES_PER_PARAM + NF4_CONSTANT_BYTES_PER_PARAM
    quantized = s.linear_params
    st.weights_full = (s.embed_params + s.head_params) * base_bytes
    if s.expert_params and not experts_quantized(plan):
        # fused 3-D expert tensors: bitsandbytes cannot quantize them (stock PEFT + Transformers v5)
        quantized -= s.expert_params
        st.weights_full += s.expert_params * expert_bytes
        st.codes.append("qlora_moe_experts_bf16")
    elif s.expert_params:
        st.codes.append("qlora_moe_experts_nf4")
    st.weights_full += quantized * nf4
    # bitsandbytes dequantises one weight matrix at a time into a 16-bit buffer
    st.weights_full += max(i * o for kind, moe_layer, _ in s.variants
                           for name, (i, o) in module_shapes(m, s, kind, moe_layer).items()
                           if experts_quantized(plan) or not name.startswith("expert_")) * BF16_BYTES
    st.layer_unit = s.layer_params * nf4
    st.codes += ["qlora_nf4_base", "qlora_embeddings_unquantized"]


def _adapter_static(plan: TrainingPlan, s: Shapes, lay: _Layout, expert_bytes: float) -> _Static:
    """LoRA / QLoRA: a frozen base and fp32 adapters (PEFT autocast_adapter_dtype=True)."""
    m = plan.model
    assert m.params is not None     # ModelArch's validator counts it when the config does not state it
    st = _Static(trained=adapter_params(plan))
    base_bytes = FP32_BYTES if plan.precision in ("mixed", "fp32") else BF16_BYTES
    if plan.method == "qlora":
        _qlora_weights(plan, s, expert_bytes, base_bytes, st)
    else:
        st.weights_full = m.params * base_bytes
        if s.expert_params and expert_bytes != base_bytes:
            st.weights_full += s.expert_params * (expert_bytes - base_bytes)
        # FSDP/ZeRO mixed precision gathers the fp32 shards as bf16
        st.layer_unit = s.layer_params * (BF16_BYTES if lay.sharding != "none" else base_bytes)
        st.codes.append("lora_base_fp32" if base_bytes == FP32_BYTES else "lora_base_bf16")
        if plan.precision == "mixed" and lay.sharding in ("none", "ddp"):
            # autocast casts each frozen fp32 weight to bf16 per call; F.linear saves that copy for grad_input.
            # Without checkpointing every block's copies live until backward.
            blocks = 1 if plan.gradient_checkpointing else m.layers
            st.autocast_copies = (blocks * s.layer_params + m.vocab * m.hidden) * BF16_BYTES
    st.head_unit_bytes = m.vocab * m.hidden * (BF16_BYTES if lay.sharding != "none" else base_bytes)
    st.codes.append("adapters_fp32")
    return st


def _static(plan: TrainingPlan, s: Shapes, lay: _Layout) -> _Static:
    m = plan.model
    codes: List[str] = []
    expert_bytes = _expert_bytes_frozen(plan, codes)
    codes += _shape_codes(m)
    st = _full_static(plan, s, lay) if lay.full else _adapter_static(plan, s, lay, expert_bytes)
    st.codes = codes + st.codes
    if m.vision_params:
        # a multimodal checkpoint's vision tower is loaded and kept frozen (not trained, no adapters)
        st.weights_full += m.vision_params * (FP32_BYTES if plan.precision in ("mixed", "fp32") else BF16_BYTES)
        st.codes.append("vision_tower_frozen")
    if m.tied_embeddings:
        st.codes.append("tied_embeddings")
    if m.kv_heads < m.heads:
        st.codes.append("gqa_kv_heads")
    return st


def _weights(st: _Static, lay: _Layout) -> Tuple[float, List[str]]:
    """Weights on this GPU. Sharded runs keep their shard plus the units in use: the current block and the
    prefetched next one (FSDP forward/backward prefetch; ZeRO-3 prefetch bucket) and the LM head, gathered while
    the logits are computed."""
    codes = []
    gathered = 0.0
    if lay.offload_params and (lay.shards_params or lay.sharding == "none"):
        weights = 0.0
        gathered = 2 * st.layer_unit + st.head_unit_bytes
        codes.append("offload_params")
    elif lay.shards_params:
        weights = st.weights_full / lay.gpus
        gathered = 2 * st.layer_unit + st.head_unit_bytes
    else:
        weights = st.weights_full
    if gathered:
        codes.append("gathered_layers")
    return weights + gathered, codes


def _gradients(plan: TrainingPlan, s: Shapes, st: _Static, lay: _Layout) -> Tuple[float, float, List[str]]:
    """(gradients, the FSDP mixed-wrap pitfall kept for the high end, codes)."""
    codes = []
    grads_full = st.trained * st.g_bytes
    layer_grads = (s.layer_params if lay.full else st.trained / plan.model.layers) * st.g_bytes
    if lay.offload_params or plan.optimizer_in_backward:
        # CPU offload moves each block's grads away; optimizer-in-backward steps and frees them
        gradients = layer_grads
        if plan.optimizer_in_backward:
            codes.append("optimizer_in_backward")
    elif lay.shards_states:
        # ZeRO-2/3 and FSDP reduce-scatter per bucket/unit: the shard plus one unsharded unit
        gradients = grads_full / lay.gpus + layer_grads
    else:
        gradients = grads_full
    if lay.sharding == "ddp":
        # DDP copies every gradient into its communication buckets unless gradient_as_bucket_view
        # (PyTorch DDP docs: the saving "will be equal to the total gradients size").
        gradients += grads_full
        codes.append("ddp_replicated")
    elif lay.sharding != "none":
        codes.append({"zero2": "sharded_zero2", "zero3": "sharded_zero3", "fsdp": "sharded_fsdp"}[lay.sharding])
    # FSDP with frozen and trainable parameters in one flat parameter (use_orig_params=True, e.g. Lightning Fabric)
    # allocates gradients for the whole block (PyTorch FSDP docs warn of "higher than expected gradient memory");
    # PEFT's fsdp_auto_wrap_policy avoids it, so only the high end. The buffer has the size of the blocks' flat
    # parameters (packed NF4 storage for QLoRA).
    pitfall = 0.0
    if lay.sharding == "fsdp" and not lay.full:
        pitfall = st.layer_unit * plan.model.layers
        if plan.fsdp_mixed_wrap:
            gradients += pitfall
            pitfall = 0.0
            codes.append("fsdp_mixed_wrap_grads")
    return gradients, pitfall, codes


def _optimizer(plan: TrainingPlan, st: _Static, lay: _Layout) -> Tuple[float, List[str]]:
    opt = plan.optimizer
    codes = []
    if opt == "sgd":
        per_param_state = 0.0                            # torch SGD without momentum keeps no state
        codes.append("optimizer_sgd")
    elif opt in ("adamw_8bit", "paged_adamw_8bit"):
        per_param_state = ADAM8BIT_BYTES_PER_PARAM
    else:
        # fused AdamW (transformers' adamw_torch_fused, torchtune's fused=True): m and v only
        per_param_state = 2 * st.state_bytes
    if opt.startswith("paged"):
        per_param_state *= PAGED_STATE_VISIBLE_FRACTION
        codes.append("optimizer_paged")
    elif opt == "adamw_8bit":
        codes.append("optimizer_8bit")
    elif opt == "adamw":
        codes.append("optimizer_adamw")
    if lay.offload_opt:
        return 0.0, codes + ["offload_optimizer"]
    return st.trained * (per_param_state + st.master_bytes) / (lay.gpus if lay.shards_states else 1), codes


def _activations(plan: TrainingPlan, s: Shapes, lay: _Layout) -> Tuple[float, float, List[str]]:
    """(stored for backward, one block's recomputation and backward work, codes)."""
    m = plan.model
    tokens = lay.tokens
    per_variant = [(activation_bytes_per_token_layer(plan, s, kind, moe_layer),
                    backward_working_bytes_per_token(plan, moe_layer) * tokens, n)
                   for kind, moe_layer, n in s.variants]
    codes = []
    # Activation offloading (torchtune) streams saved tensors to CPU and keeps about two blocks' worth in flight
    # (the one being offloaded and the one being prefetched back).
    resident_layers = min(m.layers, ACTIVATION_OFFLOAD_RESIDENT_LAYERS) if plan.activation_offload else m.layers
    if plan.activation_offload:
        codes.append("activation_offload")
    if plan.gradient_checkpointing:
        stored: float = resident_layers * tokens * m.hidden * stream_bytes(plan)   # each block's input
        # one block recomputed at a time: the most expensive kind of block sets it
        recompute = max(per_tok * tokens + working for per_tok, working, _ in per_variant)
        codes.append("gradient_checkpointing")
    else:
        per_layer_avg = sum(per_tok * n for per_tok, _, n in per_variant) / m.layers
        stored = resident_layers * tokens * per_layer_avg
        recompute = max(working for _, working, _ in per_variant)
        codes.append("no_gradient_checkpointing")
    codes.append("flash_attention" if plan.attention == "flash" else "eager_attention_scores")
    return stored, recompute, codes


def _logits(plan: TrainingPlan, tokens: int) -> Tuple[float, float, List[str]]:
    """(peak at the start of backward, held while blocks run backward, codes) of the b*s*V logits and the loss."""
    m = plan.model
    logit_elems = tokens * m.vocab
    held_bytes: float = FP32_BYTES if plan.precision == "fp32" else LOGITS_HELD_BYTES
    # standard: fp32 log_softmax output saved + the dense fp32 gradients of nll and log_softmax
    ce_work: float = 3 * FP32_BYTES
    if plan.cross_entropy == "chunked":
        # torchtune CEWithChunkedOutputLoss: the 16-bit logits stay as chunks. Eager: every chunk's fp32
        # log_softmax output is saved, the two fp32 gradients exist one chunk at a time. Compiled: only the chunk
        # being differentiated holds fp32 work.
        ce_work = FP32_BYTES / CE_CHUNKS if plan.compiled else FP32_BYTES + 2 * FP32_BYTES / CE_CHUNKS
        codes = ["chunked_cross_entropy"]
    elif plan.cross_entropy == "fused":
        # Liger FusedLinearCrossEntropy / cut-cross-entropy: the full logits are never materialised; one chunk of
        # 16-bit logits and its fp32 gradient exist at a time
        held_bytes = held_bytes / CE_CHUNKS
        ce_work = FP32_BYTES / CE_CHUNKS
        codes = ["fused_cross_entropy"]
    elif plan.compiled:
        # torch.compile fuses upcast + log_softmax + nll (only the logsumexp is saved); backward writes one fp32
        # gradient
        ce_work = FP32_BYTES
        codes = ["compiled_cross_entropy"]
    else:
        codes = ["logits_fp32_cross_entropy"]
    if m.final_logit_softcap and plan.cross_entropy == "standard" and not plan.compiled:
        held_bytes += SOFTCAP_HELD_BYTES
        ce_work += SOFTCAP_WORK_BYTES
        codes.append("logit_softcap")
    return logit_elems * (held_bytes + ce_work), logit_elems * held_bytes, codes


@dataclass
class _Peak:
    components: dict          # at the peak moment (what gradients and activations share is shown once)
    allocated: float
    fwd_bwd: float
    peak_dynamic: float
    gradients: float          # before the sharing above (the high end keeps them with the activations)
    logits: float
    codes: List[str]


def _peak(lay: _Layout, weights: float, adapters: float, gradients: float, optimizer: float,
          activations: float, logits: float) -> _Peak:
    """Which moment sets the peak. Full fine-tuning without gradient accumulation: zero_grad(set_to_none=True)
    (torch >= 2.0 default) frees the gradients before the next forward, so the whole-model gradients (end of
    backward, optimizer step) and the activations (start of backward) do not coexist; with accumulation they do
    (the high end of the range). LoRA gradients are tiny and are simply added."""
    fwd_bwd = activations + logits
    codes = []
    components = {"weights": weights, "adapters": adapters, "gradients": gradients, "optimizer": optimizer,
                  "activations": activations, "logits": logits}
    if lay.full:
        codes.append("grads_freed_each_step")
        peak_dynamic = max(fwd_bwd, gradients)
        if gradients >= fwd_bwd:
            codes.append("peak_at_optimizer_step")
        if gradients + fwd_bwd - peak_dynamic:
            # components describe the peak moment: what gradients and activations share is shown once
            if gradients >= fwd_bwd:
                components["activations"] = components["logits"] = 0.0
            else:
                components["gradients"] = 0.0
    else:
        peak_dynamic = fwd_bwd + gradients
    allocated = weights + adapters + optimizer + peak_dynamic
    return _Peak(components, allocated, fwd_bwd, peak_dynamic, gradients, logits, codes)


def _load_peak(plan: TrainingPlan, s: Shapes, lay: _Layout) -> Tuple[float, List[str]]:
    """GiB-bytes the loading GPU holds while MXFP4 experts are dequantized (0 when nothing is dequantized).

    Hugging Face trainers load gpt-oss with Mxfp4Config(dequantize=True) (OpenAI cookbook "Fine-tuning with gpt-oss
    and Hugging Face Transformers"); transformers' integrations/mxfp4.py ``dequantize`` turns each expert projection
    to bf16 as it is loaded, on the device that holds that layer. One GPU, DDP or ZeRO-2 must hold the whole bf16
    model once (hiyouga/LlamaFactory#8872: ~50 GB on an A100 for gpt-oss-20b); an FSDP / ZeRO-3 load leaves each GPU
    its share plus the largest block in bf16. A stack that quantizes the experts for QLoRA loads a checkpoint already
    in 4 bit (Unsloth's bnb-4bit uploads, Axolotl's quantize_moe_experts at load time): nothing is dequantized."""
    m = plan.model
    if not (m.moe is not None and m.moe.expert_dtype == "mxfp4" and (m.moe.dequantize_for_training or lay.full)
            and not experts_quantized(plan)):
        return 0.0, []
    assert m.params is not None     # ModelArch's validator counts it when the config does not state it
    dequantized = (m.params + m.vision_params) * BF16_BYTES
    context = CUDA_CONTEXT_GIB * GIB
    if lay.shards_params:
        return dequantized / lay.gpus + s.layer_params * BF16_BYTES + context, ["dequantized_load_sharded"]
    return dequantized + context, []


def estimate_memory(plan: TrainingPlan) -> MemoryEstimate:
    """Per-GPU peak memory of one training step of ``plan`` (see the module docstring).

    For a QLoRA plan of a MoE model the estimate assumes the stack's reading of ``plan.qlora_moe_experts`` and
    gives the other reading in ``alternatives_gib``."""
    est = _estimate(plan)
    if plan.method == "qlora" and plan.model.moe is not None:
        other = "nf4" if plan.qlora_moe_experts == "bf16" else "bf16"
        alt = _estimate(plan.copy(update={"qlora_moe_experts": other}))
        est = est.copy(update={"alternatives_gib": {f"qlora_moe_experts_{other}": alt.per_gpu_gib}})
    return est


def _estimate(plan: TrainingPlan) -> MemoryEstimate:
    """The components added up (each function returns its bytes and the assumption codes it relied on)."""
    s = shapes(plan.model)
    lay = _layout(plan)
    st = _static(plan, s, lay)
    weights, weight_codes = _weights(st, lay)
    adapters = 0.0 if lay.full else st.trained * st.w_bytes / (lay.gpus if lay.shards_params else 1)
    gradients, fsdp_pitfall, grad_codes = _gradients(plan, s, st, lay)
    optimizer, opt_codes = _optimizer(plan, st, lay)
    stored, recompute, act_codes = _activations(plan, s, lay)
    logits_peak, logits_held, logit_codes = _logits(plan, lay.tokens)
    # The start of backward (all saved activations + the cross-entropy copies) or a block's backward (saved
    # activations + held logits + one recomputed block), whichever is larger.
    if logits_peak >= logits_held + recompute:
        activations, logits = stored, logits_peak
    else:
        activations, logits = stored + recompute, logits_held
    peak = _peak(lay, weights, adapters, gradients, optimizer, activations + st.autocast_copies, logits)
    codes = (st.codes + weight_codes + grad_codes + opt_codes + act_codes + logit_codes + peak.codes
             + ["allocator_reserve", "cuda_context_not_in_torch"])
    return _assemble(plan, s, lay, peak, fsdp_pitfall, codes)


def _assemble(plan: TrainingPlan, s: Shapes, lay: _Layout, peak: _Peak, fsdp_pitfall: float,
              codes: List[str]) -> MemoryEstimate:
    """Allocator reserve and CUDA context on top, the range, and the MXFP4 load peak."""
    components = peak.components
    static = components["weights"] + components["adapters"] + components["optimizer"]
    context = CUDA_CONTEXT_GIB * GIB
    reserve = peak.allocated * ALLOCATOR_RESERVE_FRACTION
    components["overhead"] = reserve + context
    total = peak.allocated + reserve + context
    if peak.logits / total > 0.10 and components["logits"]:
        codes.append("large_vocab_logits")
    low = static + DYNAMIC_LOW_FACTOR * peak.peak_dynamic + context
    high = ((static + DYNAMIC_HIGH_FACTOR * peak.fwd_bwd + peak.gradients + fsdp_pitfall)
            * (1 + ALLOCATOR_RESERVE_FRACTION_HIGH) + context)
    load_peak, load_codes = _load_peak(plan, s, lay)
    codes += load_codes
    if load_peak:
        if load_peak > total:
            components["weights"] += load_peak - total
            total = load_peak
            codes.append("dequantized_load_peak")
        low, high = max(low, load_peak), max(high, load_peak)
    # construct(): the fields are built right here from COMPONENTS, so pydantic's validation (most of the cost of an
    # estimate) adds nothing; the estimate + rank budget is < 1 ms per plan (bench/bench_advice.py).
    return MemoryEstimate.construct(
        per_gpu_gib=round(total / GIB, 3),
        components_gib={k: round(components[k] / GIB, 3) for k in COMPONENTS},
        low_gib=round(low / GIB, 3),
        high_gib=round(max(high, total) / GIB, 3),
        assumptions=list(dict.fromkeys(codes)),
        load_peak_gib=round(load_peak / GIB, 3) if load_peak else None,
    )


def allocated_gib(est: MemoryEstimate) -> float:
    """What torch.cuda.max_memory_allocated would report: the estimate without overhead."""
    return est.per_gpu_gib - est.components_gib["overhead"]


def reserved_gib(est: MemoryEstimate) -> float:
    """What torch.cuda.max_memory_reserved would report: allocated + allocator reserve."""
    return est.per_gpu_gib - CUDA_CONTEXT_GIB
