"""The memory breakdown as a PNG bar chart against the usable memory of the candidate cards.

matplotlib (Agg backend) is imported only when a chart is drawn. Persian labels are shaped with arabic_reshaper and
put in visual order with python-bidi, then drawn with matplotlib's bundled DejaVu Sans, which carries the Arabic
glyphs, so no system font is needed.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import List, Optional, Tuple, Union

from bot.advisor.knowledge import Knowledge, load_knowledge
from bot.present.render import gb

# Cards drawn next to the estimate: the cheapest that fit, plus the largest ones that do not (to show the gap).
MAX_FITTING = 3
MAX_NOT_FITTING = 2
FONT = "DejaVu Sans"

# One colour per component (colour-blind safe Okabe-Ito palette) in the order of bot.advisor.schema.COMPONENTS.
COLOURS = {
    "weights": "#0072B2", "adapters": "#56B4E9", "gradients": "#009E73", "optimizer": "#E69F00",
    "activations": "#CC79A7", "logits": "#D55E00", "overhead": "#999999",
}
_RTL = re.compile(r"[\u0590-\u08ff\ufb50-\ufdff\ufe70-\ufeff]")
# python-bidi (>= 0.5) reorders but does not mirror brackets (Unicode BiDi rule L4). Each "(...)" pair gets its own
# bracket type before reordering so it can be found afterwards; a pair that comes out closing-before-opening sat in
# a right-to-left run and is mirrored back into "(...)".
_PAIR_TYPES = [("(", ")"), ("[", "]"), ("{", "}"), ("\u27e8", "\u27e9"), ("\u27e6", "\u27e7"), ("\u27ea", "\u27eb")]


def _tag_pairs(text: str):
    """Give each balanced "(...)" its own bracket type; None when the text has other brackets or too many."""
    if any(ch in text for opening, closing in _PAIR_TYPES[1:] for ch in (opening, closing)):
        return None
    chars, stack, pairs = list(text), [], 0
    for index, ch in enumerate(chars):
        if ch == "(":
            stack.append(index)
        elif ch == ")" and stack:
            start = stack.pop()
            if pairs == len(_PAIR_TYPES):
                return None
            chars[start], chars[index] = _PAIR_TYPES[pairs]
            pairs += 1
    return "".join(chars), pairs


def shape(text: str) -> str:
    """Text as matplotlib must draw it: Arabic-script runs joined and put in visual (left-to-right) order."""
    if not _RTL.search(text):
        return text
    import arabic_reshaper
    try:
        from bidi import get_display
    except ImportError:  # python-bidi < 0.5
        from bidi.algorithm import get_display
    tagged = _tag_pairs(text)
    if tagged is None:
        return get_display(arabic_reshaper.reshape(text), base_dir="R")
    tagged_text, pairs = tagged
    display = list(get_display(arabic_reshaper.reshape(tagged_text), base_dir="R"))
    for opening, closing in _PAIR_TYPES[:pairs]:
        first, second = sorted((display.index(opening), display.index(closing)))
        display[first], display[second] = "(", ")"
    return "".join(display)


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
        bars = len(cards) + 1 + (multi is not None)
        fig, ax = plt.subplots(figsize=(8, 1.6 + 0.55 * bars), dpi=110)
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
        rows.append((y_estimate, shape(kb.text("chart_need", lang, value=gb(per_gpu, lang)))))
        if multi is not None:
            y_multi = len(cards)
            ax.barh(y_multi, multi.per_gpu_gib, color="#444444", alpha=0.6)
            rows.append((y_multi, shape(kb.text("chart_multi", lang, count=multi.count, name=multi.name,
                                                value=gb(multi.per_gpu_gib, lang)))))
        for index, (label, usable, status) in enumerate(reversed(cards)):
            colour = {"fits": "#7fbf7f", "tight": "#f0c05a", "no_fit": "#e08080"}[status]
            ax.barh(index, usable, color=colour, edgecolor="#333333", linewidth=0.5)
            rows.append((index, shape(kb.text("chart_card", lang, name=label, usable=gb(usable, lang),
                                              status=kb.text(f"status_{status}", lang)))))
        ax.axvline(per_gpu, color="black", linestyle="--", linewidth=1)
        ticks, labels = zip(*sorted(rows))
        ax.set_yticks(list(ticks))
        ax.set_yticklabels(list(labels))
        method = kb.text(f"method_{advice.plan.method}", lang)
        ax.set_title(shape(kb.text("chart_title", lang, model=advice.preset.display, method=method,
                                   seq_len=advice.plan.seq_len)))
        ax.set_xlabel(shape(kb.text("chart_axis", lang)))
        # Below the axes, so the legend never hides a bar.
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=4, fontsize="small", frameon=False)
        fig.tight_layout()
        fig.savefig(path, format="png", bbox_inches="tight")
        plt.close(fig)
    return path
