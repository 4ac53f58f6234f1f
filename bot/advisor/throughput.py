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
(models-2026.md §4: NeMo's gpt-oss-20b run works out to 21.4 GFLOP/token against 6 x 3.6 B = 21.6), except under
dense dispatch (Llama 4 in Transformers), where every routed expert computes on every token.

Speed is calibrated to published runs (knowledge/calibration/throughput_cases.yaml, replayed by
tests/test_throughput_calibration.py; bench/fit_throughput.py fits knowledge/calibration/throughput_model.yml on the
"fit" part and reports the held-out part apart):

    seconds per token per GPU = FLOPs per token / (peak x utilisation) + step overhead / tokens per micro-step
    utilisation = card class's utilisation x the stack's factor (dense, or MoE for Mixture-of-Experts models)
                  / the QLoRA dequantisation factor
    several GPUs: x the scaling of the layout (DDP or sharded) over the card's link (NVLink or PCIe)

A card class with no published measurement behind it is flagged ``measured=False``; :func:`is_estimated` and
``TrainingCost.estimated`` carry that to the answer, which then says the speed is estimated.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Dict, Optional, Tuple

from pydantic import BaseModel, validator

from bot.advisor.architecture import active_params, expert_params, head_dim, kind_counts, moe_layer_count
from bot.advisor.schema import TrainingPlan
from bot.advisor.vat import price_with_vat
from bot.knowledge import parse_file


class Utilisation(BaseModel):
    """Fraction of the dense BF16 peak a plain Transformers + PEFT run keeps on a card class (stack factors apply)."""

    value: float
    basis: str
    measured: bool = True      # False: no published measurement on this card class; the figure is derived


MODEL_PATH = Path(__file__).resolve().parents[2] / "knowledge" / "calibration" / "throughput_model.yml"


class SpeedModel(BaseModel):
    """knowledge/calibration/throughput_model.yml: fitted and documented speed parameters."""

    class_utilisation: Dict[str, Utilisation]
    stack_dense: Dict[str, float]
    stack_moe: Dict[str, float]
    step_overhead_s: float
    qlora_time_factor: float
    scaling: Dict[str, float]          # ddp_nvlink, ddp_pcie, sharded_nvlink, sharded_pcie
    sources: Dict[str, str] = {}

    @validator("stack_dense", "stack_moe")
    def _every_stack(cls, v):
        from bot.advisor.schema import STACK_IDS

        missing = sorted(set(STACK_IDS) - set(v))
        if missing:
            raise ValueError(f"no speed factor for the stacks {missing}")
        return v

    def utilisation(self, perf_class: str, stack: str, moe: bool) -> float:
        factor = (self.stack_moe if moe else self.stack_dense)[stack]
        return self.class_utilisation[perf_class].value * factor


@lru_cache(maxsize=4)
def load_speed_model(path: Optional[Path] = None) -> SpeedModel:
    """knowledge/calibration/throughput_model.yml (or ``path``), validated by the knowledge layer."""
    return parse_file(SpeedModel, path or MODEL_PATH)


def _model() -> SpeedModel:
    return load_speed_model()


UTILISATION: Dict[str, Utilisation] = dict(_model().class_utilisation)
# Mixture-of-Experts utilisation of a plain Transformers + PEFT run per class (the stack factors apply on top).
MOE_UTILISATION: Dict[str, Utilisation] = {
    cls: Utilisation(value=u.value * _model().stack_moe["hf"], measured=u.measured and cls == "hopper",
                     basis=f"{u.basis} x the MoE factor of stock Transformers ({_model().stack_moe['hf']:.2f})")
    for cls, u in UTILISATION.items()}
QLORA_TIME_FACTOR = _model().qlora_time_factor
# (sharded weights?, nvlink?) -> efficiency for more than one GPU
SCALING_EFFICIENCY = {
    (False, True): _model().scaling["ddp_nvlink"],
    (False, False): _model().scaling["ddp_pcie"],
    (True, True): _model().scaling["sharded_nvlink"],
    (True, False): _model().scaling["sharded_pcie"],
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
    (k routed experts of each MoE layer) for a Mixture-of-Experts model; the input embedding lookup never. Under
    dense dispatch (Llama 4 in Transformers, schema.MoESpec.dense_dispatch) every expert multiplies every token, the
    unselected ones by a zero router score, so all of them count."""
    m = plan.model
    lookup_only = 0 if m.tied_embeddings else m.vocab * m.hidden
    touched = active_params(m)
    if m.moe is not None and m.moe.dense_dispatch:
        touched += moe_layer_count(m) * (m.moe.experts - m.moe.experts_per_token) * expert_params(m)
    return max(touched - lookup_only, 1)


# The last plan's FLOPs: ranking the catalogue asks for the same plan's speed four times per card (speed, cost per
# million tokens, training cost, tokens for the budget). A plan is immutable (schema.Strict), so the same object has
# the same FLOPs; the tuple is read and replaced whole, which keeps it safe across threads.
_LAST_FLOPS: Tuple[Optional[TrainingPlan], float] = (None, 0.0)


def flops_per_token(plan: TrainingPlan) -> float:
    """Training FLOPs per token for the plan (recomputation included when it checkpoints)."""
    global _LAST_FLOPS
    last = _LAST_FLOPS
    if last[0] is plan:
        return last[1]
    value = _flops_per_token(plan)
    _LAST_FLOPS = (plan, value)
    return value


def _flops_per_token(plan: TrainingPlan) -> float:
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


def utilisation(card, method: str, moe: bool = False, stack: str = "hf") -> float:
    """Fraction of the card's peak a run of this stack keeps (QLoRA's dequantisation not included)."""
    return _model().utilisation(card.perf_class, stack, moe)


def is_estimated(plan: TrainingPlan, card) -> bool:
    """True when the speed for this plan on this card rests on no published measurement (say so in the answer)."""
    return not UTILISATION[card.perf_class].measured


def scaling_efficiency(plan: TrainingPlan, card) -> float:
    if plan.gpus <= 1:
        return 1.0
    return SCALING_EFFICIENCY[(plan.sharding in ("zero3", "fsdp"), bool(card.nvlink))]


def per_gpu_tokens_per_second(plan: TrainingPlan, card, model: Optional[SpeedModel] = None,
                              stack: Optional[str] = None) -> float:
    """One GPU's training tokens per second, before multi-GPU scaling (``stack`` overrides the plan's: the
    calibration replays reference stacks the advisor does not offer)."""
    model = model or _model()
    used = card.bf16_tflops * 1e12 * model.utilisation(card.perf_class, stack or plan.stack,
                                                       plan.model.moe is not None)
    if plan.method == "qlora":
        used /= model.qlora_time_factor
    compute_s = flops_per_token(plan) / used
    # a fixed cost per micro-step (kernel launches, the optimizer, the data loader) that short sequences and
    # small models do not hide
    overhead_s = model.step_overhead_s / (plan.micro_batch * plan.seq_len)
    return 1.0 / (compute_s + overhead_s)


def tokens_per_second(plan: TrainingPlan, card) -> float:
    """Training tokens per second for the whole plan (all its GPUs together)."""
    return per_gpu_tokens_per_second(plan, card) * plan.gpus * scaling_efficiency(plan, card)


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
                        gpu_hours=hours * plan.gpus, cost_usd=cost, cost_usd_with_vat=price_with_vat(cost, vat_rate),
                        estimated=is_estimated(plan, card))


def cost_per_million_tokens(plan: TrainingPlan, card) -> float:
    """USD (VAT excluded) to train on one million tokens."""
    return 1e6 / tokens_per_second(plan, card) / 3600 * plan.gpus * card.price_usd_hour


def tokens_for_budget(plan: TrainingPlan, card, budget_usd_with_vat: float, vat_rate: float) -> float:
    """How many training tokens a budget (VAT included) buys on this card."""
    hourly = price_with_vat(plan.gpus * card.price_usd_hour, vat_rate)
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
