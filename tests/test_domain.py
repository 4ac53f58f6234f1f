"""The domain: every response in Persian (default) and Turkish, Telegram-safe buttons, generated rules up to date."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from actions import rulegen

ROOT = Path(__file__).resolve().parents[1]
DOMAIN_FILES = sorted((ROOT / "domain").glob("*.yml"))
ARABIC_SCRIPT = re.compile(r"[\u0600-\u06FF]")
TURKISH_LETTERS = re.compile(r"[çğıöşüÇĞİÖŞÜ]")
# Rasa's built-in English texts that must be replaced (notes §1.3).
BUILT_IN_ENGLISH_RESPONSES = ("utter_default", "utter_ask_rephrase")


def _responses():
    for path in DOMAIN_FILES:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for name, variants in (data.get("responses") or {}).items():
            yield path.name, name, variants


RESPONSES = list(_responses())


def _is_turkish_variant(variant: dict) -> bool:
    return any(c.get("type") == "slot" and c.get("name") == "language" and str(c.get("value")).lower() == "tr"
               for c in variant.get("condition") or [])


def test_domain_has_responses():
    assert len(RESPONSES) >= 30


@pytest.mark.parametrize("file,name,variants", RESPONSES, ids=[f"{f}:{n}" for f, n, _ in RESPONSES])
def test_every_response_has_persian_default_and_turkish_variant(file, name, variants):
    defaults = [v for v in variants if not v.get("condition") and not v.get("channel")]
    turkish = [v for v in variants if _is_turkish_variant(v)]
    assert defaults, f"{name} has no unconditioned (Persian) default"
    assert turkish, f"{name} has no Turkish variant"
    for variant in defaults:
        assert ARABIC_SCRIPT.search(variant.get("text", "")), f"{name}: default is not Persian"
    for variant in turkish:
        text = variant.get("text", "")
        assert not ARABIC_SCRIPT.search(text.split("\n")[0]), f"{name}: Turkish variant starts in Arabic script"
    # A channel-only variant would beat the language condition on that channel (notes §0.8).
    for variant in variants:
        if variant.get("channel"):
            assert variant.get("condition"), f"{name}: channel variant without a language condition"


@pytest.mark.parametrize("file,name,variants", RESPONSES, ids=[f"{f}:{n}" for f, n, _ in RESPONSES])
def test_buttons_fit_telegram_callback_data(file, name, variants):
    for variant in variants:
        for button in variant.get("buttons") or []:
            rendered = button["payload"].replace("{{", "{").replace("}}", "}")
            assert rendered.isascii(), f"{name}: payload {rendered!r} is not ASCII"
            assert len(rendered.encode()) <= 64, f"{name}: payload {rendered!r} is over 64 bytes"
            if "{" in button["payload"]:
                # Single braces would be read as a slot placeholder by the response interpolator (notes §0.7).
                assert "{{" in button["payload"], f"{name}: JSON payload braces must be doubled"


def test_turkish_variants_are_turkish():
    turkish_texts = [v.get("text", "") for _, _, variants in RESPONSES for v in variants if _is_turkish_variant(v)]
    with_turkish_letters = [t for t in turkish_texts if TURKISH_LETTERS.search(t)]
    assert len(with_turkish_letters) >= 0.8 * len(turkish_texts)


def test_built_in_english_responses_are_overridden():
    names = {name for _, name, _ in RESPONSES}
    assert set(BUILT_IN_ENGLISH_RESPONSES) <= names
    core = yaml.safe_load((ROOT / "domain" / "core.yml").read_text(encoding="utf-8"))
    assert "action_default_ask_affirmation" in core["actions"]
    assert "action_default_fallback" in core["actions"]


def test_form_questions_exist_for_every_form_slot():
    core = yaml.safe_load((ROOT / "domain" / "core.yml").read_text(encoding="utf-8"))
    names = {name for _, name, _ in RESPONSES}
    for slot in core["forms"]["estimate_form"]["required_slots"]:
        assert f"utter_ask_{slot}" in names
        assert f"utter_{slot}_not_understood" in names


def test_contract_slot_names_are_declared():
    slots = set()
    for path in DOMAIN_FILES:
        slots |= set((yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("slots") or {})
    contract = {"language", "model_id", "model_size_b", "method", "seq_len", "budget_usd", "budget_unlimited",
                "examples", "avg_tokens", "total_tokens", "epochs", "gpus", "estimate_summary"}
    assert contract <= slots


def test_generated_interruption_rules_are_up_to_date():
    assert rulegen.OUTPUT.read_text(encoding="utf-8") == rulegen.render(), \
        "run: .venv/bin/python -m actions.rulegen"


def test_every_faq_intent_is_answered_inside_and_outside_the_forms():
    rules = rulegen.build_rules()["rules"]
    for intent in rulegen.faq_intents():
        matching = [r for r in rules if r["steps"][0] == {"intent": intent}]
        assert len(matching) == 3      # outside any form, inside the estimate form, inside the handoff form
        for form in ("estimate_form", "handoff_form"):
            assert any(r.get("condition") == [{"active_loop": form}] and
                       r["steps"][-1] == {"active_loop": form} for r in matching), (intent, form)
    assert len(rulegen.faq_intents()) == 17  # faq_signup_payment: issue 21, round 4; faq_stacks: round 8
