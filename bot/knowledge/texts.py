"""One text of the bot in Persian and Turkish (and English): the one model every knowledge file's texts use.

A text a customer reads exists in both languages, neither empty, with the same placeholders in each (a placeholder
missing in one language would silently drop a number from that answer), and every template well formed."""
from __future__ import annotations

from typing import Any, Dict, Optional

from pydantic import BaseModel, root_validator, validator

from bot.knowledge.parity import placeholders

LANGS = ("fa", "tr", "en")


class _Strict(BaseModel):
    class Config:
        extra = "forbid"
        allow_mutation = False


def _non_empty(value: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be a non-empty text")
    return value


def _alike(cls, values: Dict[str, Any]) -> Dict[str, Any]:
    texts = {lang: values[lang] for lang in LANGS if isinstance(values.get(lang), str)}
    names = {}
    for lang, text in texts.items():
        try:
            names[lang] = placeholders(text)
        except ValueError as exc:
            raise ValueError(f"{lang}: broken template: {exc}")
    if len({frozenset(v) for v in names.values()}) > 1:
        raise ValueError("placeholders differ between languages: "
                         + ", ".join(f"{k}={sorted(v)}" for k, v in names.items()))
    return values


class BilingualText(_Strict):
    """A text in Persian and Turkish, English optional (the channels' and the dialogue's texts)."""

    fa: str
    tr: str
    en: Optional[str] = None

    _non_empty = validator("fa", "tr", allow_reuse=True)(_non_empty)
    _alike = root_validator(skip_on_failure=True, allow_reuse=True)(_alike)

    def get(self, lang: str) -> str:
        """The text in ``lang``; English, then Persian, for a language it lacks."""
        return getattr(self, lang, None) or self.en or self.fa

    def format(self, lang: str, **params: Any) -> str:
        return self.get(lang).format(**params)


class LocalizedText(BilingualText):
    """A text in Persian, Turkish and English (the advice, the stacks, the data check)."""

    en: str

    _non_empty_en = validator("en", allow_reuse=True)(_non_empty)
