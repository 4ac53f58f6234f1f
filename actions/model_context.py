"""A model named over two messages (blind round 2): "we use Llama" first, "the 8-billion one, version 3.1" next.

The parser reads one message; the second one alone is only "a 8B model". The family the customer named in an
earlier message of the conversation, with the size (and the version, when given) of this one, names the preset:
Llama + 8B + 3.1 -> Llama 3.1 8B; Llama + 8B -> the newest Llama of 8B, said as assumed.
"""
from __future__ import annotations

import re
from typing import Iterable, Optional, Text

# Earlier user messages looked at for the family, newest first (the model question is asked early).
EARLIER_MESSAGES = 6
# "version 3.1", "v3.1", "sürüm 3.1", "3.1 sürümü", «نسخه ۳.۱», «ورژن ۳.۱»: the words that mark a version number.
VERSION_WORDS = r"(?:version|versiyon\w*|v|sürüm\w*|surum\w*|nesil|نسخه\w*|ورژن\w*)"
_VERSION_BEFORE = re.compile(rf"(?<![\w.]){VERSION_WORDS}\s*(\d+(?:\.\d+)?)(?![\d.])")
_VERSION_AFTER = re.compile(rf"(?<![\w.])(\d+(?:\.\d+)?)\s*{VERSION_WORDS}(?!\w)")


def family_named_earlier(texts: Iterable[Text]) -> Optional[Text]:
    """The model family word (knowledge/lexicon.yml model_families, knowledge/models.yml families) of the newest
    earlier message that names one; None when none does."""
    from bot.text.normalize import fold
    from bot.text.numbers import load_lexicon, tokenize
    from bot.text.parse.model_names import _default_kb, _kb_family_words

    families = {**_kb_family_words(_default_kb()), **load_lexicon().model_families}
    stems = sorted((word for word in families if len(word) >= 3), key=len, reverse=True)
    for text in texts:
        for token in tokenize(fold(text or "")):
            word = token.text
            if word in families and len(word) >= 3:  # "yi" is also a Turkish case ending ("8B'yi")
                return families[word]
            stem = next((s for s in stems if word.startswith(s) and len(word) - len(s) <= 3), None)
            if stem:  # «لاماست», "llamayı": the family with a case ending or a verb glued on
                return families[stem]
    return None


def version_in(text: Text) -> Optional[Text]:
    from bot.text.normalize import fold

    folded = fold(text or "")
    found = _VERSION_BEFORE.search(folded) or _VERSION_AFTER.search(folded)
    return found.group(1) if found else None


def model_with_earlier_family(text: Text, size_b: float, earlier: Iterable[Text]):
    """ParsedValues of "<family> <version> <size>b" when an earlier message named the family; None otherwise."""
    family = family_named_earlier(earlier)
    if family is None:
        return None
    from bot.text.parse import parse_values

    version = version_in(text)
    name = " ".join(part for part in (family, version, f"{size_b:g}b") if part)
    parsed = parse_values(name)
    return parsed if parsed.model_id or parsed.model_query else None
