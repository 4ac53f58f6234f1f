"""Replays the published throughput measurements (knowledge/calibration/throughput_cases.yaml) through the speed
model of :mod:`bot.advisor.throughput`; used by tests/test_throughput_calibration.py and bench/fit_throughput.py."""
from __future__ import annotations

import statistics
from pathlib import Path
from typing import Dict, List, Optional

from bot.advisor.plans import default_plan
from bot.advisor.schema import STACK_IDS, ModelArch, TrainingPlan
from bot.advisor.throughput import SpeedModel, flops_per_token, load_speed_model, per_gpu_tokens_per_second

CASES_PATH = Path(__file__).resolve().parents[2] / "knowledge" / "calibration" / "throughput_cases.yaml"
REQUIRED = ("id", "source", "quote", "model", "method", "stack", "card", "gpus", "layout", "seq_len", "micro_batch",
            "packing", "gradient_checkpointing", "tokens_per_second", "per", "split")


def load_cases(path: Path = CASES_PATH) -> List[dict]:
    """The cases with their plans built; a case missing a field or with a bad value raises ValueError."""
    from bot.advisor.knowledge import load_knowledge
    from bot.knowledge import read_yaml, validate
    from bot.knowledge.schemas import ThroughputCasesFile

    data = read_yaml(path)
    validate(ThroughputCasesFile, data, path)  # the file's shape; each case's fields are checked below
    kb = load_knowledge()
    extra = {name: ModelArch(**arch) for name, arch in (data.get("mpt") or {}).items()}
    cards = {card.id: card for card in kb.gpus}
    cases = []
    for case in data["cases"]:
        missing = [key for key in REQUIRED if key not in case]
        if missing or not str(case["quote"]).strip() or case["split"] not in ("fit", "holdout"):
            raise ValueError(f"{case.get('id')}: missing or bad {missing or 'quote/split'}")
        if case["card"] not in cards or case["per"] not in ("gpu", "total"):
            raise ValueError(f"{case['id']}: unknown card {case['card']!r} or per {case['per']!r}")
        arch = extra.get(case["model"]) or kb.model(case["model"]).arch
        cases.append({**case, "plan": _plan(case, arch), "card_obj": cards[case["card"]]})
    return cases


def _plan(case: dict, arch: ModelArch) -> TrainingPlan:
    stack = case["stack"] if case["stack"] in STACK_IDS else None
    plan = default_plan(arch, case["method"], int(case["seq_len"]), micro_batch=int(case["micro_batch"]), stack=stack)
    data = plan.dict()
    data.update(gradient_checkpointing=bool(case["gradient_checkpointing"]), gpus=int(case["gpus"]),
                sharding=case["layout"] if int(case["gpus"]) > 1 else "none")
    return TrainingPlan(**data)


def measured_per_gpu(case: dict) -> float:
    return case["tokens_per_second"] / (case["gpus"] if case["per"] == "total" else 1)


def scaling(case: dict, model: SpeedModel) -> float:
    if case["gpus"] <= 1:
        return 1.0
    sharded = case["layout"] in ("fsdp", "zero3")
    link = "nvlink" if case["card_obj"].nvlink else "pcie"
    return model.scaling[f"{'sharded' if sharded else 'ddp'}_{link}"]


def predicted_per_gpu(case: dict, model: Optional[SpeedModel] = None) -> float:
    model = model or load_speed_model()
    return per_gpu_tokens_per_second(case["plan"], case["card_obj"], model, stack=case["stack"]) * scaling(case, model)


def evaluate(cases: List[dict], model: Optional[SpeedModel] = None) -> List[Dict]:
    rows = []
    for case in cases:
        predicted, measured = predicted_per_gpu(case, model), measured_per_gpu(case)
        rows.append({"id": case["id"], "split": case["split"], "card": case["card"], "stack": case["stack"],
                     "gpus": case["gpus"], "moe": case["plan"].model.moe is not None, "method": case["method"],
                     "perf_class": case["card_obj"].perf_class, "predicted": predicted, "measured": measured,
                     "ratio": predicted / measured, "error_pct": 100 * (predicted / measured - 1),
                     "gflop_per_token": flops_per_token(case["plan"]) / 1e9})
    return rows


def summary(rows: List[Dict]) -> Dict[str, float]:
    if not rows:
        return {"n": 0, "median_abs_error_pct": float("nan"), "within_1_5x": float("nan"), "worst_factor": float("nan")}
    factors = [max(r["ratio"], 1 / r["ratio"]) for r in rows]
    return {"n": len(rows), "median_abs_error_pct": statistics.median(abs(r["error_pct"]) for r in rows),
            "within_1_5x": sum(f <= 1.5 for f in factors) / len(rows), "worst_factor": max(factors)}
