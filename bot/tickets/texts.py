"""Texts of the handoff outside the Rasa domain (knowledge/handoff.yml): staff labels, notifications, reply prefix."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Dict

import yaml

KNOWLEDGE_FILE = Path(__file__).resolve().parents[2] / "knowledge" / "handoff.yml"
STAFF_LANGS = ("en", "fa", "tr")
CUSTOMER_LANGS = ("fa", "tr")


@lru_cache(maxsize=1)
def handoff_texts() -> Dict[str, Any]:
    data = yaml.safe_load(KNOWLEDGE_FILE.read_text(encoding="utf-8"))
    # Fail at start-up, not in front of a customer, when a language is missing.
    english = data["staff"]["en"]
    for lang in STAFF_LANGS:
        labels = data["staff"].get(lang, {})
        missing = set(english) - set(labels)
        missing |= {f"fields.{name}" for name in set(english["fields"]) - set(labels.get("fields", {}))}
        if missing:
            raise ValueError(f"{KNOWLEDGE_FILE}: staff labels missing for {lang}: {sorted(missing)}")
    for code, names in data["priority_reasons"].items():
        if set(STAFF_LANGS) - set(names):
            raise ValueError(f"{KNOWLEDGE_FILE}: priority reason {code} lacks a language")
    return data


def staff_labels(lang: str) -> Dict[str, Any]:
    return handoff_texts()["staff"].get(lang) or handoff_texts()["staff"]["en"]


def reason_label(code: str, lang: str) -> str:
    names = handoff_texts()["priority_reasons"].get(code)
    return (names or {}).get(lang) or (names or {}).get("en") or code


def customer_text(key: str, lang: str) -> str:
    variants = handoff_texts()["customer"][key]
    return variants.get(lang) or variants["fa"]


def notification_text(key: str, lang: str) -> str:
    variants = handoff_texts()["notification"][key]
    return variants.get(lang) or variants["en"]
