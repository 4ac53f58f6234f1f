"""Schemas of the knowledge files whose readers live outside the pure packages (the Rasa glue, the actions, the
tickets) or read them without a model of their own; the registry (bot/knowledge/registry.py) names them."""
from __future__ import annotations

from typing import Any, Dict, List

from pydantic import BaseModel, Field, confloat, conint, root_validator, validator

from bot.knowledge.texts import BilingualText

CUSTOMER_LANGS = ("fa", "tr")
STAFF_LANGS = ("en", "fa", "tr")


class _Strict(BaseModel):
    class Config:
        extra = "forbid"


# ---------------------------------------------------------------------------------------------- channels.yml


class ChannelTexts(_Strict):
    """knowledge/channels.yml: what a channel answers before the assistant sees the message."""

    texts: Dict[str, BilingualText]


# ---------------------------------------------------------------------------------------------- dialogue.yml


class DialogueTexts(BaseModel):
    """knowledge/dialogue.yml: the actions' sentences, one key each, in fa and tr."""

    __root__: Dict[str, BilingualText]


# ---------------------------------------------------------------------------------------------- social.yml


class SocialEntry(_Strict):
    says: List[str] = Field(..., min_items=1)
    reply: str = Field(..., min_length=1)


class SocialFile(_Strict):
    """knowledge/social.yml: greetings and wishes returned in kind, per language."""

    greetings: Dict[str, List[SocialEntry]]
    wishes: Dict[str, List[SocialEntry]]

    @validator("greetings", "wishes")
    def _both_languages(cls, v):
        missing = [lang for lang in CUSTOMER_LANGS if not v.get(lang)]
        if missing:
            raise ValueError(f"needs entries in {', '.join(missing)}")
        return v


# ---------------------------------------------------------------------------------------------- rate_limits.yml


class Bucket(_Strict):
    burst: conint(ge=1)  # type: ignore[valid-type]
    per_minute: confloat(gt=0)  # type: ignore[valid-type]


class RateLimits(_Strict):
    """knowledge/rate_limits.yml: token buckets per conversation and per client address."""

    messages_per_conversation: Bucket
    messages_per_address: Bucket
    tickets_per_conversation: Bucket
    tickets_per_address: Bucket
    max_tracked_keys: conint(ge=100)  # type: ignore[valid-type]


# ---------------------------------------------------------------------------------------------- handoff.yml


class HandoffFile(_Strict):
    """knowledge/handoff.yml: staff labels (en, fa, tr), notifications, the reply prefix, priority reasons."""

    customer: Dict[str, Any]
    notification: Dict[str, Any]
    staff: Dict[str, Dict[str, Any]]
    priority_reasons: Dict[str, Dict[str, str]]

    @root_validator(skip_on_failure=True)
    def _every_language(cls, values):
        # Fail at start-up, not in front of a customer, when a language is missing.
        english = values["staff"].get("en") or {}
        for lang in STAFF_LANGS:
            labels = values["staff"].get(lang, {})
            missing = set(english) - set(labels)
            missing |= {f"fields.{name}" for name in set(english.get("fields", {})) - set(labels.get("fields", {}))}
            if missing:
                raise ValueError(f"staff labels missing for {lang}: {sorted(missing)}")
        for code, names in values["priority_reasons"].items():
            if set(STAFF_LANGS) - set(names):
                raise ValueError(f"priority reason {code} lacks a language")
        return values


# ---------------------------------------------------------------------------------------------- privacy.yml


def _words(words: List[str]) -> List[str]:
    if not all(isinstance(w, str) and w.strip() for w in words):
        raise ValueError("must be a non-empty list of words")
    return words


class AddressWords(_Strict):
    street: List[str] = Field(..., min_items=1)
    numbered: List[str] = Field(..., min_items=1)
    postal_code: List[str] = Field(..., min_items=1)

    _words = validator("street", "numbered", "postal_code", allow_reuse=True)(_words)


class WordsByLanguage(_Strict):
    fa: List[str] = Field(..., min_items=1)
    tr: List[str] = Field(..., min_items=1)

    _words = validator("fa", "tr", allow_reuse=True)(_words)


class PrivacyWords(_Strict):
    """knowledge/privacy.yml: address words per language, and the words before a phone number or an IBAN."""

    fa: AddressWords
    tr: AddressWords
    phone_words: WordsByLanguage
    iban_words: WordsByLanguage


# ---------------------------------------------------------------------------------------------- followups.yml


class FollowupWords(_Strict):
    """knowledge/followups.yml: the words of each follow-up kind and of image or vision work."""

    kinds: Dict[str, List[str]]
    other_workload: List[str] = Field(..., min_items=1)


# ---------------------------------------------------------------------------------------------- lexicon.yml


class LexiconFile(BaseModel):
    """knowledge/lexicon.yml: the parser's word lists (bot/text/numbers.py folds them into phrase tables). Other
    keys are allowed: the parser's owners add lists as they go, and bot/text/numbers.py reads those it knows."""

    number_words: Dict[str, Dict[str, float]]
    weak_number_words: List[str]
    never_alone_numbers: List[str]
    model_words: List[str]
    number_counter_suffixes: List[str]
    number_connectors: List[str]
    multipliers: Dict[str, List[Any]]
    counter_words: List[Any]
    range_words: List[str]
    approximate_words: List[str]
    units: Dict[str, List[Any]]
    keywords: Dict[str, List[Any]]
    methods: Dict[str, List[Any]]
    name_suffixes: Dict[str, List[str]]
    model_families: Dict[str, str]
    rewrites: List[Dict[str, Any]]
    language: Dict[str, List[str]]


# ---------------------------------------------------------------------------------------------- calibration/


class CalibrationCase(BaseModel):
    """One published measurement: an id and the plan it was measured with; the rest is the case's own
    (bot/advisor/calibration.py and bot/advisor/throughput_calibration.py read it)."""

    id: str
    plan: Dict[str, Any]


class VramCasesFile(BaseModel):
    """knowledge/calibration/vram_cases*.yaml (and a case file given to `gpu-advisor calibrate`): published VRAM
    measurements; other top-level keys (a file's notes) are allowed."""

    cases: List[CalibrationCase]


class CaseSettingsFile(_Strict):
    """knowledge/calibration/case_settings.yaml: per-case settings the case schema cannot express."""

    settings: Dict[str, Dict[str, Any]] = {}


class ThroughputCasesFile(BaseModel):
    """knowledge/calibration/throughput_cases.yaml: published training speeds (schema of each case in
    bot/advisor/throughput_calibration.py REQUIRED)."""

    cases: List[Dict[str, Any]] = Field(..., min_items=1)
    mpt: Dict[str, Dict[str, Any]] = {}
