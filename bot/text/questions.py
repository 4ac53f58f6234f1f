"""Whether a message asks something, and which card size it asks about.

Used by the form validation (a reply that only gives the asked value asks nothing) and by the IntentGuard inside
the Rasa server ("we use Llama 3.1 8B, is a 24 GB card enough?" is a card-size question for the memory FAQ), so it
lives here in bot/text rather than in actions/.
"""
from __future__ import annotations

import re
from typing import Optional

from bot.text.normalize import normalize

# Signs that a message asks something: a question mark, Turkish question particles (written apart: "yeter mi"),
# Persian question words. A reply that only gives the asked value has none of them.
QUESTION_MARKS = ("?", "؟")
QUESTION_WORDS = re.compile(r"(?:^|\s)(?:m[iıuü]|m[iıuü]s[iıuü]n(?:[iı]z)?|m[iıuü]y[iıuü]m|nedir|neden|nas[iı]l|"
                            r"hangi|ka[cç]|آیا|چقدر|چند|چیه|چیست|چطور|چرا|کدام|کدوم|میشه|می‌شود)(?=$|[^\w\u200c])")
# A card size as people write it in a question: "24 GB", "24gb", "۲۴ گیگ", "24 جی بی".
CARD_SIZE = re.compile(r"(\d{1,3})\s*(?:gb|gib|gig|g\b|گیگ|جی\s*بی|جیگ)", re.IGNORECASE)


def is_question(text: str) -> bool:
    return any(mark in text for mark in QUESTION_MARKS) or bool(QUESTION_WORDS.search(text.lower()))


def card_size_gb(text: Optional[str]) -> Optional[float]:
    """The card size (GB) a message names, or None."""
    match = CARD_SIZE.search(normalize(text or ""))
    return float(match.group(1)) if match else None
