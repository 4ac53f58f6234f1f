""""Is it enough?" («کافیه؟», "yeter mi?") asked bare: the words (knowledge/lexicon.yml, asks_enough), no number and
no value of the job. Read by the intent guard inside Rasa (bot/assistant/components/language_normalizer.py) and by
the actions (actions/fallback.py, actions/forms.py), which must not import the guard's module: its first import in
the action server loads Rasa and TensorFlow for seconds, past the 6 s action timeout."""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Optional

from bot.knowledge import read_yaml
from bot.text.normalize import fold
from bot.text.numbers import LEXICON_PATH, PhraseTable, tokenize

# Only short, bare questions ("13B için 24 GB yeter mi?" is the FAQ, "200 dolar yeter mi?" a new budget). Eight
# words: the longest such question in our tests («خب بالاخره بودجه‌ام میرسه یا نه؟» is six).
ENOUGH_QUESTION_MAX_WORDS = 8


@lru_cache(maxsize=1)
def _enough_table() -> PhraseTable:
    table = PhraseTable()
    for words in read_yaml(LEXICON_PATH)["asks_enough"]:
        table.add(words, "enough")
    return table


def _parsed(text: str) -> Any:
    from bot.text.parsed import parsed_message

    return parsed_message(text)


def asks_if_enough(text: str, parsed_of: Optional[Callable[[str], Any]] = None) -> bool:
    """True for a bare "is it enough?". `parsed_of` gives the parser's reading of `text` (default: the parse kept
    for this message), asked only when the words are there."""
    if not text or text.startswith("/") or any(ch.isdigit() for ch in text) \
            or len(text.split()) > ENOUGH_QUESTION_MAX_WORDS:
        return False
    tokens = tokenize(fold(text))
    if not any(_enough_table().longest_at(tokens, i)[1] == "enough" for i in range(len(tokens))):
        return False
    parsed = (parsed_of or _parsed)(text)
    return not parsed.found() and not parsed.ambiguous and not parsed.budget_unlimited


def asks_money_enough(text: str, parsed_of: Optional[Callable[[str], Any]] = None) -> bool:
    """ "Will my money be enough?" with no amount («پولم کفاف میده؟», "param yeter mi?"): a money word and an enough
    word in the message and no budget read from it (round 9)."""
    if not text or text.startswith("/"):
        return False
    from bot.text.topics import names_topic

    if not (names_topic(text, "money") and names_topic(text, "money_enough")):
        return False
    parsed = (parsed_of or _parsed)(text)
    return parsed.budget_usd is None and not parsed.budget_unlimited and parsed.hourly_cap is None


@lru_cache(maxsize=1)
def _preference_table() -> PhraseTable:
    table = PhraseTable()
    for method, phrases in read_yaml(LEXICON_PATH).get("method_by_preference", {}).items():
        for words in phrases:
            table.add(words, method)
    return table


def method_by_preference(text: str) -> Optional[str]:
    """The method an answer to the method question picks by what matters: "hangisi ucuzsa o" -> "qlora",
    "whichever is best quality" -> "lora"; None when it names neither (round 9)."""
    if not text or text.startswith("/"):
        return None
    tokens = tokenize(fold(text))
    table = _preference_table()
    for i in range(len(tokens)):
        label = table.longest_at(tokens, i)[1]
        if label:
            return label
    return None
