"""The house style of the answers (knowledge/glossary.yml): number and currency format per language, Latin terms and
the wordings the native-speaker reviews replaced. Validated on load like every knowledge file."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Dict, List

from pydantic import BaseModel, Field, validator

from bot.advisor.knowledge import DEFAULT_ROOT
from bot.knowledge import parse_file

LANGS = ("fa", "tr", "en")


class NumberStyle(BaseModel):
    decimal: str = Field(..., min_length=1, max_length=1)
    thousands: str = Field(..., max_length=1)
    group_from_digits: int = Field(..., ge=0, le=12)
    range: str

    @validator("range")
    def _range_has_both_ends(cls, v):
        if "{low}" not in v or "{high}" not in v:
            raise ValueError("must contain {low} and {high}")
        return v


class Avoid(BaseModel):
    text: str = Field(..., min_length=1)
    use: str


class Glossary(BaseModel):
    numbers: Dict[str, NumberStyle]
    currency: Dict[str, str]
    multiplication: str
    latin_terms: List[str]
    avoid: Dict[str, List[Avoid]]

    @validator("numbers", "currency")
    def _every_language(cls, v):
        missing = set(LANGS) - set(v)
        if missing:
            raise ValueError(f"missing languages: {sorted(missing)}")
        return v

    @validator("currency")
    def _amount_placeholder(cls, v):
        for lang, pattern in v.items():
            if pattern.count("{amount}") != 1:
                raise ValueError(f"{lang}: the pattern needs exactly one {{amount}}")
        return v

    def style(self, lang: str) -> NumberStyle:
        return self.numbers.get(lang) or self.numbers["en"]


@lru_cache(maxsize=4)
def load_glossary(root: Path = DEFAULT_ROOT) -> Glossary:
    path = Path(root) / "glossary.yml"
    return parse_file(Glossary, path)
