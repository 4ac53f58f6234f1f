"""Numbers, money, sizes, durations and line direction as knowledge/glossary.yml says, for every answer type.

Persian without thousands separators, Turkish with a decimal comma and a thousands dot; "X دلار" / "X dolar"; GPU and
model names stay in Latin script.
"""
from __future__ import annotations

import math
from typing import List

from bot.advisor.glossary import load_glossary
from bot.advisor.knowledge import LANGS, Knowledge

def _check_lang(lang: str) -> str:
    if lang not in LANGS:
        raise ValueError(f"lang: expected one of {', '.join(LANGS)}, got {lang!r}")
    return lang


# ---------------------------------------------------------------------------------------------- numbers

# Persian list lines start with a digit or a bullet followed by Latin text; a chat client that sets the direction
# from the first strong character (dir="auto") would lay them out left to right. A right-to-left mark first keeps
# them right to left (fa review §7).
RLM = "\u200f"


def number(value: float, lang: str, decimals: int = 1) -> str:
    """Digits as knowledge/glossary.yml says: Persian without a thousands separator, Turkish with a decimal comma
    and a thousands dot from four digits; trailing zeros of the fraction dropped."""
    style = load_glossary().style(lang)
    text = f"{abs(value):.{decimals}f}"
    if decimals:
        text = text.rstrip("0").rstrip(".")
    whole, _, fraction = text.partition(".")
    if style.group_from_digits and len(whole) >= style.group_from_digits:
        groups: List[str] = []
        while len(whole) > 3:
            whole, groups = whole[:-3], [whole[-3:]] + groups
        whole = style.thousands.join([whole] + groups)
    sign = "-" if value < 0 and text.strip("0.") else ""
    return sign + whole + (style.decimal + fraction if fraction else "")


def money(value: float, lang: str, *, whole_if_round: bool = False) -> str:
    """The amount only (the template carries the currency word): two decimals below 100, whole dollars above."""
    if value >= 100 or (whole_if_round and float(value).is_integer()):
        return number(round(value), lang, 0)
    return f"{value:.2f}".replace(".", load_glossary().style(lang).decimal)


def usd(value: float, lang: str, *, whole_if_round: bool = True) -> str:
    """An amount with its currency the glossary's way: "0.74 دلار", "0,74 dolar", "$0.74"."""
    return load_glossary().currency.get(lang, "${amount}").replace(
        "{amount}", money(value, lang, whole_if_round=whole_if_round))


def gb(value: float, lang: str) -> str:
    return number(value, lang, 0 if value >= 100 else 1)


def gb_range(low: float, high: float, lang: str) -> str:
    return load_glossary().style(lang).range.format(low=gb(low, lang), high=gb(high, lang))


def tokens(value: float, lang: str, kb: Knowledge) -> str:
    for scale, key in ((1e9, "count_billion"), (1e6, "count_million"), (1e3, "count_thousand")):
        if value >= scale:
            return kb.text(key, lang, n=number(value / scale, lang, 1))
    return number(value, lang, 0)


def duration(hours: float, lang: str, kb: Knowledge) -> str:
    if hours < 1:
        return kb.text("duration_minutes", lang, n=number(max(1, math.ceil(hours * 60)), lang, 0))
    if hours < 48:
        return kb.text("duration_hours", lang, n=number(hours, lang, 1))
    return kb.text("duration_days", lang, n=number(hours / 24, lang, 1))


def names_list(names: List[str], lang: str, kb: Knowledge) -> str:
    return kb.text("list_separator", lang).join(names)

def _list_line(text: str, lang: str) -> str:
    return RLM + text if lang == "fa" else text


def _rtl_lines(text: str, lang: str) -> str:
    """Persian: a right-to-left mark before every line whose first character is Latin, a digit or a bullet
    ("L4، RTX 4090 ... هم جا می‌شوند"), so that dir="auto" chat clients keep it right to left (fa review §7)."""
    if lang != "fa":
        return text
    return "\n".join(RLM + line if line and line[0] != RLM and (line[0].isascii() or line[0] == "•") else line
                     for line in text.split("\n"))
