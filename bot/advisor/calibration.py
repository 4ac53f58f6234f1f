"""Replay published VRAM measurements through the estimator.

A case file is YAML with a list under ``cases:`` (schema in knowledge/calibration/vram_cases.yaml; the 2025-2026
families are in knowledge/calibration/vram_cases_2025.yaml).
``measured.kind`` says what the source measured, and each kind is compared with the matching part
of the estimate (see docs/estimate.md):

* ``allocated`` (torch.cuda.max_memory_allocated) and ``active`` (active_bytes.all.peak, the same
  quantity without cached-but-free blocks): compared with the estimate's allocated figure, i.e.
  ``per_gpu_gib`` minus the overhead component (no allocator reserve, no CUDA context).
* ``reserved`` (max_memory_reserved or a device-level reading of the allocator): allocated + the
  allocator reserve, without the CUDA context.
* ``unknown``: treated like ``reserved``: most unnamed sources print torch's reserved peak, and it
  lies between the allocated figure and nvidia-smi's reading.
* ``boundary`` (largest setting that fitted a card; ``per_gpu_gib`` is the card size): the full
  ``per_gpu_gib`` (with CUDA context) is compared with the card. The true peak is only known to be at
  or below the card, so only an estimate above the card counts as error.
* ``guidance`` (a vendor's or user's stated figure, "fits in 14 GB"): compared like ``reserved`` but kept out
  of the measured error budget (:func:`summary` skips it unless asked); it has its own, looser band.

Settings a published run used that the case schema cannot express (torch.compile, chunked
cross-entropy, optimizer step in backward, activation offloading, FSDP mixed wrapping) come from
``knowledge/calibration/case_settings.yaml`` (each entry quotes the case's note) and are applied as
TrainingPlan extension fields by ``evaluate_cases(cases, case_settings=...)``.
"""
from __future__ import annotations

import statistics
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional

from bot.advisor.estimator import allocated_gib, estimate_memory, reserved_gib
from bot.advisor.plans import plan_from_mapping
from bot.advisor.schema import MemoryEstimate, ModelArch
from bot.knowledge import parse_file, read_yaml, validate
from bot.knowledge.schemas import CaseSettingsFile, VramCasesFile

MEASURED_KINDS = ("allocated", "active", "reserved", "unknown", "boundary", "guidance")

CALIBRATION_DIR = Path(__file__).resolve().parents[2] / "knowledge" / "calibration"
CASE_SETTINGS_PATH = CALIBRATION_DIR / "case_settings.yaml"
# The published cases, in the repository (sources inside each file).
CASE_FILES = (CALIBRATION_DIR / "vram_cases.yaml", CALIBRATION_DIR / "vram_cases_2025.yaml")

# Family of a case from its model name when the case does not say (first match wins).
_FAMILY_WORDS = (("codellama", "codellama"), ("mixtral", "mixtral"), ("gpt-oss", "gpt-oss"), ("llama", "llama"),
                 ("tinyllama", "llama"), ("mistral", "mistral"), ("qwen", "qwen"), ("gemma", "gemma"),
                 ("phi", "phi"), ("yi-", "yi"), ("deepseek", "deepseek"), ("pythia", "pythia"), ("opt-", "opt"))


def load_cases(path) -> List[dict]:
    """The ``cases`` list of one calibration YAML file (each case needs ``id`` and ``plan``)."""
    data = read_yaml(path)
    data = {"cases": data} if isinstance(data, list) else data  # a bare list of cases is a case file too
    validate(VramCasesFile, data, path)  # each case needs an id and a plan; the error names file and case
    return data["cases"]


def _no_presets(name: str) -> ModelArch:
    raise ValueError(f"model presets are not available here: {name!r}")


def comparable_gib(estimate: MemoryEstimate, kind: str) -> float:
    """The part of the estimate that a measurement of this kind reports."""
    if kind in ("allocated", "active"):
        return allocated_gib(estimate)
    if kind in ("reserved", "unknown", "guidance"):
        return reserved_gib(estimate)
    if kind == "boundary":
        return estimate.per_gpu_gib
    raise ValueError(f"measured.kind: unknown kind {kind!r} (expected one of {', '.join(MEASURED_KINDS)})")


def error_pct(predicted: float, measured: float, kind: str) -> float:
    if kind == "boundary":
        return 100.0 * max(predicted - measured, 0.0) / measured
    return 100.0 * (predicted - measured) / measured


def load_case_settings(path) -> Dict[str, dict]:
    """Per-case settings the case schema cannot express (knowledge/calibration/case_settings.yaml):
    ``{case id: {TrainingPlan extension field: value}}``."""
    return parse_file(CaseSettingsFile, path).settings


def evaluate_cases(cases: Iterable[dict],
                   resolve_preset: Optional[Callable[[str], ModelArch]] = None,
                   case_settings: Optional[Dict[str, dict]] = None) -> List[dict]:
    """One row per case; ``case_settings`` adds documented out-of-schema settings by case id."""
    rows = []
    for case in cases:
        plan_data = dict(case["plan"])
        plan_data.update((case_settings or {}).get(case["id"], {}))
        if case.get("model_config"):
            # bench/measure_vram.py records the config.json of the shape it ran; read it like a user's config
            from bot.advisor.hf_config import read_hf_config

            plan_data["model"] = read_hf_config(case["model_config"])
        plan = plan_from_mapping(plan_data, resolve_preset or _no_presets)
        est = estimate_memory(plan)
        row = {
            "id": case["id"],
            "family": case.get("family") or family_of(plan.model.name),
            "per_gpu_gib": est.per_gpu_gib,
            "components_gib": dict(est.components_gib),
            "low_gib": est.low_gib,
            "high_gib": est.high_gib,
        }
        measured = case.get("measured") or {}
        if measured.get("per_gpu_gib") is not None:
            kind = measured.get("kind", "unknown")
            predicted = comparable_gib(est, kind)
            row.update(kind=kind, predicted_gib=round(predicted, 3),
                       measured_gib=float(measured["per_gpu_gib"]),
                       error_pct=round(error_pct(predicted, float(measured["per_gpu_gib"]), kind), 2))
        rows.append(row)
    return rows


def _percentile(sorted_values: List[float], q: float) -> float:
    """Linear-interpolation percentile (numpy's default)."""
    if not sorted_values:
        return float("nan")
    pos = (len(sorted_values) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def family_of(model_name: str) -> str:
    name = model_name.lower()
    return next((family for word, family in _FAMILY_WORDS if word in name), "other")


def summary(rows: Iterable[dict], kinds: Optional[Iterable[str]] = None) -> dict:
    """Error statistics over the cases with a measurement; guidance-grade cases only when ``kinds`` names them."""
    wanted = set(kinds) if kinds is not None else set(MEASURED_KINDS) - {"guidance"}
    errors = sorted(abs(r["error_pct"]) for r in rows if r.get("error_pct") is not None and r.get("kind") in wanted)
    n = len(errors)
    return {
        "median_abs_error_pct": round(statistics.median(errors), 2) if n else float("nan"),
        "p90_abs_error_pct": round(_percentile(errors, 0.9), 2) if n else float("nan"),
        "share_above_30pct": round(sum(e > 30 for e in errors) / n, 4) if n else float("nan"),
        "n": n,
    }


def family_table(rows: List[dict]) -> str:
    """Per family: measured cases, median and worst |error| (guidance-grade cases counted apart)."""
    lines = [f"{'family':<12} {'measured':>8} {'median|err|%':>13} {'max|err|%':>10} {'guidance':>9} "
             f"{'median|err|%':>13}"]
    for family in sorted({r["family"] for r in rows}):
        mine = [r for r in rows if r["family"] == family]
        measured = summary(mine)
        guidance = summary(mine, kinds=("guidance",))
        worst = max((abs(r["error_pct"]) for r in mine if r.get("error_pct") is not None
                     and r.get("kind") != "guidance"), default=float("nan"))
        lines.append(f"{family:<12} {measured['n']:>8} {measured['median_abs_error_pct']:>13.1f} {worst:>10.1f} "
                     f"{guidance['n']:>9} {guidance['median_abs_error_pct']:>13.1f}")
    return "\n".join(lines)


def format_table(rows: Iterable[dict]) -> str:
    lines = [f"{'id':<52} {'kind':<9} {'pred':>7} {'meas':>7} {'err%':>7}"]
    for r in rows:
        if r.get("error_pct") is None:
            lines.append(f"{r['id']:<52} {'-':<9} {r['per_gpu_gib']:>7.2f} {'-':>7} {'-':>7}")
        else:
            lines.append(f"{r['id']:<52} {r['kind']:<9} {r['predicted_gib']:>7.2f} "
                         f"{r['measured_gib']:>7.2f} {r['error_pct']:>+7.1f}")
    return "\n".join(lines)
