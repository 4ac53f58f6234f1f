"""Fits the speed parameters of knowledge/calibration/throughput_model.yml to the "fit" part of the published
throughput cases (knowledge/calibration/throughput_cases.yaml), writes them back into the file, and writes
bench/results/throughput.md: every case with its error, and per card class, single vs multi-GPU and MoE, the whole
file and the held-out part apart.

    PYTHONPATH=$PWD .venv/bin/python bench/fit_throughput.py [--check]

The fit minimises the soft-L1 loss of log(predicted / measured) (scipy.optimize.least_squares): one bad row cannot
drag the others. ``--check`` only replays and writes the table (the test does the same replay).
"""
from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.advisor.throughput import MODEL_PATH, SpeedModel, load_speed_model  # noqa: E402
from bot.advisor.throughput_calibration import evaluate, load_cases, summary  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "throughput.md"
# Hardware-FLOPs utilisation is bounded by 0.8: the best figure in the cases' sources is 79.3 % HFU (llm-foundry
# MPT-13B on A100, seq 1024).
MAX_HFU = 0.8
# (section, key, low, high): the fitted parameters; every other figure in the file is documented there.
FITTED = [
    ("class_utilisation", "hopper", 0.1, MAX_HFU),
    ("class_utilisation", "ampere_datacenter", 0.1, MAX_HFU),
    ("class_utilisation", "ada", 0.1, MAX_HFU),
    ("class_utilisation", "blackwell_workstation", 0.05, MAX_HFU),
    ("stack_dense", "torchtune", 0.5, 2.5),
    ("stack_dense", "nemo_automodel", 0.5, 2.5),
    ("stack_dense", "llm_foundry", 0.5, 2.5),
    ("stack_moe", "hf", 0.02, 1.5),
    ("stack_moe", "nemo_automodel", 0.05, 2.0),
    ("stack_moe", "axolotl", 0.02, 2.0),
    ("step_overhead_s", None, 0.0, 1.0),
    ("scaling", "sharded_nvlink", 0.4, 1.0),
]
# Derived, not fitted (throughput_model.yml sources): figures that follow a fitted one, times a documented ratio.
# Unsloth MoE: "2x faster training when compared to Transformers v5 + torch._grouped_mm"
# (unsloth.ai/docs/new/faster-moe).
TIED = {("stack_moe", "unsloth"): ("stack_moe", "hf", 2.0), ("stack_moe", "torchtune"): ("stack_moe", "hf", 1.0),
        ("stack_moe", "llm_foundry"): ("stack_moe", "hf", 1.0),
        ("stack_moe", "llama_factory"): ("stack_moe", "hf", 1.0)}
SHARDED_PCIE_RATIO = 0.76
ESTIMATED_CLASS_RATIOS = {"ada_datacenter": ("ada", 0.67), "ampere_pcie": ("ada", 0.89), "ada_low_power": ("ada", 0.56),
                          "blackwell_datacenter": ("hopper", 0.81)}


def _get(data: dict, section: str, key):
    value = data[section] if key is None else data[section][key]
    return value["value"] if isinstance(value, dict) else value


def _set(data: dict, section: str, key, value: float) -> None:
    if key is None:
        data[section] = value
    elif isinstance(data[section][key], dict):
        data[section][key]["value"] = value
    else:
        data[section][key] = value


def _with(base: SpeedModel, vector) -> SpeedModel:
    data = base.dict()
    for (section, key, _, _), value in zip(FITTED, vector):
        _set(data, section, key, float(value))
    for (section, key), (src_section, src_key, ratio) in TIED.items():
        _set(data, section, key, _get(data, src_section, src_key) * ratio)
    _set(data, "scaling", "sharded_pcie", data["scaling"]["sharded_nvlink"] * SHARDED_PCIE_RATIO)
    for cls, (src, ratio) in ESTIMATED_CLASS_RATIOS.items():
        _set(data, "class_utilisation", cls, _get(data, "class_utilisation", src) * ratio)
    return SpeedModel(**data)


def fit(cases, base: SpeedModel) -> SpeedModel:
    from scipy.optimize import least_squares

    train = [c for c in cases if c["split"] == "fit"]
    start = [_get(base.dict(), s, k) for s, k, _, _ in FITTED]
    bounds = ([lo for _, _, lo, _ in FITTED], [hi for _, _, _, hi in FITTED])
    start = [min(max(x, lo + 1e-6), hi - 1e-6) for x, lo, hi in zip(start, *bounds)]

    def residuals(vector):
        return [math.log(r["ratio"]) for r in evaluate(train, _with(base, vector))]

    result = least_squares(residuals, start, bounds=bounds, loss="soft_l1", f_scale=0.15)
    return _with(base, result.x)


def write_model(model: SpeedModel, path: Path = MODEL_PATH) -> None:
    """Write the figures into the yml in place (its comments and sources stay)."""
    text = path.read_text(encoding="utf-8")
    data = model.dict()
    for cls, entry in data["class_utilisation"].items():
        text = re.sub(rf"(\n  {re.escape(cls)}: \{{value: )[0-9.]+", rf"\g<1>{entry['value']:.3f}", text)
    for section in ("stack_dense", "stack_moe", "scaling"):
        line = f"{section}: {{" + ", ".join(f"{k}: {round(v, 3)}" for k, v in data[section].items()) + "}"
        text = re.sub(rf"\n{section}: \{{[^\n]*\}}", "\n" + line, text)
    text = re.sub(r"\nstep_overhead_s: [0-9.e-]+", f"\nstep_overhead_s: {data['step_overhead_s']:.4f}", text)
    path.write_text(text, encoding="utf-8")


def _line(label: str, rows) -> str:
    stats = summary(rows)
    if not stats["n"]:
        return f"| {label} | 0 | - | - | - |"
    return (f"| {label} | {stats['n']} | {stats['median_abs_error_pct']:.1f} % | {stats['within_1_5x']:.0%} | "
            f"{stats['worst_factor']:.2f}x |")


def _cells(rows) -> str:
    stats = summary(rows)
    if not stats["n"]:
        return "0 | - | - | -"
    return (f"{stats['n']} | {stats['median_abs_error_pct']:.1f} % | {stats['within_1_5x']:.0%} | "
            f"{stats['worst_factor']:.2f}x")


def _groups(rows):
    """(label, rows) per card class, single vs multi-GPU, MoE vs dense."""
    groups = [("all", rows)]
    groups += [(f"card class {cls}", [r for r in rows if r["perf_class"] == cls])
               for cls in sorted({r["perf_class"] for r in rows})]
    groups += [("single GPU", [r for r in rows if r["gpus"] == 1]), ("multi-GPU", [r for r in rows if r["gpus"] > 1]),
               ("MoE", [r for r in rows if r["moe"]]), ("dense", [r for r in rows if not r["moe"]])]
    return groups


def side_by_side(rows) -> str:
    """The whole file and its held-out part in one table (the README's table)."""
    lines = ["| group | cases | median \\|error\\| | within 1.5x | worst | held-out cases | median \\|error\\| | "
             "within 1.5x | worst |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for label, subset in _groups(rows):
        held = [r for r in subset if r["split"] == "holdout"]
        lines.append(f"| {label} | {_cells(subset)} | {_cells(held)} |")
    return "\n".join(lines)


def report(rows) -> str:
    header = "| group | cases | median \\|error\\| | within 1.5x | worst (x) |\n|---|---:|---:|---:|---:|"
    parts = ["# Training throughput: the speed model against published runs", "",
             "Generated by `bench/fit_throughput.py` from `knowledge/calibration/throughput_cases.yaml` (published",
             "measurements, each with its source and quote) and `knowledge/calibration/throughput_model.yml`. The",
             "holdout rows never enter the fit. Error = predicted / measured - 1, tokens/s per GPU.", "",
             "## Whole file and held-out part side by side", "", side_by_side(rows), "",
             "Card classes without a row (L40S, A40, L4, B200) have no published measurement: their utilisation is",
             "derived (throughput_model.yml) and the answer says the speed is estimated.", ""]
    for title, subset in (("Whole file", rows), ("Held-out part", [r for r in rows if r["split"] == "holdout"]),
                          ("Fit part", [r for r in rows if r["split"] == "fit"])):
        parts += [f"## {title}", "", header] + [_line(label, group) for label, group in _groups(subset)] + [""]
    parts += ["## Every case", "", "| case | split | card | GPUs | stack | method | predicted | measured | error |",
              "|---|---|---|---:|---|---|---:|---:|---:|"]
    for r in rows:
        parts.append(f"| {r['id']} | {r['split']} | {r['card']} | {r['gpus']} | {r['stack']} | {r['method']}"
                     f"{' (MoE)' if r['moe'] else ''} | {r['predicted']:,.0f} | {r['measured']:,.0f} | "
                     f"{r['error_pct']:+.0f} % |")
    return "\n".join(parts) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="replay and write the table only, no fit")
    args = parser.parse_args(argv)
    cases = load_cases()
    model = load_speed_model()
    if not args.check:
        model = fit(cases, model)
        write_model(model)
        load_speed_model.cache_clear()
        model = load_speed_model()
    rows = evaluate(cases, model)
    text = report(rows)
    RESULTS.write_text(text, encoding="utf-8")
    print(text.split("## Every case")[0])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
