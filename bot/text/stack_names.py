"""The training stack a chat message names ("we use axolotl", «با آنسلوث کار می‌کنیم», "TRL kullanıyoruz").

The words are those of knowledge/stacks.yml (``words`` of each stack), matched on the folded message
(bot.text.normalize.fold: case, Persian letter variants, Turkish letters, apostrophe suffixes). A Latin name of five
letters or more also matches with a Turkish suffix written without an apostrophe ("axolotlu", "unsloth'la" is folded
already). A message naming two different stacks names none (a question, "unsloth or axolotl?").
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import List, Optional, Pattern, Tuple

from bot.text.normalize import fold

# A Turkish case/possessive suffix glued to a Latin name: "axolotlu", "unslothla", "torchtunei" (at most 4 letters).
SUFFIX = r"[a-z]{0,4}"
MIN_SUFFIXED_LENGTH = 5


@lru_cache(maxsize=4)
def _patterns(path: Optional[str] = None) -> Tuple[Tuple[Pattern, str], ...]:
    from bot.advisor.stacks import load_stacks

    patterns: List[Tuple[Pattern, str]] = []
    for word, stack_id in load_stacks(path).word_table():
        folded = fold(word).strip()
        if not folded:
            continue
        body = r"\s+".join(re.escape(part) for part in folded.split())
        latin = folded.isascii() and folded.replace(" ", "").isalpha()
        tail = SUFFIX if latin and len(folded) >= MIN_SUFFIXED_LENGTH else ""
        patterns.append((re.compile(rf"(?<![\w]){body}{tail}(?![\w])"), stack_id))
    return tuple(patterns)


@lru_cache(maxsize=1)
def _model_names_with_stack_words() -> Optional[Pattern]:
    """Model names (knowledge/models.yml ids, display names, aliases) that contain a stack's word: "Mistral NeMo"
    names a model, not NVIDIA NeMo AutoModel, so these names are taken out before stacks are looked for."""
    from bot.advisor.knowledge import load_knowledge

    stack_words = {pattern for pattern, _ in _patterns()}
    names = set()
    for preset in load_knowledge().models:
        for name in [preset.id, preset.display, *preset.aliases]:
            folded = " ".join(re.split(r"[\s\-_]+", fold(name).strip()))
            if any(pattern.search(folded) for pattern in stack_words):
                names.add(folded)
    if not names:
        return None
    bodies = sorted((r"[\s\-_]+".join(re.escape(part) for part in name.split()) for name in names), key=len,
                    reverse=True)
    return re.compile(rf"(?<![\w])(?:{'|'.join(bodies)})(?![\w])")


def read_stack(text: Optional[str]) -> Optional[str]:
    """The stack id (knowledge/stacks.yml) the message names, or None."""
    if not text or not isinstance(text, str):
        return None
    folded = fold(text)
    model_names = _model_names_with_stack_words()
    if model_names is not None:
        folded = model_names.sub(" ", folded)
    found = {stack_id for pattern, stack_id in _patterns() if pattern.search(folded)}
    return found.pop() if len(found) == 1 else None
