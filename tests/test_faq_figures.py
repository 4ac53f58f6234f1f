"""FAQ answers agree with the estimator and the price list (issue 14 #4): every figure an FAQ states is computed
(knowledge/faq_figures.yml), and every claim the texts make with those figures is checked here."""
from __future__ import annotations

import re

import pytest

from bot.advisor.advice import AdviceRequest, advise
from bot.advisor.estimator import estimate_memory
from bot.advisor.faq_figures import compute, load_figures
from bot.advisor.knowledge import load_knowledge
from bot.advisor.plans import default_plan
from bot.advisor.recommend import classify
from bot.present.render import faq_text, gb

KB = load_knowledge()
FIGURES = load_figures()
PLACEHOLDER = re.compile(r"\{(\w+)\}")


def value(name: str) -> float:
    return compute(FIGURES[name], KB)


def test_every_placeholder_is_a_figure_and_every_figure_is_used():
    used = set()
    for topic, entry in KB.faq.items():
        for lang in ("fa", "tr", "en"):
            text = getattr(entry, lang) or ""
            names = set(PLACEHOLDER.findall(text))
            assert names <= set(FIGURES), (topic, lang, names - set(FIGURES))
            used |= names
    assert used == set(FIGURES)


def test_no_memory_figure_is_typed_in_by_hand():
    """A number before "GB" in an FAQ is a card size from the catalogue, never a typed estimate."""
    card_sizes = {f"{card.vram_gb:g}" for card in KB.gpus}
    for topic, entry in KB.faq.items():
        for lang in ("fa", "tr", "en"):
            for number in re.findall(r"(\d+(?:[.,]\d+)?)\s*(?:GB|گیگابایتی|گیگ)", getattr(entry, lang) or ""):
                assert number in card_sizes, (topic, lang, number)


@pytest.mark.parametrize("topic", sorted(KB.faq))
@pytest.mark.parametrize("lang", ("fa", "tr", "en"))
def test_rendered_answers_have_every_figure_filled(topic, lang):
    text = faq_text(topic, lang, KB, public_url="https://advisor.example.com")
    assert text and "{" not in text and "}" not in text


def test_13b_on_24_gb_claims():
    rtx4090, a40 = KB.gpu("rtx4090"), KB.gpu("a40")
    # "QLoRA ... fits a 24 GB card such as the RTX 4090 with room to spare": even the top of the range fits
    assert classify(value("mem_13b_qlora"), rtx4090.usable_gib, value("mem_13b_qlora_high")) == "fits"
    # "16-bit LoRA ... does not fit 24 GB", "the weights alone are about N GB"
    assert value("mem_13b_lora") > rtx4090.usable_gib and value("weights_13b_lora") < value("mem_13b_lora")
    # "for LoRA a 48 GB card such as A40 or L40S suits"
    lora = estimate_memory(default_plan(KB.model("llama-2-13b").arch, "lora", 2048))
    assert classify(lora.per_gpu_gib, a40.usable_gib, lora.high_gib) == "fits"
    # "full fine-tuning needs several GPUs"
    assert not advise(AdviceRequest(model="llama-2-13b", method="full", seq_len=2048)).fitting_cards
    fa = faq_text("13b_24gb", "fa", KB)
    assert gb(value("mem_13b_qlora"), "fa") in fa and gb(value("mem_13b_lora"), "fa") in fa


def test_methods_ratio_claim_lora_is_two_to_three_times_qlora_from_7b_up():
    """"From 7B up LoRA needs roughly 2-3 times the memory of QLoRA" (reviews: never "a bit more")."""
    ratios = {}
    for size, preset_id in KB.representative_by_size.items():
        if size < 7:
            continue
        arch = KB.model(preset_id).arch
        lora = estimate_memory(default_plan(arch, "lora", 2048)).per_gpu_gib
        qlora = estimate_memory(default_plan(arch, "qlora", 2048)).per_gpu_gib
        ratios[preset_id] = lora / qlora
    assert all(1.5 <= ratio <= 3.0 for ratio in ratios.values()), ratios  # "roughly": 1.5 rounds to 2
    assert sum(ratios.values()) / len(ratios) >= 2.0
    for lang, phrase in (("fa", "2 تا 3 برابر"), ("tr", "2–3 katı"), ("en", "2-3x")):
        assert phrase in faq_text("methods", lang, KB)


def test_h100_vs_a100_claims():
    assert value("speedup_h100_a100") > 1 and value("saving_h100_a100") > 0  # "faster", "cheaper per token"
    assert value("price_a100") == KB.gpu("a100").price_usd_hour and value("price_h100") == KB.gpu("h100").price_usd_hour


def test_prices_and_cost_example_follow_the_price_list():
    prices = sorted(card.price_usd_hour for card in KB.gpus)
    assert value("price_l4") == prices[0] == KB.gpu("a40").price_usd_hour  # "from 0.74 (L4 and A40)"
    assert value("price_b200") == prices[-1]                                 # "to 9.99 (B200)"
    assert value("price_vat_h100") == round(KB.gpu("h100").price_usd_hour * (1 + KB.pricing.vat_rate), 2)
    assert value("cost_20h_a40") == pytest.approx(20 * KB.gpu("a40").price_usd_hour)
    assert value("cost_20h_a40_vat") == pytest.approx(value("cost_20h_a40") * 1.2, abs=0.01)


def test_vram_answer_full_fine_tuning_of_7b():
    states = value("states_7b_full")
    arch = KB.model("mistral-7b").arch
    assert states == pytest.approx(arch.params * 16 / 2**30, rel=0.02)  # 16 bytes per parameter (mixed precision)


def test_kvkk_answer_links_the_full_notice_in_the_customers_language():
    assert faq_text("kvkk", "tr", KB, public_url="https://advisor.example.com/").endswith(
        "https://advisor.example.com/kvkk/tr")
    assert "https://advisor.example.com/kvkk/fa" in faq_text("kvkk", "fa", KB, public_url="https://advisor.example.com")
