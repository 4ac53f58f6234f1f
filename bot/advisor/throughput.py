"""Training speed, time and cost of a plan on a catalogue card (pure arithmetic, no I/O).

    time = training FLOPs / (GPUs x dense BF16 peak x utilisation x multi-GPU scaling)

FLOPs per token (gpu-facts.md §3 of the project's research notes; models-2026.md §4 for MoE):

* full fine-tuning 6·N (forward 2N, backward 4N: Kaplan et al. 2020, Chinchilla, EleutherAI Transformer Math 101)
* LoRA / QLoRA 4·N (frozen weights still need the forward and the activation-gradient backward, not the
  weight-gradient pass; NVIDIA NeMo AutoModel and dgxc-benchmarking count LoRA as 2/3 of full)
* gradient checkpointing recomputes the forward once more: +2·N
* attention (no weights, so never saved by LoRA): 4·L·d·s per token forward (llm-foundry's
  attn_flops_per_seq = L·2·2·d·s², the PaLM MFU definition's 12·L·H·Q·s for training), ×3 for forward+backward,
  ×4 with recomputation.

N is the number of parameters that take part in matrix multiplies: the input embedding is a table lookup, so an
untied embedding matrix is left out (a tied one is also the LM head and stays in). For a Mixture-of-Experts model
N counts the ACTIVE parameters: attention, router, shared experts and the k routed experts a token is sent to
(models-2026.md §4: NeMo's gpt-oss-20b run works out to 21.4 GFLOP/token against 6 x 3.6 B = 21.6).

MoE runs far below dense utilisation on stock stacks (token routing, small per-expert matmuls, no expert
parallelism), so MoE plans use their own table, MOE_UTILISATION. A card class whose figure rests on no published
measurement is flagged ``measured=False``; :func:`is_estimated` and ``TrainingCost.estimated`` carry that to the
answer, which then says the speed is estimated.

The utilisation figures below apply to exactly this FLOP count (recomputation included when the plan checkpoints),
so they are hardware-FLOPs utilisation. Each one is argued against the published measurements in gpu-facts.md §2;
docs/throughput.md compares the model with every usable data point.
"""
from __future__ import annotations

from typing import Dict, Optional

from pydantic import BaseModel

from bot.advisor.architecture import active_params, head_dim, kind_counts
from bot.advisor.schema import TrainingPlan


class Utilisation(BaseModel):
    """Fraction of the dense BF16 peak a typical single-node PyTorch / Hugging Face fine-tuning run sustains."""

    value: float
    basis: str
    measured: bool = True      # False: no published measurement on this card class; the figure is derived


# Utilisation per card class (knowledge/gpus.yml perf_class). Sources: gpu-facts.md §2.1 rows and §2.3.
UTILISATION: Dict[str, Utilisation] = {
    "hopper": Utilisation(value=0.45, basis=(
        "H100/H200: NeMo AutoModel single-H100 LoRA 40.6 % MFU by NVIDIA's count (row 6), 46 % by ours; "
        "llm-foundry MPT-7B 46.4 % / 40.4 % (row 14); tuned Megatron 8-GPU runs 53.9-56.4 % (rows 9-10); a Hugging "
        "Face single-GPU LoRA run ≈29 % of model FLOPs (row 17). H200 has the same 989 TFLOPS; its extra bandwidth "
        "is not credited.")),
    "ampere_datacenter": Utilisation(value=0.55, basis=(
        "A100: llm-foundry reaches 1.37x the H100's MFU on A100 at the same config (64.2 vs 46.4 % at seq 2048, "
        "54.8 vs 40.4 % at 4096, rows 14-15); Megatron-LM 41.5-56.3 %; ml-engineering: ≈180 of 312 TFLOPS (58 %) "
        "with FlashAttention (§2.3).")),
    "blackwell_datacenter": Utilisation(value=0.36, basis=(
        "B200: no published fine-tuning tokens/s. MLPerf Training Llama 2 70B LoRA: 8x B200 12.96 min vs "
        "8x H200 ≈24 min (rows 19-20) = 1.85x for a 2.27x peak ratio, so 0.81 x the Hopper figure (0.45).")),
    "ada": Utilisation(value=0.45, basis=(
        "RTX 4090: torchtune Llama 3.1 8B on one 4090 (rows 1-3) implies ≈48 % (full), ≈62 % (LoRA), ≈48 % "
        "(QLoRA) of 165.2 TFLOPS under 6N/4N with torch.compile; 0.45 for an uncompiled Hugging Face stack.")),
    "ada_datacenter": Utilisation(measured=False, value=0.30, basis=(
        "L40S: no published fine-tuning measurement (gpu-facts.md §2.1 'not found'). 2.2x the 4090's tensor peak "
        "but a 350 W limit and 0.86x its memory bandwidth; 0.30 makes it ≈1.5x a 4090. Assumption.")),
    "ampere_pcie": Utilisation(measured=False, value=0.40, basis=(
        "A40: no published fine-tuning measurement. Same GA102 chip as the RTX A6000/3090 with mature kernels, "
        "300 W passive card: slightly below the 4090 figure. Assumption.")),
    "ada_low_power": Utilisation(measured=False, value=0.25, basis=(
        "L4: no published fine-tuning measurement. A 72 W card cannot hold its boost clock under sustained "
        "tensor load; taken well below the 450 W 4090. Assumption.")),
    "blackwell_workstation": Utilisation(value=0.30, basis=(
        "RTX PRO 6000: Exxact Llama 3.1 8B LoRA, Hugging Face + DDP, 4,962 tok/s on one card (row 16) ≈30 % of "
        "the derived ≈500 TFLOPS peak, which NVIDIA does not publish (gpu-facts.md §1.1).")),
}

# Hopper MoE figure (models-2026.md §4 row T7, HF blog 2026-06-24): Qwen3-30B-A3B fine-tuning on 8x H100 with stock
# Hugging Face Transformers v5 ran at 3,075 tok/s/GPU x 23.0 GFLOP/token (T4/T11) = 70.7 TFLOP/s = 7.1 % of 989;
# NeMo AutoModel with expert parallelism and DeepEP reached 11,340 tok/s (26 %), which a stock single-node run does
# not get. A QLoRA MoE run with offloading reached 3.6 % (T13, Llama 4 Scout on one H100), consistent with 7 %
# divided by the QLoRA factor and offloading. No MoE measurement exists for the other card classes: they scale the
# Hopper figure by their dense ratio and are flagged as estimated.
MOE_HOPPER_UTILISATION = 0.07
MOE_UTILISATION: Dict[str, Utilisation] = {
    cls: Utilisation(
        value=round(MOE_HOPPER_UTILISATION * u.value / UTILISATION["hopper"].value, 4),
        measured=cls == "hopper",
        basis=("Qwen3-30B-A3B on H100 with stock Transformers v5: 3,075 tok/s/GPU = 7.1 % of peak (models-2026.md "
               "T7)" if cls == "hopper" else
               f"no published MoE measurement: the Hopper MoE figure (7 %) x this class's dense ratio "
               f"({u.value:.2f} / {UTILISATION['hopper'].value:.2f})"))
    for cls, u in UTILISATION.items()
}

# QLoRA has LoRA's FLOPs (weights are dequantised to BF16 for every matmul) but the dequantisation kernels cost
# time: torchtune on an RTX 4090 +27.8 %, litgpt +15 % to +30.5 % (gpu-facts.md §2.2).
QLORA_TIME_FACTOR = 1.25

# LoRA runs at the same utilisation as full fine-tuning: the evidence points both ways (NeMo 53.9 vs 56.4 %,
# torchtune 4090 62 vs 48 %, LoRA paper 25 % time saved for a 33 % FLOP cut; gpu-facts.md §2.1/§3).
LORA_UTILISATION_FACTOR = 1.0

# Multi-GPU scaling (throughput of n GPUs / n x one GPU). Exxact's 2x RTX PRO 6000 DDP over PCIe kept 96 %
# (9,541 vs 2 x 4,962 tok/s, gpu-facts.md row 16). ZeRO-3/FSDP moves every weight twice more per step
# (all-gather in forward and backward, reduce-scatter of gradients): NeMo's 8x H100 70B LoRA ran at 32 % MFU vs
# 40.6 % for one H100 on 8B (rows 6, 8) = 0.79 with NVLink. Without NVLink the same traffic crosses PCIe, so
# sharded runs on PCIe cards are taken lower. These are assumptions to be replaced by measurements.
SCALING_EFFICIENCY = {
    # (sharded weights?, nvlink?) -> efficiency for more than one GPU
    (False, True): 0.95,
    (False, False): 0.90,
    (True, True): 0.80,
    (True, False): 0.65,
}


class CardLike(BaseModel):
    """What this module needs from a catalogue card (bot.advisor.knowledge.GpuCard satisfies it)."""

    id: str
    bf16_tflops: float
    price_usd_hour: float
    nvlink: bool
    perf_class: str


def flops_params(plan: TrainingPlan) -> int:
    """Parameters that take part in a token's matrix multiplies: all of them for a dense model, the active ones
    (k routed experts of each MoE layer) for a Mixture-of-Experts model; the input embedding lookup never."""
    m = plan.model
    lookup_only = 0 if m.tied_embeddings else m.vocab * m.hidden
    return max(active_params(m) - lookup_only, 1)


def flops_per_token(plan: TrainingPlan) -> float:
    """Training FLOPs per token for the plan (recomputation included when it checkpoints)."""
    n = flops_params(plan)
    passes = 6 if plan.method == "full" else 4
    if plan.gradient_checkpointing:
        passes += 2
    m = plan.model
    # softmax attention only: Gated DeltaNet layers have no seq^2 term (their state updates are in N's matmuls
    # up to a per-token constant); sliding/chunked layers attend over at most their window
    counts = kind_counts(m) if m.layer_pattern != "F" else {"F": m.layers}
    window = min(plan.seq_len, m.sliding_window or plan.seq_len)
    span = counts.get("F", 0) * plan.seq_len + (counts.get("S", 0) + counts.get("C", 0)) * window
    attention_forward = 4 * m.heads * head_dim(m) * span            # q.k and p.v over the attended span
    attention = attention_forward * (4 if plan.gradient_checkpointing else 3)
    return passes * n + attention


def utilisation_entry(card, moe: bool = False) -> Utilisation:
    return (MOE_UTILISATION if moe else UTILISATION)[card.perf_class]


def utilisation(card, method: str, moe: bool = False) -> float:
    value = utilisation_entry(card, moe).value
    return value * (LORA_UTILISATION_FACTOR if method in ("lora", "qlora") else 1.0)


def is_estimated(plan: TrainingPlan, card) -> bool:
    """True when the speed for this plan on this card rests on no published measurement (say so in the answer)."""
    return not utilisation_entry(card, plan.model.moe is not None).measured


def scaling_efficiency(plan: TrainingPlan, card) -> float:
    if plan.gpus <= 1:
        return 1.0
    return SCALING_EFFICIENCY[(plan.sharding in ("zero3", "fsdp"), bool(card.nvlink))]


def tokens_per_second(plan: TrainingPlan, card) -> float:
    """Training tokens per second for the whole plan (all its GPUs together)."""
    per_gpu = (card.bf16_tflops * 1e12 * utilisation(card, plan.method, plan.model.moe is not None)
               / flops_per_token(plan))
    if plan.method == "qlora":
        per_gpu /= QLORA_TIME_FACTOR
    return per_gpu * plan.gpus * scaling_efficiency(plan, card)


class TrainingCost(BaseModel):
    card_id: str
    gpus: int
    tokens: float
    tokens_per_second: float
    hours: float
    gpu_hours: float
    cost_usd: float            # VAT excluded
    cost_usd_with_vat: float
    estimated: bool = False    # no published measurement behind this card class's speed (for this kind of model)


def training_cost(plan: TrainingPlan, card, tokens: float, vat_rate: float) -> TrainingCost:
    """Time and cost to train on ``tokens`` tokens (compute only: loading, evaluation and saving come on top)."""
    speed = tokens_per_second(plan, card)
    hours = tokens / speed / 3600
    cost = hours * plan.gpus * card.price_usd_hour
    return TrainingCost(card_id=card.id, gpus=plan.gpus, tokens=tokens, tokens_per_second=speed, hours=hours,
                        gpu_hours=hours * plan.gpus, cost_usd=cost, cost_usd_with_vat=cost * (1 + vat_rate),
                        estimated=is_estimated(plan, card))


def cost_per_million_tokens(plan: TrainingPlan, card) -> float:
    """USD (VAT excluded) to train on one million tokens."""
    return 1e6 / tokens_per_second(plan, card) / 3600 * plan.gpus * card.price_usd_hour


def tokens_for_budget(plan: TrainingPlan, card, budget_usd_with_vat: float, vat_rate: float) -> float:
    """How many training tokens a budget (VAT included) buys on this card."""
    hourly = plan.gpus * card.price_usd_hour * (1 + vat_rate)
    return budget_usd_with_vat / hourly * 3600 * tokens_per_second(plan, card)


def volume_tokens(total_tokens: Optional[float] = None, examples: Optional[float] = None,
                  avg_tokens: Optional[float] = None, epochs: Optional[float] = None) -> Optional[float]:
    """Training tokens: the total given, or examples x average tokens per example x epochs (epochs default 1).

    Returns None when the volume is not known.
    """
    if total_tokens is not None:
        return float(total_tokens) * float(epochs or 1)
    if examples is not None and avg_tokens is not None:
        return float(examples) * float(avg_tokens) * float(epochs or 1)
    return None
