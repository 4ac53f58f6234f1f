"""The memory breakdown as a PNG bar chart against the usable memory of the candidate cards.

matplotlib (Agg backend) is imported only when a chart is drawn. Persian labels are shaped with arabic_reshaper and
put in visual order with python-bidi, then drawn with matplotlib's bundled DejaVu Sans, which carries the Arabic
glyphs, so no system font is needed.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import List, Optional, Tuple, Union

from bot.knowledge import Knowledge, load_knowledge
from bot.render import gb

# Cards drawn next to the estimate: the cheapest that fit, plus the largest ones that do not (to show the gap).
MAX_FITTING = 3
MAX_NOT_FITTING = 2
FONT = "DejaVu Sans"

# One colour per component (colour-blind safe Okabe-Ito palette) in the order of bot.schema.COMPONENTS.
COLOURS = {
    "weights": "#0072B2", "adapters": "#56B4E9", "gradients": "#009E73", "optimizer": "#E69F00",
    "activations": "#CC79A7", "logits": "#D55E00", "overhead": "#999999",
}
_RTL = re.compile(r"[\u0590-\u08ff\ufb50-\ufdff\ufe70-\ufeff]")
# python-bidi reorders but does not mirror paired brackets (Unicode BiDi rule L4); in a right-to-left label every
# bracket sits at an RTL level, so its glyph is swapped here.
_MIRROR = str.maketrans("()[]{}«»", ")(][}{»«")


def shape(text: str) -> str:
    """Text as matplotlib must draw it: Arabic-script runs joined and reordered for display."""
    if not _RTL.search(text):
        return text
    import arabic_reshaper
    try:
        from bidi import get_display
    except ImportError:  # python-bidi < 0.5
        from bidi.algorithm import get_display
    return get_display(arabic_reshaper.reshape(text), base_dir="R").translate(_MIRROR)


def candidate_cards(advice) -> List[Tuple[str, float, str]]:
    """(label, usable GiB, status) of the cards drawn against the estimate."""
    fitting = [card for card in advice.cards if card.fitting][:MAX_FITTING]
    short = sorted((card for card in advice.cards if not card.fitting), key=lambda c: -c.usable_gib)[:MAX_NOT_FITTING]
    return [(card.name, card.usable_gib, card.status) for card in fitting + short]


def render_chart(advice, lang: str, path: Union[str, Path], kb: Optional[Knowledge] = None) -> Path:
    """Draw the chart for ``advice`` in ``lang`` and write it to ``path`` (PNG). Returns the path."""
    kb = kb or load_knowledge()
    import warnings

    with warnings.catch_warnings():
        # matplotlib 3.5 (pinned by rasa's dependency set) calls pyparsing APIs that newer pyparsing deprecates
        warnings.simplefilter("ignore", DeprecationWarning)
        import matplotlib

        matplotlib.use("Agg", force=True)
        import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    estimate = advice.estimate
    per_gpu = estimate.per_gpu_gib
    multi = advice.multi_gpu
    cards = candidate_cards(advice)

    with matplotlib.rc_context({"font.family": FONT, "axes.unicode_minus": False}):
        fig, ax = plt.subplots(figsize=(8, 1.2 + 0.55 * (len(cards) + 1 + (multi is not None))), dpi=110)
        rows = []
        # The estimate as one stacked bar (per GPU of the single-card plan).
        left = 0.0
        y_estimate = len(cards) + (multi is not None)
        for name, value in estimate.components_gib.items():
            if value <= 0:
                continue
            ax.barh(y_estimate, value, left=left, color=COLOURS.get(name, "#777777"),
                    label=shape(kb.text(f"part_{name}", lang)))
            left += value
        ax.errorbar(per_gpu, y_estimate, xerr=[[per_gpu - estimate.low_gib], [estimate.high_gib - per_gpu]],
                    fmt="none", ecolor="black", capsize=4, label=shape(kb.text("chart_range", lang)))
        rows.append((y_estimate, f"{shape(kb.text('chart_need', lang))} ({gb(per_gpu, lang)} GB)"))
        if multi is not None:
            y_multi = len(cards)
            ax.barh(y_multi, multi.per_gpu_gib, color="#444444", alpha=0.6)
            rows.append((y_multi, f"{multi.count}x {multi.name}: {gb(multi.per_gpu_gib, lang)} GB / GPU"))
        for index, (label, usable, status) in enumerate(reversed(cards)):
            colour = {"fits": "#7fbf7f", "tight": "#f0c05a", "no_fit": "#e08080"}[status]
            ax.barh(index, usable, color=colour, edgecolor="#333333", linewidth=0.5)
            rows.append((index, f"{label} ({gb(usable, lang)} GB) - {shape(kb.text(f'status_{status}', lang))}"))
        ax.axvline(per_gpu, color="black", linestyle="--", linewidth=1)
        ticks, labels = zip(*sorted(rows))
        ax.set_yticks(list(ticks))
        ax.set_yticklabels(list(labels))
        method = kb.text(f"method_{advice.plan.method}", lang)
        ax.set_title(shape(kb.text("chart_title", lang, model=advice.preset.display, method=method,
                                   seq_len=advice.plan.seq_len)))
        ax.set_xlabel(shape(kb.text("chart_axis", lang)))
        ax.legend(loc="lower right", fontsize="small", framealpha=0.9)
        fig.tight_layout()
        fig.savefig(path, format="png")
        plt.close(fig)
    return path
