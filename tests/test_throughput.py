"""Throughput, time and cost: the FLOP count, the utilisation table against published measurements
(the research note gpu-facts.md §2, figures quoted in bot/advisor/throughput.py), and the cost arithmetic."""
from __future__ import annotations

import pytest

from bot.advisor.knowledge import load_knowledge
from bot.advisor.plans import default_plan, sharded_plan
from bot.advisor.schema import ModelArch, TrainingPlan
from bot.advisor.throughput import (
    QLORA_TIME_FACTOR,
    UTILISATION,
    cost_per_million_tokens,
    flops_params,
    flops_per_token,
    tokens_for_budget,
    tokens_per_second,
    training_cost,
    volume_tokens,
)

KB = load_knowledge()
LLAMA8 = KB.model("llama-3.1-8b").arch
# MPT-7B (mosaicml/mpt-7b config.json: d_model 4096, 32 layers, 32 heads, expansion 4, vocab 50432, tied).
MPT7 = ModelArch(name="MPT-7B", params=6_649_286_656, layers=32, hidden=4096, heads=32, kv_heads=32,
                 intermediate=16384, vocab=50432, tied_embeddings=True, mlp="gelu")


def plan(arch=LLAMA8, method="lora", seq_len=2048, checkpointing=True, **extra) -> TrainingPlan:
    data = default_plan(arch, method, seq_len).dict()
    data.update(gradient_checkpointing=checkpointing, **extra)
    return TrainingPlan(**data)


def test_full_is_six_n_plus_attention():
    p = plan(method="full", checkpointing=False)
    n = flops_params(p)
    attention = 3 * 4 * LLAMA8.layers * LLAMA8.hidden * 2048
    assert flops_per_token(p) == 6 * n + attention


def test_lora_is_four_n_and_checkpointing_adds_a_forward():
    lora, full = plan(checkpointing=False), plan(method="full", checkpointing=False)
    n = flops_params(lora)
    assert flops_per_token(full) - flops_per_token(lora) == 2 * n
    attention_forward = 4 * LLAMA8.layers * LLAMA8.hidden * 2048
    assert flops_per_token(plan(checkpointing=True)) - flops_per_token(lora) == 2 * n + attention_forward


def test_input_embedding_is_not_counted_unless_tied():
    assert flops_params(plan()) == LLAMA8.params - LLAMA8.vocab * LLAMA8.hidden
    tied = KB.model("llama-3.2-1b").arch
    assert flops_params(plan(arch=tied)) == tied.params


def test_longer_sequences_cost_more_per_token():
    long, medium, short = (flops_per_token(plan(seq_len=n)) for n in (8192, 2048, 512))
    assert long > medium > short


def test_qlora_is_slower_than_lora_by_the_measured_factor():
    card = KB.gpu("a100")
    # the dequantisation factor applies to the compute time; the fixed per-step overhead does not grow with it
    ratio = tokens_per_second(plan(), card) / tokens_per_second(plan(method="qlora"), card)
    assert 1.0 < ratio <= QLORA_TIME_FACTOR
    assert 1.15 <= QLORA_TIME_FACTOR <= 1.31  # gpu-facts.md §2.2: +15 % to +30.5 % time


def test_every_card_class_has_a_documented_utilisation():
    for card in KB.gpus:
        entry = UTILISATION[card.perf_class]
        assert 0.15 <= entry.value <= 0.8   # hardware-FLOPs utilisation (bench/fit_throughput.py MAX_HFU)
        assert len(entry.basis) > 40


def test_h100_is_clearly_faster_than_a100():
    # seed article: "H100 is significantly faster than A100 in transformer training"; llm-foundry: 2.3x (MPT-7B at
    # micro-batch 6-16); at micro-batch 1 the fixed per-step cost takes part of the H100's lead
    ratio = tokens_per_second(plan(), KB.gpu("h100")) / tokens_per_second(plan(), KB.gpu("a100"))
    assert 1.5 <= ratio <= 3.0
    big = plan(micro_batch=8)
    assert tokens_per_second(big, KB.gpu("h100")) / tokens_per_second(big, KB.gpu("a100")) > ratio


# The published measurements are replayed in tests/test_throughput_calibration.py
# (knowledge/calibration/throughput_cases.yaml, with a held-out part).


def test_short_steps_pay_the_fixed_step_cost():
    card = KB.gpu("h100")
    short, long = plan(seq_len=256), plan(seq_len=8192)
    # per token, the short sequence loses more to the per-step overhead than it saves on attention
    assert tokens_per_second(short, card) < tokens_per_second(plan(seq_len=2048), card)
    assert tokens_per_second(long, card) < tokens_per_second(plan(seq_len=2048), card) * 1.5


def test_time_and_cost_arithmetic():
    p, card = plan(), KB.gpu("a40")
    cost = training_cost(p, card, 36e6, vat_rate=0.2)
    speed = tokens_per_second(p, card)
    assert cost.tokens_per_second == speed
    assert cost.hours == pytest.approx(36e6 / speed / 3600)
    assert cost.cost_usd == pytest.approx(cost.hours * 0.74)
    assert cost.cost_usd_with_vat == pytest.approx(cost.cost_usd * 1.2)
    assert cost_per_million_tokens(p, card) == pytest.approx(training_cost(p, card, 1e6, 0).cost_usd)


def test_budget_buys_the_tokens_that_cost_the_budget():
    p, card = plan(), KB.gpu("h100")
    bought = tokens_for_budget(p, card, 100.0, vat_rate=0.2)
    assert training_cost(p, card, bought, 0.2).cost_usd_with_vat == pytest.approx(100.0)


def test_multi_gpu_scales_below_linear_and_pcie_sharding_scales_worst():
    base = plan(arch=KB.model("llama-3.1-70b").arch, method="qlora")
    for card_id in ("h100", "l40s"):
        card = KB.gpu(card_id)
        one, four = tokens_per_second(base, card), tokens_per_second(sharded_plan(base, 4, "zero3"), card)
        assert one < four < 4 * one
    h100 = tokens_per_second(sharded_plan(base, 4, "zero3"), KB.gpu("h100")) / tokens_per_second(base, KB.gpu("h100"))
    l40s = tokens_per_second(sharded_plan(base, 4, "zero3"), KB.gpu("l40s")) / tokens_per_second(base, KB.gpu("l40s"))
    assert l40s < h100  # no NVLink: ZeRO-3's gathers cross PCIe
    ddp = tokens_per_second(sharded_plan(base, 4, "ddp"), KB.gpu("l40s")) / tokens_per_second(base, KB.gpu("l40s"))
    assert ddp > l40s


def test_gpu_hours_and_cost_count_every_gpu():
    p4 = sharded_plan(plan(), 4, "zero3")
    cost = training_cost(p4, KB.gpu("h100"), 1e8, 0.2)
    assert cost.gpu_hours == pytest.approx(4 * cost.hours)
    assert cost.cost_usd == pytest.approx(cost.gpu_hours * 4.99)


def test_volume_tokens():
    assert volume_tokens(examples=5000, avg_tokens=600, epochs=3) == 9_000_000
    assert volume_tokens(total_tokens=20e6) == 20e6
    assert volume_tokens(total_tokens=20e6, epochs=2) == 40e6
    assert volume_tokens(examples=5000, avg_tokens=600) == 3_000_000
    assert volume_tokens(examples=5000) is None
    assert volume_tokens() is None


def test_seed_example_a40_twenty_hours():
    # seed article: QLoRA 8B on A40 for 20 hours = 20 x 0.74 = $14.80 + VAT
    p, card = plan(method="qlora"), KB.gpu("a40")
    tokens_in_20h = tokens_per_second(p, card) * 20 * 3600
    assert training_cost(p, card, tokens_in_20h, 0.2).cost_usd == pytest.approx(14.80)


# ---------------------------------------------------------------- issue 9: MoE throughput and the estimated flag

def test_moe_flops_follow_active_parameters():
    from bot.advisor.architecture import active_params

    oss = KB.model("gpt-oss-20b").arch
    n = flops_params(plan(oss))
    # models-2026.md §4: NeMo's gpt-oss-20b run works out to 21.4 GFLOP/token for 6N, i.e. N ≈ 3.6 B active
    assert 6 * n / 1e9 == pytest.approx(21.4, rel=0.05)
    assert n == active_params(oss) - oss.vocab * oss.hidden
    dense = KB.model("qwen3-32b").arch
    assert flops_per_token(plan(KB.model("qwen3-30b-a3b").arch)) < 0.2 * flops_per_token(plan(dense))


def test_moe_runs_below_dense_utilisation_and_hopper_is_the_only_measured_class():
    from bot.advisor.throughput import MOE_UTILISATION, is_estimated

    h100, l4 = KB.gpu("h100"), KB.gpu("l4")
    assert MOE_UTILISATION["hopper"].value < 0.5 * UTILISATION["hopper"].value and MOE_UTILISATION["hopper"].measured
    assert all(not u.measured for cls, u in MOE_UTILISATION.items() if cls != "hopper")
    assert all(MOE_UTILISATION[c].value < UTILISATION[c].value for c in UTILISATION)
    moe = plan(KB.model("qwen3-30b-a3b").arch)
    assert not is_estimated(moe, h100) and is_estimated(moe, l4)
    assert not is_estimated(plan(), h100) and is_estimated(plan(), l4)   # no published L4 fine-tuning figure
    cost = training_cost(moe, l4, 1e6, 0.2)
    assert cost.estimated is True and training_cost(plan(), h100, 1e6, 0.2).estimated is False


def test_linear_attention_layers_have_no_quadratic_flops():
    qwen35 = KB.model("qwen3.5-27b").arch
    all_full = qwen35.copy(update={"layer_pattern": "F", "linear_attention": None})
    long = 32768
    hybrid_attn = flops_per_token(plan(qwen35, seq_len=long)) - flops_per_token(plan(qwen35, seq_len=1024))
    full_attn = flops_per_token(plan(all_full, seq_len=long)) - flops_per_token(plan(all_full, seq_len=1024))
    assert hybrid_attn == pytest.approx(full_attn / 4, rel=0.01)
