"""advise(): request validation with field names, plan defaults, ranked cards, multi-GPU/quote, volume and budget."""
from __future__ import annotations

import pytest

from bot.advisor.advice import AdviceRequest, advise
from bot.advisor.estimator import estimate_memory
from bot.advisor.knowledge import InputError, UnknownModel, load_knowledge
from bot.advisor.plans import default_plan

KB = load_knowledge()


def req(**values) -> AdviceRequest:
    values.setdefault("method", "qlora")
    values.setdefault("seq_len", 2048)
    if "size_b" not in values:
        values.setdefault("model", "llama-3.1-8b")
    return AdviceRequest(**values)


def test_qlora_8b_uses_the_documented_default_plan():
    advice = advise(req(model="llama 8b"))
    assert advice.preset.id == "llama-3.1-8b" and not advice.by_size
    expected_plan = default_plan(KB.model("llama-3.1-8b").arch, "qlora", 2048)
    assert advice.plan == expected_plan
    assert advice.estimate == estimate_memory(expected_plan)
    assert advice.plan.lora.rank == 16 and advice.plan.gradient_checkpointing and advice.plan.micro_batch == 1
    assert {"default_lora", "micro_batch_1", "checkpointing_on"} <= set(advice.assumptions)


def test_best_is_the_cheapest_fitting_card():
    advice = advise(req())
    fitting = advice.fitting_cards
    assert advice.best == fitting[0]
    assert advice.best.price_usd_hour == min(c.price_usd_hour for c in fitting)
    assert advice.best_value.cost_per_million_tokens_usd == min(c.cost_per_million_tokens_usd for c in fitting)
    assert not advice.needs_quote and advice.multi_gpu is None


def test_size_only_uses_the_representative_and_says_so():
    advice = advise(req(size_b=13))
    assert advice.preset.id == "llama-2-13b" and advice.by_size and advice.requested_size_b == 13
    assert "preset_by_size" in advice.assumptions


def test_full_fine_tuning_of_70b_needs_several_gpus_and_a_quote():
    advice = advise(req(size_b=70, method="full"))
    assert not advice.fitting_cards and advice.best is None
    assert advice.needs_quote
    assert advice.multi_gpu_counts_tried == [2, 4, 8]
    assert advice.pure_bf16_estimate is not None
    assert advice.pure_bf16_estimate.per_gpu_gib < advice.estimate.per_gpu_gib
    assert "full_mixed_precision" in advice.assumptions


def test_full_fine_tuning_of_a_small_model_fits_one_card():
    advice = advise(req(model="qwen2.5-0.5b", method="full"))
    assert advice.best is not None and not advice.needs_quote
    assert advice.pure_bf16_estimate is not None


def test_requested_gpus_shard_with_zero3_and_need_a_quote():
    advice = advise(req(model="llama-3.1-70b", method="lora", gpus=4))
    assert advice.plan.gpus == 4 and advice.plan.sharding == "zero3"
    assert advice.needs_quote and "multi_gpu_sharded" in advice.assumptions
    single = advise(req(model="llama-3.1-70b", method="lora"))
    assert advice.estimate.per_gpu_gib < single.estimate.per_gpu_gib


def test_volume_time_and_cost():
    advice = advise(req(examples=5000, avg_tokens=600, epochs=3))
    assert advice.volume_tokens == 9_000_000
    for card in advice.fitting_cards:
        assert card.hours == pytest.approx(9e6 / card.tokens_per_second / 3600)
        assert card.cost_usd_with_vat == pytest.approx(card.hours * card.price_usd_hour * 1.2)
    assert "one_epoch" not in advice.assumptions
    assert "one_epoch" in advise(req(total_tokens=1e6)).assumptions


def test_budget_verdicts():
    small = advise(req(total_tokens=50e6, budget_usd=1))
    assert small.budget_verdict.verdict == "over"
    big = advise(req(total_tokens=50e6, budget_usd=1000))
    assert big.budget_verdict.verdict == "fits"
    assert set(big.budget_verdict.cards_within) == {c.card_id for c in big.fitting_cards}
    unknown = advise(req(budget_usd=20))
    assert unknown.budget_verdict.verdict == "volume_unknown"
    unlimited = advise(req(budget_unlimited=True, budget_usd=5))
    assert unlimited.budget_verdict.verdict == "unlimited"
    assert all(card.within_budget is None for card in unlimited.cards)


def test_lora_rank_is_used():
    advice = advise(req(method="lora", lora_rank=64))
    assert advice.plan.lora.rank == 64 and "default_lora" not in advice.assumptions
    assert advice.estimate.components_gib["adapters"] > advise(req(method="lora")).estimate.components_gib["adapters"]


def test_summary_has_the_slot_contract_keys():
    summary = advise(req()).summary()
    assert set(summary) == {"per_gpu_gib", "low_gib", "high_gib", "best_card", "best_price_usd_hour",
                            "fitting_cards", "needs_quote", "multi_gpu", "model_display"}
    assert summary["model_display"] == "Llama 3.1 8B" and summary["best_card"] in summary["fitting_cards"]


def test_a_count_without_a_length_takes_the_sequence_length_and_says_so():
    """Issue 21: "5,000 examples of 1,024 tokens" gave no card at all (the length went to seq_len, the count alone
    was an error); a length without a count is no volume."""
    counted = advise(AdviceRequest(model="llama-3.1-8b", method="qlora", seq_len=1024, examples=5000, epochs=2))
    assert counted.volume_tokens == 5000 * 1024 * 2 and "avg_tokens_seq_len" in counted.assumptions
    assert counted.recommendation is not None
    length_only = advise(AdviceRequest(model="llama-3.1-8b", method="qlora", seq_len=1024, avg_tokens=600))
    assert length_only.volume_tokens is None and "avg_tokens_seq_len" not in length_only.assumptions
    given = advise(AdviceRequest(model="llama-3.1-8b", method="qlora", seq_len=1024, examples=5000, avg_tokens=600))
    assert given.volume_tokens == 5000 * 600 and "avg_tokens_seq_len" not in given.assumptions


@pytest.mark.parametrize("values,field,key", [
    ({"seq_len": 0}, "seq_len", "bad_seq_len"),
    ({"seq_len": 1_000_001}, "seq_len", "bad_seq_len"),
    ({"method": "dpo"}, "method", "bad_method"),
    ({"budget_usd": -5}, "budget_usd", "bad_budget"),
    ({"budget_usd": 0}, "budget_usd", "bad_budget"),
    ({"total_tokens": 0}, "total_tokens", "bad_tokens"),
    ({"examples": -1, "avg_tokens": 500}, "examples", "bad_examples"),
    ({"epochs": 0}, "epochs", "bad_epochs"),
    ({"gpus": 0}, "gpus", "bad_gpus"),
    ({"gpus": 1000}, "gpus", "bad_gpus"),
    ({"lora_rank": 0, "method": "lora"}, "lora_rank", "bad_lora_rank"),
    ({"lora_rank": 8, "method": "full"}, "lora_rank", "rank_without_lora"),
    ({"lora_rank": 4096, "method": "lora", "model": "llama-3.2-1b"}, "lora_rank", "rank_above_hidden"),
    ({"model": None, "size_b": None}, "model", "missing_model"),
    ({"model": None, "size_b": -3}, "size_b", "bad_size"),
    ({"model": None, "size_b": 0}, "size_b", "bad_size"),
    ({"model": None, "size_b": 5000}, "size_b", "size_out_of_range"),
    ({"model": None, "size_b": 0.01}, "size_b", "size_out_of_range"),
])
def test_bad_values_name_their_field(values, field, key):
    base = {"model": "llama-3.1-8b", "method": "qlora", "seq_len": 2048}
    base.update(values)
    with pytest.raises(InputError) as info:
        advise(AdviceRequest(**base))
    assert isinstance(info.value, ValueError)
    assert (info.value.field, info.value.key) == (field, key)
    assert field in str(info.value)


def test_unknown_model_suggests_presets():
    with pytest.raises(UnknownModel) as info:
        advise(req(model="qwen 15b"))
    assert info.value.suggestions[0] == "qwen3-14b"  # the newest Qwen of the nearest size first


def test_from_values_turns_type_errors_into_field_errors():
    with pytest.raises(InputError) as info:
        AdviceRequest.from_values(model="llama-3.1-8b", method="lora", seq_len="lots")
    assert info.value.field == "seq_len" and info.value.key == "bad_value"
    ok = AdviceRequest.from_values(model="llama-3.1-8b", method="lora", seq_len=1024, budget_usd=None)
    assert ok.budget_usd is None and ok.seq_len == 1024


# The seed article's table "rough VRAM need by model size" names cards per size and method; the advice built on
# the estimator must agree with it (sequence length 2048, the defaults of bot/advisor/plans.py).
@pytest.mark.parametrize("size,method,fits,does_not_fit", [
    (8, "qlora", ["l4", "rtx4090"], []),                    # "7B/8B QLoRA: L4 24 GB, RTX 4090 24 GB"
    (8, "lora", ["a40", "l40s"], []),                       # "LoRA: A40 48 GB, L40S 48 GB"
    (13, "qlora", ["rtx4090", "a40"], []),                  # "13B QLoRA: RTX 4090 (tight), A40"
    (13, "lora", ["a100"], ["rtx4090"]),                    # "13B LoRA: A40/L40S (tight), A100 80 GB"
    (32, "qlora", ["a40", "l40s"], ["rtx4090"]),            # "32B QLoRA: A40 48 GB, L40S 48 GB"
    (32, "lora", ["rtx-pro-6000", "h200"], ["a40", "l40s"]),  # "32B LoRA: RTX PRO 6000 96 GB, H200 141 GB"
    (70, "qlora", ["a100", "h100", "rtx-pro-6000"], ["a40"]),  # "70B QLoRA: A100/H100 80 GB, RTX PRO 6000"
    (70, "lora", ["b200"], ["h100", "rtx-pro-6000"]),       # "70B LoRA: B200 180 GB (tight) or several GPUs"
    (7, "full", ["h200"], ["h100", "a100"]),                # "7B full: several A100/H100 80 GB or H200 141 GB"
])
def test_advice_agrees_with_the_seed_table(size, method, fits, does_not_fit):
    advice = advise(req(size_b=size, method=method))
    status = {card.card_id: card.status for card in advice.cards}
    assert all(status[card] != "no_fit" for card in fits), status
    assert all(status[card] == "no_fit" for card in does_not_fit), status


@pytest.mark.parametrize("size", [13, 32, 70])
def test_full_fine_tuning_beyond_small_models_needs_several_gpus(size):
    # seed article: "full training, except for small models, needs a serious multi-GPU configuration"
    advice = advise(req(size_b=size, method="full"))
    assert not advice.fitting_cards and advice.needs_quote


# ---------------------------------------------------------------------------------------------- issue 14 rules


def test_alternatives_when_the_job_barely_fits():
    # plain Transformers (the stacks with a fused loss hold it safely on the H200)
    advice = advise(AdviceRequest(model="llama-3.1-8b", method="full", seq_len=2048, stack="hf"))
    kinds = {alt.kind: alt for alt in advice.alternatives}
    assert {"bf16", "lora", "multi_gpu"} <= set(kinds)
    for alt in advice.alternatives:
        card = next(c for c in KB.gpus if c.id == alt.card_id)
        assert alt.per_gpu_gib <= card.usable_gib  # each variant really holds on the card it names
    assert kinds["bf16"].per_gpu_gib == pytest.approx(advice.pure_bf16_estimate.per_gpu_gib)


def test_lora_that_fits_only_big_cards_offers_qlora():
    advice = advise(AdviceRequest(model="llama-3.1-70b", method="lora", seq_len=1024))
    qlora = next(alt for alt in advice.alternatives if alt.kind == "qlora")
    assert qlora.card_id in ("a100", "h100") and qlora.price_usd_hour < advice.recommendation.card.price_usd_hour


def test_no_alternatives_when_a_cheap_card_holds_the_job():
    assert advise(AdviceRequest(model="llama-3.1-8b", method="qlora", seq_len=2048)).alternatives == []


def test_hourly_cap_is_read_without_vat_unless_said():
    plain = advise(AdviceRequest(model="llama-3.1-8b", method="qlora", seq_len=2048, hourly_cap_usd=0.8))
    assert plain.cap.cap_usd_excl_vat == 0.8 and {c.card_id for c in plain.cap.under_cap} == {"a40", "l4"}
    assert plain.recommendation.card.card_id == "a40"  # the faster of the two
    with_vat = advise(AdviceRequest(model="llama-3.1-8b", method="qlora", seq_len=2048, hourly_cap_usd=0.8,
                                    hourly_cap_includes_vat=True))
    assert with_vat.cap.cap_usd_excl_vat == pytest.approx(0.8 / 1.2) and not with_vat.cap.under_cap
    assert with_vat.cap.fixes == [] or all(f.price_usd_hour <= 0.8 / 1.2 for f in with_vat.cap.fixes)


def test_hourly_cap_too_low_for_70b_names_what_fits_under_it():
    advice = advise(AdviceRequest(model="llama-3.1-70b", method="lora", seq_len=2048, hourly_cap_usd=1))
    kinds = {f.kind for f in advice.cap.fixes}
    assert "qlora" not in kinds or all(f.price_usd_hour <= 1 for f in advice.cap.fixes)
    assert "smaller_model" in kinds
    assert advice.recommendation is not None  # the rest of the answer still names the card that holds it


@pytest.mark.parametrize("values,field", [({"hourly_cap_usd": 0}, "hourly_cap_usd"),
                                          ({"hourly_cap_usd": float("inf")}, "hourly_cap_usd"),
                                          ({"budget_period": "week"}, "budget_period")])
def test_bad_cap_and_period(values, field):
    with pytest.raises(InputError) as info:
        advise(AdviceRequest(model="llama-3.1-8b", method="qlora", seq_len=2048, **values))
    assert info.value.field == field


def test_custom_arch_is_passed_through():
    arch = KB.model("llama-3.1-8b").arch.dict()
    arch["name"] = "My 8B"
    advice = advise(AdviceRequest(method="qlora", seq_len=2048, custom_arch=arch))
    same = advise(AdviceRequest(model="llama-3.1-8b", method="qlora", seq_len=2048))
    assert advice.estimate.per_gpu_gib == pytest.approx(same.estimate.per_gpu_gib)
