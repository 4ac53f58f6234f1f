"""Short answers to the handoff form's questions that are said in words rather than with a button.

``declines_contact(text)``: "refuse" when the message says the customer does not want to give a contact
("iletişim bilgisi vermek istemiyorum", «نمی‌خوام شماره بدم»), "here" when it asks to be answered in this chat
("buradan yazın", «همین‌جا جواب بدید»), "cancel" when it drops the request ("boşver", «بیخیال»), None otherwise.
The phrases are data (knowledge/lexicon.yml, declines_contact); a cancel wins over a refusal, a refusal over "here".
"""
from __future__ import annotations

from typing import Optional

from bot.text.normalize import fold
from bot.text.numbers import Lexicon, load_lexicon, tokenize


def declines_contact(text: str, lexicon: Optional[Lexicon] = None) -> Optional[str]:
    if not isinstance(text, str) or not text.strip():
        return None
    table = (lexicon or load_lexicon()).declines_contact
    tokens = tokenize(fold(text))
    found = {table.longest_at(tokens, k)[1] for k in range(len(tokens))}
    if tokens and table.longest_at(tokens, 0)[1] == "no_first":
        found.add("refuse")
    for label in ("cancel", "refuse", "here"):
        if label in found:
            return label
    return None
