"""Card ranking, cheapest fitting card, multi-GPU plans and the budget verdict."""
from __future__ import annotations

import pytest

from bot.advisor.estimator import estimate_memory
from bot.advisor.knowledge import load_knowledge
from bot.advisor.plans import default_plan, sharded_plan
from bot.advisor.recommend import (
    TIGHT_HEADROOM,
    budget_verdict,
    cheapest_fitting,
    classify,
    multi_gpu_plan,
    rank_cards,
)
from bot.advisor.schema import COMPONENTS, MemoryEstimate

KB = load_knowledge()


def fake_estimate(gib: float) -> MemoryEstimate:
    components = {name: 0.0 for name in COMPONENTS}
    components["weights"] = gib
    return MemoryEstimate(per_gpu_gib=gib, components_gib=components, low_gib=gib * 0.9, high_gib=gib * 1.1)


@pytest.mark.parametrize("need,usable,status", [
    (30.0, 45.0, "fits"), (40.5, 45.0, "fits"), (40.6, 45.0, "tight"), (45.0, 45.0, "tight"), (45.01, 45.0, "no_fit"),
])
def test_classify(need, usable, status):
    assert TIGHT_HEADROOM == 0.10
    assert classify(need, usable) == status


def test_cheapest_fitting_first_then_the_rest_by_memory():
    ranked = rank_cards(KB.gpus, fake_estimate(30.0))
    assert [c.card_id for c in ranked[:2]] == ["a40", "l40s"]  # the 48 GB cards, $0.74 then $1.36
    fitting = [c for c in ranked if c.fitting]
    assert [c.price_usd_hour for c in fitting] == sorted(c.price_usd_hour for c in fitting)
    rest = ranked[len(fitting):]
    assert {c.card_id for c in rest} == {"l4", "rtx4090"}
    assert all(c.status == "no_fit" for c in rest)
    assert rest[0].usable_gib >= rest[1].usable_gib


def test_same_price_goes_to_the_faster_card():
    ranked = rank_cards(KB.gpus, fake_estimate(10.0), plan=default_plan(KB.model("llama-3.2-1b").arch, "lora", 512))
    assert [c.card_id for c in ranked[:2]] == ["a40", "l4"]  # both $0.74; A40 has 149.7 vs 121 TFLOPS


def test_tight_cards_are_marked():
    ranked = {c.card_id: c for c in rank_cards(KB.gpus, fake_estimate(75.0))}
    assert ranked["a100"].status == "tight" and ranked["h100"].status == "tight"
    assert ranked["rtx-pro-6000"].status == "fits"
    assert ranked["a100"].headroom_gib == pytest.approx(5.0)


def test_prices_with_and_without_vat():
    ranked = rank_cards(KB.gpus, fake_estimate(10.0), vat_rate=0.2)
    for card in ranked:
        assert card.price_usd_hour_with_vat == pytest.approx(card.price_usd_hour * 1.2)


def test_speed_time_and_cost_only_with_a_plan_and_volume():
    p = default_plan(KB.model("llama-3.1-8b").arch, "qlora", 2048)
    est = estimate_memory(p)
    without_plan = rank_cards(KB.gpus, est)
    assert all(c.tokens_per_second is None for c in without_plan)
    with_plan = rank_cards(KB.gpus, est, plan=p, vat_rate=0.2)
    assert all(c.tokens_per_second > 0 and c.cost_per_million_tokens_usd > 0 and c.hours is None for c in with_plan)
    with_volume = rank_cards(KB.gpus, est, plan=p, vat_rate=0.2, volume_tokens=1e7, budget_usd=3.0)
    for card in with_volume:
        assert card.cost_usd_with_vat == pytest.approx(card.cost_usd * 1.2)
        assert card.within_budget == (card.cost_usd_with_vat <= 3.0)


@pytest.mark.parametrize("need,expected", [(5, "a40"), (20, "a40"), (30, "a40"), (60, "a100"), (90, "rtx-pro-6000"),
                                           (100, "h200"), (170, "b200"), (500, None)])
def test_cheapest_fitting(need, expected):
    card = cheapest_fitting(KB.gpus, need)
    assert (card.id if card else None) == expected


def test_multi_gpu_plan_for_full_fine_tuning_of_70b():
    p = default_plan(KB.model("llama-3.1-70b").arch, "full", 2048)
    assert cheapest_fitting(KB.gpus, estimate_memory(p).per_gpu_gib) is None
    multi = multi_gpu_plan(p, KB.gpus, estimate_memory, sharded_plan, vat_rate=0.2, volume_tokens=1e7)
    if multi is None:
        # Nothing in one 8-GPU server holds it: then even 8 of the largest card must be too small.
        per_gpu = estimate_memory(sharded_plan(p, 8, "zero3")).per_gpu_gib
        assert per_gpu > max(card.usable_gib for card in KB.gpus)
        return
    card = KB.gpu(multi.card_id)
    per_gpu = estimate_memory(sharded_plan(p, multi.count, "zero3")).per_gpu_gib
    assert multi.per_gpu_gib == per_gpu <= card.usable_gib
    assert multi.quote_needed and multi.sharding == "zero3" and multi.count in (2, 4, 8)
    assert multi.price_usd_hour_total == pytest.approx(multi.count * card.price_usd_hour)
    assert multi.cost_usd_with_vat == pytest.approx(multi.cost_usd * 1.2)


def test_multi_gpu_plan_picks_lowest_cost_per_token_and_smallest_count():
    p = default_plan(KB.model("qwen2.5-72b").arch, "lora", 4096)
    multi = multi_gpu_plan(p, KB.gpus, estimate_memory, sharded_plan, vat_rate=0.2)
    assert multi is not None
    options = []
    for card in KB.gpus:
        for count in (2, 4, 8):
            est = estimate_memory(sharded_plan(p, count, "zero3"))
            if classify(est.per_gpu_gib, card.usable_gib) != "no_fit":
                options.append((count, card.id))
                break
    assert (multi.count, multi.card_id) in options


def test_multi_gpu_plan_none_when_nothing_fits():
    p = default_plan(KB.model("llama-3.1-8b").arch, "lora", 2048)
    assert multi_gpu_plan(p, KB.gpus, lambda plan: fake_estimate(1e6), sharded_plan) is None


def _fits(budget=None, volume=1e7):
    p = default_plan(KB.model("llama-3.1-8b").arch, "qlora", 2048)
    return rank_cards(KB.gpus, estimate_memory(p), plan=p, vat_rate=0.2, volume_tokens=volume, budget_usd=budget)


def test_budget_verdict_fits_lists_cards_within_cheapest_first():
    cards = _fits(budget=3.0)
    verdict = budget_verdict(3.0, False, cards)
    assert verdict.verdict == "fits"
    costs = {c.card_id: c.cost_usd_with_vat for c in cards}
    assert verdict.cards_within == sorted((c for c in costs if costs[c] <= 3.0), key=costs.get)
    assert verdict.cheapest_card == min(costs, key=costs.get)


def test_budget_verdict_over_and_tokens_bought():
    cards = _fits(budget=0.5)
    verdict = budget_verdict(0.5, False, cards)
    assert verdict.verdict == "over" and verdict.cards_within == []
    assert 0 < verdict.tokens_by_card[verdict.cheapest_card] < 1e7


def test_budget_verdict_without_volume_and_unlimited():
    cards = _fits(budget=10.0, volume=None)
    verdict = budget_verdict(10.0, False, cards)
    assert verdict.verdict == "volume_unknown"
    assert set(verdict.tokens_by_card) == {c.card_id for c in cards if c.fitting}
    assert budget_verdict(None, True, cards).verdict == "unlimited"
    assert budget_verdict(None, False, cards) is None


# ---------------------------------------------------------------------------------------------- issue 14 rules
from bot.advisor.recommend import budget_plan, dominates, recommend, shortlist  # noqa: E402


@pytest.mark.parametrize("need,high,usable,status", [
    (23.6, 29.8, 24.0, "tight"),    # the tr review's 4096-token case: point fits, upper bound does not
    (11.8, 14.6, 24.0, "fits"),
    (22.0, 26.1, 22.5, "tight"),
    (24.5, 29.8, 24.0, "no_fit"),
    (132.1, 180.4, 140.4, "tight"),  # 8B full fine-tuning on H200
])
def test_classify_uses_the_upper_bound(need, high, usable, status):
    assert classify(need, usable, high) == status


def _ranked(model="llama-3.1-8b", method="qlora", seq_len=2048, **kwargs):
    p = default_plan(KB.model(model).arch, method, seq_len)
    return rank_cards(KB.gpus, estimate_memory(p), plan=p, vat_rate=0.2, **kwargs)


def test_shortlist_drops_cards_another_card_beats():
    cards = _ranked()
    by_id = {c.card_id: c for c in cards}
    # L4: same price as A40, slower, less memory; RTX 4090: dearer per hour and per token than A40
    assert dominates(by_id["a40"], by_id["l4"]) and dominates(by_id["a40"], by_id["rtx4090"])
    kept = [c.card_id for c in shortlist(cards)]
    assert kept[0] == "a40" and "l4" not in kept and "rtx4090" not in kept
    for card in cards:
        if card.fitting and card.card_id not in kept:
            assert any(dominates(other, card) for other in cards if other.card_id in kept)


def test_a_safe_card_is_never_dominated_by_a_tight_one():
    cards = _ranked("qwen2.5-32b", "lora")
    kept = {c.card_id for c in shortlist(cards)}
    assert "rtx-pro-6000" in kept  # fits the top of the range; A100 is cheaper but only tight


def test_recommendation_reasons():
    cards = _ranked()
    assert recommend(cards).reason == "cheapest_safe" and recommend(cards).card.card_id == "a40"
    faster = recommend(cards).faster  # named only when it is also cheaper per token
    assert faster is None or faster.cost_per_million_tokens_usd < recommend(cards).card.cost_per_million_tokens_usd
    unlimited = recommend(cards, unlimited=True)
    assert unlimited.reason == "lowest_per_token"
    assert unlimited.card.cost_per_million_tokens_usd == min(c.cost_per_million_tokens_usd for c in cards
                                                             if c.status == "fits")
    assert unlimited.faster.card_id == "b200"
    with_volume = _ranked(volume_tokens=1e8)
    total = recommend(with_volume, volume_known=True)
    assert total.reason == "lowest_total_cost"
    cheapest = min(c.cost_usd_with_vat for c in with_volume if c.status == "fits")
    assert total.card.cost_usd_with_vat == pytest.approx(cheapest, abs=0.01)
    capped = recommend(cards, cap_usd_excl_vat=1.2)
    under = [c for c in cards if c.fitting and c.price_usd_hour <= 1.2]
    assert capped.reason == "fastest_under_cap"
    assert capped.card.tokens_per_second == max(c.tokens_per_second for c in under)
    assert recommend(cards, cap_usd_excl_vat=0.5) is None


def test_tight_cards_are_recommended_only_when_nothing_is_safe():
    cards = _ranked(method="full")
    assert not any(c.status == "fits" for c in cards)
    assert recommend(cards).reason == "cheapest_tight" and recommend(cards).card.card_id == "h200"


def test_budget_plan_hours_tokens_tiny_and_missing():
    cards = _ranked()
    a40 = next(c for c in cards if c.card_id == "a40")
    plan = budget_plan(50, a40)
    assert plan.hours == pytest.approx(50 / (0.74 * 1.2)) and not plan.tiny
    assert plan.tokens == pytest.approx(plan.hours * 3600 * a40.tokens_per_second)
    assert budget_plan(0.5, a40).tiny
    with_volume = next(c for c in _ranked(volume_tokens=1e9) if c.card_id == "a40")
    over = budget_plan(50, with_volume, period="month")
    assert over.period == "month" and over.missing_usd == pytest.approx(with_volume.cost_usd_with_vat - 50)
    assert over.volume_share == pytest.approx(50 / with_volume.cost_usd_with_vat)
    small = next(c for c in _ranked(volume_tokens=1e5) if c.card_id == "a40")
    assert not budget_plan(0.5, small).tiny  # a short job the budget pays in full is not a tiny budget
