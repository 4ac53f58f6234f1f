"""knowledge/dataset.yml, loaded once and validated by the knowledge layer (bot/knowledge/)."""
from __future__ import annotations

import os
from functools import lru_cache
from typing import Any, Dict, List, Optional

from pydantic import BaseModel, root_validator, validator

from bot.dataset.reader import ReadLimits
from bot.knowledge import LocalizedText, parse_file

KNOWLEDGE_FILE = os.path.join(os.path.dirname(__file__), "..", "..", "knowledge", "dataset.yml")
LANGS = ("fa", "tr", "en")


Text = LocalizedText  # the one text model of the knowledge layer (bot/knowledge/texts.py)


class Limits(BaseModel):
    max_bytes: int
    max_line_bytes: int
    max_unpacked_bytes: int
    max_zip_ratio: int

    def read_limits(self) -> ReadLimits:
        return ReadLimits(**self.dict())


class Template(BaseModel):
    specials: List[str]
    roles: Dict[str, str]
    begin: List[str]
    messages: Dict[str, List[str]]
    plain: List[str]
    plain_joiner: str

    @validator("messages")
    def has_default(cls, value):
        if "default" not in value:
            raise ValueError("messages needs a default")
        return value


class DatasetKnowledge(BaseModel):
    limits: Dict[str, Limits]
    columns: Dict[str, List[str]]
    languages: Dict[str, Any]
    analysis: Dict[str, Any]
    tokenizers: List[Dict[str, Any]]
    models: List[Dict[str, Any]]
    templates: Dict[str, Template]
    texts: Dict[str, Text]

    @root_validator(skip_on_failure=True)
    def references_resolve(cls, values):
        tokenizer_ids = {t["id"] for t in values["tokenizers"]}
        for entry in values["models"]:
            if entry["tokenizer"] not in tokenizer_ids or entry["template"] not in values["templates"]:
                raise ValueError(f"models entry {entry} names an unknown tokenizer or template")
        if values["models"][-1]["prefix"] != "":
            raise ValueError("the last models entry must have prefix '' (the default)")
        for spec in values["tokenizers"]:
            if not os.path.exists(os.path.join(os.path.dirname(__file__), "vocab", spec["file"])):
                raise ValueError(f"tokenizer {spec['id']}: file {spec['file']} is missing")
        return values

    def tokenizer(self, tokenizer_id: str) -> Dict[str, Any]:
        return next(spec for spec in self.tokenizers if spec["id"] == tokenizer_id)

    def tokenizer_for_model(self, model_id: Optional[str]) -> Dict[str, Any]:
        name = (model_id or "").lower()
        return next(entry for entry in self.models if name.startswith(entry["prefix"]))

    def text(self, key: str, lang: str, **params: Any) -> str:
        entry = self.texts[key]
        return getattr(entry, lang if lang in LANGS else "en").format(**params)

    def header_words(self) -> Dict[str, tuple]:
        return {role: tuple(word.casefold() for word in words) for role, words in self.columns.items()}


@lru_cache(maxsize=1)
def load_dataset_knowledge(path: str = KNOWLEDGE_FILE) -> DatasetKnowledge:
    return parse_file(DatasetKnowledge, path)
