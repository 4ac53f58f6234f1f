"""Side-by-side comparisons for the current job (bot.advisor.compare) and their rendering in fa/tr."""
from __future__ import annotations

import pytest

from bot.advisor.advice import AdviceRequest, advise
from bot.advisor.compare import compare_options
from bot.advisor.knowledge import InputError, load_knowledge
from bot.present.render import RLM, gb, money, render_comparison

KB = load_knowledge()
JOB = dict(model="llama-3.1-8b", method="qlora", seq_len=2048)


def test_method_comparison_runs_the_same_job_with_each_method():
    comparison = compare_options(JOB, "method", ["lora", "qlora"])
    lora, qlora = comparison.options
    for option, method in ((lora, "lora"), (qlora, "qlora")):
        advice = advise(AdviceRequest(**{**JOB, "method": method}))
        assert option.per_gpu_gib == pytest.approx(advice.estimate.per_gpu_gib)
        assert option.card_id == advice.recommendation.card.card_id
    assert comparison.less_memory == "qlora"
    # the reviews' point: LoRA needs ~2x the memory of QLoRA but is faster per token on the same card
    assert 1.5 < lora.per_gpu_gib / qlora.per_gpu_gib < 3
    assert comparison.cheaper == "lora"


def test_model_comparison_by_size_and_gpu_comparison_with_volume():
    models = compare_options({"method": "lora", "seq_len": 2048}, "model", ["8b", "14b"])
    assert models.options[0].per_gpu_gib < models.options[1].per_gpu_gib
    gpus = compare_options({**JOB, "total_tokens": 50e6}, "gpu", ["h100", "a100"])
    h100, a100 = gpus.options
    assert h100.card_id == "h100" and a100.card_id == "a100" and h100.status == a100.status == "fits"
    assert gpus.cheaper == min((h100, a100), key=lambda o: o.cost_usd_with_vat).option
    assert h100.hours < a100.hours


def test_gpu_comparison_where_one_card_is_too_small():
    comparison = compare_options({"model": "qwen2.5-32b", "method": "lora", "seq_len": 2048}, "gpu", ["a40", "h200"])
    assert comparison.options[0].status == "no_fit" and comparison.cheaper == "h200"


def test_defaults_are_assumed_and_said():
    comparison = compare_options({"model": "llama-3.1-8b"}, "gpu", ["h100", "a100"])
    assert comparison.assumed == ["method", "seq_len"]
    text = render_comparison(comparison, "tr")
    assert KB.text("compare_assumed_method", "tr") in text and KB.text("compare_assumed_seq_len", "tr") in text


def test_a_method_comparison_needs_a_model():
    with pytest.raises(InputError) as info:
        compare_options({"seq_len": 2048}, "method", ["lora", "qlora"])
    assert info.value.key == "missing_model"


@pytest.mark.parametrize("lang", ("fa", "tr"))
def test_rendered_comparison_has_both_columns_and_a_conclusion(lang):
    comparison = compare_options(JOB, "method", ["lora", "qlora"])
    text = render_comparison(comparison, lang)
    lines = text.split("\n")
    bullets = [line for line in lines if line.lstrip(RLM).startswith("•")]
    assert len(bullets) == 2
    for option, line in zip(comparison.options, bullets):
        assert gb(option.per_gpu_gib, lang) in line and money(option.price_usd_hour, lang) in line
    assert KB.text("compare_cheaper_per_token", lang, name="LoRA") in text
    assert KB.text("compare_qlora_tradeoff", lang) in text
    assert "$" not in text


@pytest.mark.parametrize("kind,options", [("gpu", ["h100", "tpu-v5"]), ("method", ["lora", "dpo"]),
                                          ("model", ["8b", "6000b"]), ("model", ["8b", "xyzzy"]), ("size", ["a", "b"])])
def test_bad_options_are_input_errors_with_a_text(kind, options):
    from bot.present.render import render_error

    with pytest.raises(InputError) as info:
        compare_options(JOB, kind, options)
    for lang in ("fa", "tr"):
        assert render_error(info.value, lang)
