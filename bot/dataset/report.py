"""A DatasetReport as the customer reads it (fa/tr/en), its histogram as a PNG, and the estimate it leads to.

Every word comes from knowledge/dataset.yml; numbers from bot/present/render.py. Only aggregate figures, kinds and
line numbers appear - never the file's content.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from bot.dataset.analysis import DatasetReport
from bot.dataset.texts import DatasetKnowledge, load_dataset_knowledge
from bot.present.render import number

DEFAULT_METHOD = "lora"  # the estimate form's own default when a customer names no method
DEFAULT_EPOCHS = 1


def _lines(lines: List[int], total: int, lang: str, kb: DatasetKnowledge) -> str:
    shown = lines[: kb.analysis["problem_lines_shown"]]
    text = kb.text("list_separator", lang).join(number(line, lang, 0) for line in shown)
    if total > len(shown):
        text += " " + kb.text("summary_more_lines", lang, count=number(total - len(shown), lang, 0))
    return text


def _counted(items: Dict[str, int], prefix: str, lang: str, kb: DatasetKnowledge) -> str:
    parts = []
    for key, count in items.items():
        name = kb.text(f"{prefix}_{key}", lang) if f"{prefix}_{key}" in kb.texts else key
        parts.append(kb.text("count_of", lang, name=name, count=number(count, lang, 0)))
    return kb.text("list_separator", lang).join(parts)


def _problem_lines(report: DatasetReport, lang: str, kb: DatasetKnowledge) -> List[str]:
    if not report.problem_counts:
        return []
    out = [kb.text("summary_invalid", lang, count=number(sum(report.problem_counts.values()), lang, 0))]
    for code, lines in report.problems.items():
        name = kb.text(f"problem_{code}", lang) if f"problem_{code}" in kb.texts else code
        out.append("- " + kb.text("summary_problem", lang, problem=name,
                                  lines=_lines(lines, report.problem_counts[code], lang, kb)))
    return out


def _quality_lines(report: DatasetReport, lang: str, kb: DatasetKnowledge) -> List[str]:
    out = []
    if report.mixed_format_lines:
        out.append(kb.text("summary_mixed", lang, formats=_counted(report.formats, "format", lang, kb),
                           lines=_lines(report.mixed_format_lines, len(report.mixed_format_lines), lang, kb)))
    if report.duplicates["exact"] or report.duplicates["near"]:
        out.append(kb.text("summary_duplicates", lang, exact=number(report.duplicates["exact"], lang, 0),
                           near=number(report.duplicates["near"], lang, 0)))
    if report.short_examples["count"]:
        out.append(kb.text("summary_short", lang, count=number(report.short_examples["count"], lang, 0),
                           words=number(kb.analysis["short_words"], lang, 0)))
    if report.languages:
        out.append(kb.text("summary_languages", lang, languages=_counted(report.languages, "lang", lang, kb)))
    if report.pii:
        out.append(kb.text("summary_pii", lang, found=_counted(report.pii, "pii", lang, kb)))
        out.append(kb.text("summary_kvkk", lang))
        masked = (report.extra or {}).get("masked_copy")
        if isinstance(masked, dict) and f"summary_masked_{masked.get('channel')}" in kb.texts:
            out.append(kb.text(f"summary_masked_{masked['channel']}", lang, file=masked.get("file", ""),
                               minutes=number(masked.get("minutes", 0), lang, 0)))
    else:
        out.append(kb.text("summary_no_pii", lang))
    return out


def render_summary(report: DatasetReport, lang: str, model_display: Optional[str] = None,
                   kb: Optional[DatasetKnowledge] = None) -> str:
    """The data check as chat text, without the estimate (render_with_estimate adds it)."""
    kb = kb or load_dataset_knowledge()
    lines = [kb.text("summary_head", lang, kind=kb.text(f"kind_{report.file_kind}", lang),
                     examples=number(report.examples, lang, 0), tokenizer=report.tokenizer["name"])]
    if report.tokenizer["stand_in"]:
        lines.append(kb.text("summary_stand_in", lang, model=model_display or report.tokenizer["model"] or "-",
                             tokenizer=report.tokenizer["name"]))
    lines.extend(_problem_lines(report, lang, kb))
    if not report.examples:
        lines.append(kb.text("summary_no_examples", lang))
        return "\n".join(lines)
    tokens = report.tokens
    lines.append(kb.text("summary_tokens", lang, median=number(tokens["median"], lang, 0),
                         p95=number(tokens["p95"], lang, 0), max=number(tokens["max"], lang, 0)))
    lines.append(kb.text("summary_cover", lang, cover95=number(report.seq_len_cover["95"], lang, 0),
                         cover99=number(report.seq_len_cover["99"], lang, 0)))
    lines.append(kb.text("summary_chosen", lang, seq_len=number(report.seq_len, lang, 0),
                         truncated=number(report.truncated, lang, 0)))
    lines.append(kb.text("summary_volume", lang, tokens=number(report.tokens_per_epoch, lang, 0)))
    lines.extend(_quality_lines(report, lang, kb))
    split = report.validation
    lines.append(kb.text("summary_validation", lang, validation=number(split["validation"], lang, 0),
                         train=number(split["train"], lang, 0)) if split["validation"]
                 else kb.text("summary_validation_none", lang))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- the estimate


def estimate_values(report: DatasetReport, model: str, method: Optional[str] = None, epochs: Optional[float] = None,
                    budget_usd: Optional[float] = None) -> Dict[str, Any]:
    """The estimate form's values from the measured figures: seq_len and total_tokens (tokens per epoch)."""
    return {"model": model, "method": (method or DEFAULT_METHOD).lower(), "seq_len": report.seq_len,
            "total_tokens": float(report.tokens_per_epoch), "epochs": epochs or DEFAULT_EPOCHS,
            "budget_usd": budget_usd}


def estimate(report: DatasetReport, model: str, method: Optional[str] = None, epochs: Optional[float] = None,
             budget_usd: Optional[float] = None):
    """(advice, knowledge) for the measured job; InputError for a model the catalogue does not know."""
    from bot.advisor.advice import AdviceRequest, advise
    from bot.advisor.knowledge import load_knowledge

    advisor_kb = load_knowledge()
    values = estimate_values(report, model, method, epochs, budget_usd)
    return advise(AdviceRequest.from_values(**values), advisor_kb), advisor_kb


def advice_json(advice) -> dict:
    return json.loads(advice.json())


# ---------------------------------------------------------------------------------------------- the picture


def render_histogram(report: DatasetReport, lang: str, out: Union[str, Path],
                     kb: Optional[DatasetKnowledge] = None) -> Path:
    """A small PNG bar chart of the example lengths with the chosen sequence length marked."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    from bot.present.chart import FONT, shape

    kb = kb or load_dataset_knowledge()
    edges, counts = report.histogram["edges"], report.histogram["counts"]
    figure, axes = plt.subplots(figsize=(6, 3), dpi=100)
    try:
        if counts:
            widths = [b - a for a, b in zip(edges, edges[1:])]
            axes.bar(edges[:-1], counts, width=widths, align="edge", color="#0072B2", edgecolor="white")
            if report.seq_len <= edges[-1] * 1.5:
                axes.axvline(report.seq_len, color="#D55E00", linestyle="--")
            axes.axvline(report.seq_len_cover["95"], color="#009E73", linestyle=":")
        axes.set_title(shape(kb.text("histogram_title", lang)), fontname=FONT)
        axes.set_ylabel(shape(kb.text("histogram_y", lang)), fontname=FONT)
        figure.tight_layout()
        path = Path(out)
        figure.savefig(path, format="png")
    finally:
        plt.close(figure)
    return path
