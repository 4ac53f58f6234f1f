"""Physical properties of the memory estimator and the plan builders."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import bot.advisor.estimator as estimator
from bot.advisor.estimator import GIB, adapter_params, estimate_memory
from bot.advisor.plans import default_plan, plan_from_mapping, sharded_plan
from bot.advisor.schema import COMPONENTS, ModelArch, TrainingPlan

LLAMA_8B = ModelArch(name="Llama-3.1-8B", params=8030261248, layers=32, hidden=4096, heads=32, kv_heads=8,
                     intermediate=14336, vocab=128256, tied_embeddings=False, mlp="swiglu")
LLAMA_3B_TIED = ModelArch(name="Llama-3.2-3B", params=3212749824, layers=28, hidden=3072, heads=24, kv_heads=8,
                          intermediate=8192, vocab=128256, tied_embeddings=True, mlp="swiglu")


def arch(**changes) -> ModelArch:
    return ModelArch(**{**LLAMA_8B.dict(), **changes})


def plan(method="lora", seq_len=2048, **changes) -> TrainingPlan:
    base = default_plan(changes.pop("model", LLAMA_8B), method, seq_len)
    return TrainingPlan(**{**base.dict(), **changes})


def est(p: TrainingPlan):
    return estimate_memory(p)


def comp(p: TrainingPlan, name: str) -> float:
    return estimate_memory(p).components_gib[name]


def static_gib(e) -> float:
    """Weights, gradients and optimizer states of an estimate."""
    return sum(e.components_gib[k] for k in ("weights", "gradients", "optimizer"))


# ---------------------------------------------------------------- structure

def test_estimate_has_every_component_and_a_range():
    e = est(plan("qlora"))
    assert set(e.components_gib) == set(COMPONENTS)
    assert sum(e.components_gib.values()) == pytest.approx(e.per_gpu_gib, abs=0.01)
    assert e.low_gib < e.per_gpu_gib < e.high_gib


def test_every_assumption_code_is_documented_in_the_formula_document():
    formula = (Path(estimator.__file__).with_name("FORMULA.md")).read_text(encoding="utf-8")
    documented = set(re.findall(r"^    ([a-z0-9_]+)\s{2,}", formula, re.M))
    variants = [plan(m, seq_len=s, gradient_checkpointing=gc, attention=a)
                for m in ("full", "lora", "qlora") for s in (512, 8192) for gc in (True, False)
                for a in ("flash", "eager")]
    variants += [sharded_plan(plan(m), 4, sh) for m in ("full", "lora") for sh in ("ddp", "fsdp", "zero2", "zero3")]
    variants += [plan("full", precision=p, optimizer=o) for p in ("bf16", "fp32") for o in
                 ("sgd", "adamw_8bit", "paged_adamw", "paged_adamw_8bit")]
    variants += [plan("full", offload="optimizer"), plan("full", offload="optimizer_and_params"),
                 plan("lora", precision="mixed", gradient_checkpointing=False),
                 plan("full", compiled=True, optimizer_in_backward=True, activation_offload=True),
                 plan("full", cross_entropy="chunked"), plan("lora", cross_entropy="fused"),
                 plan("lora", model=LLAMA_3B_TIED),
                 sharded_plan(plan("lora").copy(update={"fsdp_mixed_wrap": True}), 2, "fsdp")]
    used = {code for p in variants for code in est(p).assumptions}
    assert used <= documented, f"undocumented codes: {sorted(used - documented)}"


def test_estimate_is_pure_arithmetic_without_io(monkeypatch):
    """No file, socket or subprocess inside the estimator (its speed is bench/bench_advice.py's, never a test's)."""
    import builtins
    import socket
    import subprocess

    def refuse(*args, **kwargs):
        raise AssertionError("the estimator did I/O")

    p = plan("qlora")
    expected = estimate_memory(p)  # knowledge tables loaded before I/O is refused
    for module, name in ((builtins, "open"), (socket, "socket"), (subprocess, "Popen")):
        monkeypatch.setattr(module, name, refuse)
    assert estimate_memory(p) == expected


# ---------------------------------------------------------------- weights and precision

def test_qlora_weights_are_far_below_lora_weights_for_8b():
    qlora, lora = comp(plan("qlora"), "weights"), comp(plan("lora"), "weights")
    assert lora == pytest.approx(LLAMA_8B.params * 2 / GIB, rel=0.01)     # bf16 base
    assert qlora < 0.45 * lora
    # the 16-bit embedding and LM head alone are 1.96 GiB of the QLoRA weights
    assert qlora > 2 * LLAMA_8B.vocab * LLAMA_8B.hidden * 2 / GIB


def test_full_mixed_precision_static_is_16_bytes_per_param():
    e = est(plan("full"))
    static = e.components_gib["weights"] + e.components_gib["gradients"] + e.components_gib["optimizer"]
    assert static == pytest.approx(16 * LLAMA_8B.params / GIB, rel=0.01)
    assert "mixed_precision_fp32_master" in e.assumptions


def test_pure_bf16_full_halves_the_static_memory():
    mixed, bf16 = est(plan("full")), est(plan("full", precision="bf16"))
    assert "full_pure_bf16" in bf16.assumptions
    assert "pure_bf16_halves_static" in mixed.assumptions      # the hint goes with the mixed plan
    assert static_gib(bf16) == pytest.approx(static_gib(mixed) / 2, rel=0.02)


def test_lora_in_mixed_precision_holds_an_fp32_base():
    assert comp(plan("lora", precision="mixed"), "weights") == pytest.approx(2 * comp(plan("lora"), "weights"),
                                                                           rel=0.01)


def test_tied_embeddings_count_the_vocabulary_matrix_once():
    vh = LLAMA_8B.vocab * LLAMA_8B.hidden
    tied = arch(tied_embeddings=True, params=LLAMA_8B.params - vh)
    for method in ("lora", "qlora"):
        diff = comp(plan(method), "weights") - comp(plan(method, model=tied), "weights")
        assert diff == pytest.approx(vh * 2 / GIB, rel=0.02)           # one 16-bit matrix fewer
    assert "tied_embeddings" in est(plan("lora", model=tied)).assumptions


# ---------------------------------------------------------------- adapters

def test_adapter_parameters_follow_the_module_shapes():
    # PEFT prints "trainable params: 41,943,040" for Llama-3-8B, r 16 on all linear layers
    assert adapter_params(plan("lora")) == 41_943_040
    qv = plan("lora", lora={"rank": 16, "targets": "attention_qv"})
    assert adapter_params(qv) == 32 * 16 * ((4096 + 4096) + (4096 + 1024))


def test_gqa_shrinks_kv_adapters_and_activations():
    mha = arch(kv_heads=32)
    attn = {"rank": 16, "targets": "attention"}
    assert adapter_params(plan("lora", lora=attn)) < adapter_params(plan("lora", model=mha, lora=attn))
    no_gc = dict(gradient_checkpointing=False)
    assert comp(plan("lora", **no_gc), "activations") < comp(plan("lora", model=mha, **no_gc), "activations")
    assert "gqa_kv_heads" in est(plan("lora")).assumptions


def test_mlp_targets_save_more_activations_than_qv_targets():
    no_gc = dict(gradient_checkpointing=False)
    qv = plan("lora", lora={"rank": 16, "targets": "attention_qv"}, **no_gc)
    allin = plan("lora", lora={"rank": 16, "targets": "all_linear"}, **no_gc)
    assert comp(allin, "activations") > comp(qv, "activations") + 1.0
    assert comp(allin, "adapters") > comp(qv, "adapters")


def test_adapters_are_fp32_with_fp32_adamw_states():
    e = est(plan("lora"))
    n = adapter_params(plan("lora"))
    assert e.components_gib["adapters"] == pytest.approx(n * 4 / GIB, rel=0.01)
    assert e.components_gib["optimizer"] == pytest.approx(n * 8 / GIB, rel=0.01)


# ---------------------------------------------------------------- activations and logits

def test_gradient_checkpointing_lowers_activations():
    for method in ("full", "lora", "qlora"):
        on = comp(plan(method, seq_len=4096), "activations")
        off = comp(plan(method, seq_len=4096, gradient_checkpointing=False), "activations")
        assert on < off / 5, method


def test_checkpointing_is_a_mode_not_a_factor():
    # stored = one layer input per block; growing the MLP changes only the recomputed block
    small, big = arch(), arch(intermediate=28672)

    def on(a):
        return comp(plan("lora", model=a, seq_len=4096), "activations")

    def off(a):
        return comp(plan("lora", model=a, seq_len=4096, gradient_checkpointing=False), "activations")

    assert on(big) / on(small) < off(big) / off(small)


def test_longer_sequences_raise_activations_and_logits():
    short, long_ = est(plan("lora", seq_len=1024)), est(plan("lora", seq_len=8192))
    assert long_.components_gib["activations"] > 4 * short.components_gib["activations"]
    assert long_.components_gib["logits"] == pytest.approx(8 * short.components_gib["logits"], rel=0.01)
    assert long_.per_gpu_gib > short.per_gpu_gib


def test_micro_batch_scales_activations_linearly():
    one = comp(plan("lora", gradient_checkpointing=False), "activations")
    four = comp(plan("lora", gradient_checkpointing=False, micro_batch=4), "activations")
    assert four == pytest.approx(4 * one, rel=0.05)


def test_eager_attention_costs_more_than_flash_at_long_sequences():
    kw = dict(seq_len=8192, gradient_checkpointing=False)
    eager, flash = comp(plan("lora", attention="eager", **kw), "activations"), comp(plan("lora", **kw), "activations")
    assert eager > 3 * flash          # 32 heads x 8192^2 scores per layer
    short = dict(seq_len=256, gradient_checkpointing=False)
    assert (comp(plan("lora", attention="eager", **short), "activations")
            < 1.5 * comp(plan("lora", **short), "activations"))


def test_logits_scale_with_vocabulary():
    v32k = arch(vocab=32000, params=LLAMA_8B.params - 2 * (128256 - 32000) * 4096)
    no_gc = dict(gradient_checkpointing=False)
    assert comp(plan("qlora", **no_gc), "logits") == pytest.approx(
        128256 / 32000 * comp(plan("qlora", model=v32k, **no_gc), "logits"), rel=0.01)
    # 2048 tokens x 128256 x (2 B held + 3 fp32 copies) = 3.4 GiB for Llama-3
    assert comp(plan("qlora"), "logits") == pytest.approx(2048 * 128256 * 14 / GIB, rel=0.01)


def test_fused_and_chunked_cross_entropy_shrink_the_logits():
    standard = comp(plan("lora"), "logits")
    assert comp(plan("lora", compiled=True), "logits") < standard / 2
    # eager chunked CE still saves every chunk's fp32 log-probs; compiled, only the held 16-bit chunks remain
    assert comp(plan("lora", cross_entropy="chunked"), "logits") < standard / 1.8
    assert comp(plan("lora", cross_entropy="chunked", compiled=True), "logits") < standard / 4
    assert comp(plan("lora", cross_entropy="fused"), "logits") < standard / 5


def test_qlora_saves_more_activations_than_lora_without_checkpointing():
    # bitsandbytes 4-bit linears keep their inputs for backward (vram-estimators.md §4.6)
    kw = dict(gradient_checkpointing=False, lora={"rank": 8, "targets": "attention_qv"})
    assert comp(plan("qlora", **kw), "activations") > comp(plan("lora", **kw), "activations")


# ---------------------------------------------------------------- optimizer, sharding, offload

def test_optimizer_kinds_order():
    def opt(o):
        return comp(plan("full", precision="bf16", optimizer=o), "optimizer")

    assert opt("adamw") > opt("adamw_8bit") > opt("paged_adamw_8bit") >= 0
    assert opt("sgd") == 0.0
    assert opt("paged_adamw") < opt("adamw") / 10          # paged state lives outside the peak


def test_zero3_divides_weights_grads_and_states_by_gpus():
    one, four = est(plan("full")), est(sharded_plan(plan("full"), 4, "zero3"))
    # DeepSpeed: 2 (bf16 weights) + 2 (bf16 grads) + 12 (fp32 master, m, v) = 16 B/param, / gpus,
    # plus the gathered layers, LM head and one unsharded gradient unit
    assert 16 * LLAMA_8B.params / 4 / GIB < static_gib(four) < 16 * LLAMA_8B.params / 4 / GIB + 3.5
    assert four.per_gpu_gib < one.per_gpu_gib / 3
    eight = est(sharded_plan(plan("full"), 8, "zero3"))
    assert eight.components_gib["optimizer"] == pytest.approx(four.components_gib["optimizer"] / 2, rel=0.01)


def test_zero2_keeps_full_weights_but_shards_states():
    z2 = est(sharded_plan(plan("full"), 4, "zero2"))
    z3 = est(sharded_plan(plan("full"), 4, "zero3"))
    assert z2.components_gib["weights"] == pytest.approx(LLAMA_8B.params * 2 / GIB, rel=0.01)
    assert z3.components_gib["weights"] < z2.components_gib["weights"] / 2
    assert z2.components_gib["optimizer"] == pytest.approx(z3.components_gib["optimizer"], rel=0.01)


def test_ddp_does_not_reduce_per_gpu_memory():
    assert est(sharded_plan(plan("full"), 4, "ddp")).per_gpu_gib >= est(plan("full")).per_gpu_gib


def test_offload_moves_optimizer_and_parameters_off_the_gpu():
    base = sharded_plan(plan("full"), 4, "zero3")
    opt_off = est(base.copy(update={"offload": "optimizer"}))
    all_off = est(base.copy(update={"offload": "optimizer_and_params"}))
    assert opt_off.components_gib["optimizer"] == 0.0
    assert opt_off.per_gpu_gib < est(base).per_gpu_gib
    assert all_off.per_gpu_gib < opt_off.per_gpu_gib
    assert "offload_params" in all_off.assumptions


def test_fsdp_mixed_wrap_adds_full_gradients_for_frozen_weights():
    fsdp = sharded_plan(plan("lora"), 2, "fsdp")
    pitfall = est(fsdp.copy(update={"fsdp_mixed_wrap": True}))
    assert pitfall.per_gpu_gib - est(fsdp).per_gpu_gib > 10      # ~13 GiB of bf16 grads
    assert est(fsdp).high_gib >= pitfall.per_gpu_gib * 0.95      # the range warns about it


def test_optimizer_in_backward_drops_the_whole_gradient_set():
    bf16 = plan("full", precision="bf16")
    assert comp(bf16.copy(update={"optimizer_in_backward": True}), "gradients") < comp(bf16, "gradients") / 10


# ---------------------------------------------------------------- plans

def test_default_plans_follow_the_documented_defaults():
    lora = default_plan(LLAMA_8B, "lora", 2048)
    assert (lora.precision, lora.optimizer, lora.lora.rank, lora.lora.targets) == ("bf16", "adamw", 16, "all_linear")
    assert (lora.micro_batch, lora.gradient_checkpointing, lora.attention, lora.gpus) == (1, True, "flash", 1)
    assert default_plan(LLAMA_8B, "qlora", 2048).method == "qlora"
    full = default_plan(LLAMA_8B, "full", 2048)
    assert (full.precision, full.lora, full.gradient_checkpointing, full.micro_batch) == ("mixed", None, True, 1)
    multi = default_plan(LLAMA_8B, "full", 2048, gpus=4, micro_batch=2)
    assert (multi.gpus, multi.sharding, multi.micro_batch) == (4, "zero3", 2)


def test_sharded_plan_with_one_gpu_is_unsharded():
    assert sharded_plan(plan("full"), 1).sharding == "none"
    with pytest.raises(ValueError, match="sharding"):
        sharded_plan(plan("full"), 2, "tensor-parallel")
    with pytest.raises(ValueError, match="gpus"):
        sharded_plan(plan("full"), 0)


def test_plan_from_mapping_resolves_presets_and_fills_defaults():
    seen = []
    p = plan_from_mapping({"model": "llama-3.1-8b", "method": "qlora", "seq_len": 1024,
                           "seq_len_note": "ignored annotation"},
                          resolve_preset=lambda name: seen.append(name) or LLAMA_8B)
    assert seen == ["llama-3.1-8b"]
    assert p == default_plan(LLAMA_8B, "qlora", 1024)
    full = plan_from_mapping({"model": LLAMA_8B.dict(), "method": "full", "seq_len": 512, "gpus": 2},
                             resolve_preset=lambda name: None)
    assert (full.precision, full.sharding) == ("mixed", "zero3")


@pytest.mark.parametrize("data, field", [
    ({"method": "lora", "seq_len": 512}, "model"),
    ({"model": "nope", "method": "lora", "seq_len": 512}, "model"),
    ({"model": LLAMA_8B.dict(), "method": "dpo", "seq_len": 512}, "method"),
    ({"model": LLAMA_8B.dict(), "method": "lora", "seq_len": -5}, "seq_len"),
    ({"model": LLAMA_8B.dict(), "method": "lora", "seq_len": 512, "micro_batch": 0}, "micro_batch"),
    ({"model": LLAMA_8B.dict(), "method": "lora", "seq_len": 512, "optimizer": "lion"}, "optimizer"),
    ({"model": LLAMA_8B.dict(), "method": "lora", "seq_len": 512, "colour": "red"}, "colour"),
    ({"model": {**LLAMA_8B.dict(), "hidden": -1}, "method": "lora", "seq_len": 512}, "model.hidden"),
    ({"model": {**LLAMA_8B.dict(), "kv_heads": 5}, "method": "lora", "seq_len": 512}, "model.heads"),
    ({"model": LLAMA_8B.dict(), "method": "lora", "seq_len": 512, "lora": {"rank": 9000}}, "lora.rank"),
])
def test_bad_plans_raise_value_errors_that_name_the_field(data, field):
    def resolve(name):
        raise KeyError(name)
    with pytest.raises(ValueError) as info:
        plan_from_mapping(data, resolve_preset=resolve)
    assert str(info.value).startswith(field), str(info.value)


# ---------------------------------------------------------------- issue 9: MoE, hybrid attention, big vocabularies

from bot.advisor.architecture import active_params  # noqa: E402
from bot.advisor.knowledge import load_knowledge  # noqa: E402

KB = load_knowledge()


def preset(pid: str) -> ModelArch:
    return KB.model(pid).arch


def test_moe_weights_follow_all_experts_activations_follow_active_ones():
    moe = preset("qwen3-30b-a3b")
    lora = est(plan("lora", model=moe))
    assert lora.components_gib["weights"] == pytest.approx(moe.params * 2 / GIB, rel=0.01)   # all 30.5B in bf16
    # activations: a 30B MoE with 3.35B active saves far less per token than a dense 32B
    dense = est(plan("lora", model=preset("qwen3-32b")))
    assert lora.components_gib["activations"] < 0.5 * dense.components_gib["activations"]
    full = est(plan("full", model=moe, gradient_checkpointing=True))
    assert full.components_gib["optimizer"] == pytest.approx(moe.params * 8 / GIB, rel=0.01)   # AdamW on every expert
    assert "moe_all_experts_resident" in lora.assumptions and "moe_active_experts" in lora.assumptions
    assert active_params(moe) / moe.params == pytest.approx(0.11, abs=0.01)


def test_moe_lora_targets_are_a_plan_option_with_a_documented_default():
    moe = preset("qwen3-30b-a3b")
    sizes = {t: adapter_params(plan("lora", model=moe, lora={"rank": 16, "targets": "all_linear", "moe_targets": t}))
             for t in ("attention", "attention_dense_shared", "all_experts")}
    assert sizes["attention"] == sizes["attention_dense_shared"]      # Qwen3 MoE has no dense layers or shared experts
    # one adapter per expert: 128 experts x 3 matrices x rank x (in + out) on every layer
    per_layer_experts = 128 * 16 * 3 * (2048 + 768)
    assert sizes["all_experts"] - sizes["attention"] == 48 * per_layer_experts
    assert TrainingPlan(**plan("lora", model=moe).dict()).lora.moe_targets == "attention_dense_shared"
    scout = preset("llama-4-scout")                                   # shared expert: adapted by the default only
    with_shared = adapter_params(plan("lora", model=scout))
    attention_only = adapter_params(plan("lora", model=scout, lora={"rank": 16, "targets": "all_linear",
                                                                   "moe_targets": "attention"}))
    assert with_shared > attention_only


def test_qlora_of_moe_assumes_bf16_experts_and_gives_the_nf4_figure():
    e = est(plan("qlora", model=preset("qwen3-30b-a3b")))
    assert "qlora_moe_experts_bf16" in e.assumptions
    nf4 = e.alternatives_gib["qlora_moe_experts_nf4"]
    assert nf4 < 0.5 * e.per_gpu_gib
    other = est(plan("qlora", model=preset("qwen3-30b-a3b"), qlora_moe_experts="nf4"))
    assert other.per_gpu_gib == pytest.approx(nf4, abs=0.01)
    assert other.alternatives_gib["qlora_moe_experts_bf16"] == pytest.approx(e.per_gpu_gib, abs=0.01)
    assert est(plan("qlora")).alternatives_gib == {}                  # dense models have no such choice


def test_gpt_oss_bf16_dequantized_weights_must_fit_the_loading_gpu():
    oss = preset("gpt-oss-20b")
    e = est(plan("qlora", model=oss))
    assert e.load_peak_gib == pytest.approx(oss.params * 2 / GIB + 0.5, rel=0.01)
    assert e.per_gpu_gib >= e.load_peak_gib
    # DDP and ZeRO-2 replicate the weights: every GPU dequantizes the whole bf16 model
    replicated = est(sharded_plan(plan("lora", model=oss), 4, "zero2"))
    assert replicated.load_peak_gib == pytest.approx(e.load_peak_gib, rel=0.001)
    assert replicated.per_gpu_gib >= replicated.load_peak_gib > 38
    # FSDP / ZeRO-3 load sharded (transformers' mxfp4 dequantize per layer, to that layer's device): a quarter of
    # the bf16 model per GPU plus the layer being converted
    sharded = est(sharded_plan(plan("lora", model=oss), 4, "fsdp"))
    layer = max(oss.params * 2 / GIB / 4, 0) + 0.5
    assert layer < sharded.load_peak_gib < layer + 3
    assert "dequantized_load_sharded" in sharded.assumptions
    native = oss.copy(update={"moe": oss.moe.copy(update={"dequantize_for_training": False})})
    kept = est(plan("qlora", model=native))
    assert kept.load_peak_gib is None and kept.per_gpu_gib < 20 and "mxfp4_experts_kept" in kept.assumptions


def test_gemma3_12b_qlora_at_4096_tokens_no_longer_fits_a_24gb_card():
    usable = {g.id: g.usable_gib for g in KB.gpus}
    e = est(plan("qlora", seq_len=4096, model=preset("gemma-3-12b")))
    assert e.per_gpu_gib > usable["rtx4090"] and e.per_gpu_gib > usable["l4"]
    assert e.components_gib["logits"] > 12                           # 4096 x 262,208 logits x 14 B
    assert "large_vocab_logits" in e.assumptions


def test_soft_capping_adds_to_the_logits_term():
    gemma4 = preset("gemma-4-31b")
    capped = est(plan("lora", model=gemma4)).components_gib["logits"]
    plain = est(plan("lora", model=gemma4.copy(update={"final_logit_softcap": None}))).components_gib["logits"]
    assert capped == pytest.approx(plain * 18 / 14, rel=0.01)         # + tanh output + 16-bit gradient per logit


def test_eager_scores_skip_linear_attention_layers_only():
    qwen35 = preset("qwen3.5-27b")                                     # 3 of 4 layers Gated DeltaNet
    hybrid = qwen35
    all_full = qwen35.copy(update={"layer_pattern": "F", "linear_attention": None})
    def eager_delta(model):
        flash = est(plan("lora", seq_len=8192, model=model, gradient_checkpointing=False)).components_gib["activations"]
        eager = est(plan("lora", seq_len=8192, model=model, gradient_checkpointing=False,
                         attention="eager")).components_gib["activations"]
        return eager - flash
    assert eager_delta(hybrid) < 0.4 * eager_delta(all_full)
    assert "linear_attention_layers" in est(plan("lora", model=hybrid)).assumptions


def test_explicit_head_dim_is_used_for_adapters():
    qwen = preset("qwen3-0.6b")                                         # 16 heads x 128 = 2048 wide q on a 1024 model
    per_layer = 16 * ((1024 + 2048) + (1024 + 1024) * 2 + (2048 + 1024) + 3 * (1024 + 3072))
    assert adapter_params(plan("lora", model=qwen)) == 28 * per_layer


@pytest.mark.parametrize("pid", ["qwen3-235b-a22b", "llama-4-maverick", "mixtral-8x22b", "qwen3.5-35b-a3b",
                                 "gemma-4-26b-a4b", "gpt-oss-120b"])
def test_every_big_new_preset_gives_a_complete_estimate(pid):
    for method in ("full", "lora", "qlora"):
        e = est(plan(method, model=preset(pid)))
        assert set(e.components_gib) == set(COMPONENTS) and e.low_gib <= e.per_gpu_gib <= e.high_gib
        assert sum(e.components_gib.values()) == pytest.approx(e.per_gpu_gib, abs=0.01)


def test_default_plan_takes_the_moe_options():
    moe = preset("qwen3-30b-a3b")
    p = default_plan(moe, "qlora", 2048, moe_targets="all_experts", qlora_moe_experts="nf4")
    assert p.lora.moe_targets == "all_experts" and p.qlora_moe_experts == "nf4"
    assert default_plan(moe, "lora", 2048).lora.moe_targets == "attention_dense_shared"
    with pytest.raises(ValueError):
        default_plan(moe, "lora", 2048, moe_targets="some experts")


def test_gpt_oss_120b_lora_is_planned_on_several_80_gb_cards():
    """The dequantized bf16 load (~218 GiB) is per GPU only without sharding: ZeRO-3 over 8 cards loads ~1/8 each."""
    from bot.advisor.advice import AdviceRequest, advise

    oss = preset("gpt-oss-120b")
    single = est(plan("lora", model=oss))
    assert single.per_gpu_gib >= single.load_peak_gib > 200            # one GPU holds the whole bf16 model
    eight = est(sharded_plan(plan("lora", model=oss), 8, "zero3"))
    assert eight.load_peak_gib < 40 and eight.per_gpu_gib < 75
    advice = advise(AdviceRequest(model="gpt-oss-120b", method="lora", seq_len=2048))
    assert advice.multi_gpu is not None and advice.multi_gpu.count <= 8
    assert advice.multi_gpu.usable_gib >= advice.multi_gpu.per_gpu_gib
    assert 75 <= advice.multi_gpu.usable_gib <= 100                    # an 80 GB-class card is enough
    # gpt-oss-20b LoRA on one card: that card holds the whole dequantized bf16 model (~39 GiB, ~42 GB)
    small = advise(AdviceRequest(model="gpt-oss-20b", method="lora", seq_len=2048))
    bf16_gib = preset("gpt-oss-20b").params * 2 / GIB
    assert small.fitting_cards and all(fit.usable_gib > bf16_gib for fit in small.fitting_cards)
    assert small.estimate.load_peak_gib == pytest.approx(bf16_gib + 0.5, rel=0.01)


def test_dense_dispatch_saves_every_experts_tensors_in_the_recomputed_block():
    """Llama 4 in Transformers runs all experts on every token: the recomputed MoE block of a Maverick QLoRA step
    holds 128 experts' intermediates (about 8 x 8192 bytes per token each) instead of one expert's."""
    maverick = preset("llama-4-maverick")
    sparse = maverick.copy(update={"moe": maverick.moe.copy(update={"dense_dispatch": False})})
    dense_plan = plan("qlora", seq_len=4096, model=maverick, qlora_moe_experts="nf4", gpus=4, sharding="fsdp")
    sparse_plan = plan("qlora", seq_len=4096, model=sparse, qlora_moe_experts="nf4", gpus=4, sharding="fsdp")
    extra = comp(dense_plan, "activations") - comp(sparse_plan, "activations")
    per_expert_floor = 4 * 8192 * 2 * 4096 / GIB                  # gate, SiLU, up, down input in bf16
    assert extra > 127 * per_expert_floor
    assert comp(dense_plan, "weights") == comp(sparse_plan, "weights")
