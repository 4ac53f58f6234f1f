"""Topics the intent guard looks for in a message (issue 21, round 2): serving the trained model afterwards, a
question about a card's memory, a request to compare one more card, a price cap or a total budget named. The
word lists are knowledge/lexicon.yml ``topics``.

Pure and linear, like bot.text.followups: the message is tokenised once and each list looked up by first word
(bot.text.numbers.PhraseTable); no regular expression runs over the message.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Dict

import yaml

from bot.text.normalize import fold
from bot.text.numbers import LEXICON_PATH, PhraseTable, tokenize

TOPICS = ("serving", "memory", "compare_card", "price_cap", "total_budget", "training", "total_cost",
          "order", "download", "monthly", "price_complaint", "card_list", "buy", "rent", "hardware",
          "availability", "use_case", "money", "money_enough")


@lru_cache(maxsize=1)
def _tables() -> Dict[str, PhraseTable]:
    with open(LEXICON_PATH, encoding="utf-8") as handle:
        data = (yaml.safe_load(handle) or {}).get("topics") or {}
    missing = [topic for topic in TOPICS if not data.get(topic)]
    if missing:
        raise ValueError(f"{LEXICON_PATH}: topics must list words for {missing}")
    tables = {}
    for topic in TOPICS:
        table = PhraseTable()
        for phrase in data[topic]:
            words = phrase if isinstance(phrase, list) else [phrase]
            table.add([fold(str(word)) for word in words], topic)
        tables[topic] = table
    return tables


def names_topic(text: str, topic: str) -> bool:
    """The message holds one of the words of ``topic`` (one of TOPICS)."""
    table = _tables()[topic]
    tokens = tokenize(fold(text or ""))
    return any(table.longest_at(tokens, i)[0] for i in range(len(tokens)))
