"""Replays every published throughput measurement (knowledge/calibration/throughput_cases.yaml) through the speed
model and checks the error budget on the whole file and on the held-out part, which never enters the fit
(bench/fit_throughput.py). The table per card class, single vs multi-GPU and MoE is bench/results/throughput.md."""
from __future__ import annotations

import pytest

from bot.advisor.throughput_calibration import evaluate, load_cases, summary

MAX_MEDIAN_ABS_ERROR_PCT = 20.0
MIN_SHARE_WITHIN_1_5X = 0.90
MAX_FACTOR = 2.0


@pytest.fixture(scope="module")
def rows():
    return evaluate(load_cases())


@pytest.mark.parametrize("part", ["whole", "holdout"])
def test_throughput_error_budget(rows, part):
    subset = rows if part == "whole" else [r for r in rows if r["split"] == "holdout"]
    stats = summary(subset)
    table = "\n".join(f"{r['id']:50s} {r['split']:7s} {r['predicted']:9.0f} {r['measured']:9.0f} "
                      f"{r['error_pct']:+6.1f} %" for r in subset)
    print(f"\n{table}\n{part}: {stats}")
    assert stats["n"] >= (30 if part == "whole" else 8)
    assert stats["median_abs_error_pct"] <= MAX_MEDIAN_ABS_ERROR_PCT, table
    assert stats["within_1_5x"] >= MIN_SHARE_WITHIN_1_5X, table
    assert stats["worst_factor"] < MAX_FACTOR, table


def test_every_case_has_a_source_and_a_quote_and_both_parts_cover_multi_gpu_and_moe():
    cases = load_cases()
    assert all(c["source"] and len(str(c["quote"])) >= 10 for c in cases)
    for split in ("fit", "holdout"):
        part = [c for c in cases if c["split"] == split]
        assert any(c["gpus"] > 1 for c in part) and any(c["gpus"] == 1 for c in part)
        assert any(c["plan"].model.moe is not None for c in part)


def test_a_case_without_a_quote_is_refused(tmp_path):
    import yaml

    from bot.advisor.throughput_calibration import CASES_PATH

    data = yaml.safe_load(CASES_PATH.read_text(encoding="utf-8"))
    data["cases"] = data["cases"][:1]
    data["cases"][0]["quote"] = " "
    bad = tmp_path / "cases.yaml"
    bad.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ValueError, match="quote"):
        load_cases(bad)
