"""End-to-end: conversation gaps found by QA in the NLU, the intent guard, the parser and the estimate form (REST).

- a typed "start over" ("baştan başlayalım", «بیا از اول شروع کنیم») got goodbye or a fallback instead of a restart;
- "I don't know" ("bilmiyorum", «نمیدونم») was read as "no" and cancelled the estimate form;
- "bir model eğitmek istiyorum" / «یه جی پی یو میخوام» went to a person, a formal what-if to the methods FAQ;
- a greeting with job values ("salam, mikham llama 8b ro ba qlora ...") lost the values;
- "llma 3 8b": the typo was not a model and the "3" of the version was asked about as an ambiguous number.
"""
from __future__ import annotations

import json
import urllib.request
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List

import pytest
import yaml

from tests.e2e.helpers import assert_estimate, assert_language, joined, payloads, tracker_slots

pytestmark = pytest.mark.e2e

DOMAIN = Path(__file__).resolve().parents[2] / "domain"
SEQ_LEN_BUTTON = '/inform{"seq_len":2048}'
NO_BUDGET_BUTTON = '/inform{"budget_unlimited":true}'
MODEL_BUTTON = '/inform{"model_size_b":8}'
METHOD_BUTTON = '/inform{"method":"qlora"}'
FORM_VALUES = ("model", "method", "seq_len", "budget", "model_id", "budget_usd", "estimate_summary")


@lru_cache(maxsize=None)
def _responses() -> Dict[str, list]:
    found: Dict[str, list] = {}
    for path in DOMAIN.glob("*.yml"):
        found.update(yaml.safe_load(path.read_text(encoding="utf-8")).get("responses") or {})
    return found


def response_text(name: str, lang: str) -> str:
    """The domain's text of a response in one language (tr: the conditioned variant, fa: the default)."""
    for variant in _responses()[name]:
        is_turkish = any(c.get("value") == "tr" for c in variant.get("condition") or [])
        if is_turkish == (lang == "tr"):
            return variant["text"]
    raise KeyError(name)


def latest_intent(conversation) -> str:
    server = conversation.server
    url = f"{server.url}/conversations/{conversation.sender}/tracker?token={server.extra['auth_token']}"
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.loads(resp.read())["latest_message"]["intent"]["name"]


def texts_of(replies: List[dict]) -> List[str]:
    return [r["text"] for r in replies if r.get("text")]


def slots_of(conversation, *names: str) -> Dict[str, Any]:
    slots = tracker_slots(conversation)
    return {name: slots.get(name) for name in names}


# ------------------------------------------------------------------------------ typed "start over"


@pytest.mark.parametrize("lang,estimate,start_over,next_message", [
    ("tr", "Llama 8B QLoRA 2048 token, bütçem 50 dolar", "baştan başlayalım", "7B lora"),
    ("tr", "Mistral 7B LoRA 4096 token, bütçe sınırı yok", "sifirdan baslayalim", "13B qlora"),
    ("fa", "میخوام llama 8b رو با qlora فاین تیون کنم، ۲۰۴۸ توکن، بودجه ۵۰ دلار", "بیا از اول شروع کنیم",
     "7B lora"),
    ("fa", "مدل ۷ میلیاردی با LoRA و ۴۰۹۶ توکن، بودجه محدودیتی نداره", "همه چیو پاک کن", "13B qlora"),
])
def test_typed_start_over_forgets_the_values_and_keeps_the_language(conversation, lang, estimate, start_over,
                                                                    next_message):
    c = conversation()
    assert_estimate(c.say(estimate), lang)
    restarted = c.say(start_over)
    assert texts_of(restarted) == [response_text("utter_restart", lang)], joined(restarted)
    slots = tracker_slots(c)
    assert slots["language"] == lang
    assert all(slots.get(name) in (None, False) for name in FORM_VALUES), slots
    # The next estimate asks again instead of reusing the old length and budget.
    replies = c.say(next_message)
    assert_language(replies, lang)
    assert SEQ_LEN_BUTTON in payloads(replies), joined(replies)
    asked = c.say("2048")
    assert NO_BUDGET_BUTTON in payloads(asked), joined(asked)


def test_start_over_in_the_middle_of_the_form_leaves_the_form(conversation):
    c = conversation()
    c.say("bir modele ince ayar yapmak istiyorum, hangi GPU lazım?")
    restarted = c.say("her şeyi sıfırla")
    assert texts_of(restarted) == [response_text("utter_restart", "tr")], joined(restarted)
    assert tracker_slots(c).get("requested_slot") is None


# ------------------------------------------------------------------------------ "I don't know" is not "no"


def test_dont_know_the_length_and_the_budget_in_turkish_still_gives_an_estimate(conversation):
    c = conversation()
    asked = c.say("Llama 8B QLoRA ile eğitmek istiyorum")
    assert SEQ_LEN_BUTTON in payloads(asked)
    replies = c.say("bilmiyorum")
    assert_language(replies, "tr")
    assert response_text("utter_assumed_seq_len", "tr") in texts_of(replies)
    assert NO_BUDGET_BUTTON in payloads(replies)       # the form goes on to the budget
    assert slots_of(c, "seq_len")["seq_len"] == 2048
    final = c.say("emin değilim")
    assert response_text("utter_assumed_no_budget", "tr") in texts_of(final)
    assert_estimate(final, "tr", mentions=["2048"])
    assert slots_of(c, "budget_unlimited")["budget_unlimited"] is True


def test_dont_know_the_method_in_persian_takes_qlora_and_says_so(conversation):
    c = conversation()
    asked = c.say("میخوام یه مدل ۸ میلیاردی رو فاین تیون کنم")
    assert METHOD_BUTTON in payloads(asked), joined(asked)
    replies = c.say("نمیدونم")
    assert_language(replies, "fa")
    assert response_text("utter_assumed_qlora", "fa") in texts_of(replies)
    assert SEQ_LEN_BUTTON in payloads(replies)
    assert slots_of(c, "method")["method"] == "qlora"
    replies = c.say("مطمئن نیستم")
    assert response_text("utter_assumed_seq_len", "fa") in texts_of(replies)
    assert NO_BUDGET_BUTTON in payloads(replies)


def test_dont_know_the_model_asks_again_with_examples(conversation):
    c = conversation()
    c.say("merhaba, hangi gpu lazım bana?")
    replies = c.say("hiç fikrim yok")
    assert_language(replies, "tr")
    assert response_text("utter_model_dont_know", "tr") in texts_of(replies)
    assert MODEL_BUTTON in payloads(replies)            # the model question again, with its buttons
    assert tracker_slots(c)["requested_slot"] == "model"


def test_dont_know_outside_a_question_gets_a_helpful_answer(conversation):
    c = conversation()
    c.say("سلام")
    replies = c.say("نمیدونم")
    assert texts_of(replies) == [response_text("utter_dont_know", "fa")], joined(replies)
    assert response_text("utter_anything_else", "fa") not in texts_of(replies)


# ------------------------------------------------------------------------------ misread intents


@pytest.mark.parametrize("lang,text", [
    ("tr", "bir model eğitmek istiyorum"),
    ("tr", "bir model eğitmek istiyorum lütfen"),     # was request_human
    ("tr", "ben bir model eğitmek istiyorum"),        # was a fallback between request_human and estimate
    ("fa", "یه جی پی یو میخوام"),
])
def test_wanting_a_model_trained_or_a_gpu_starts_the_estimate(conversation, lang, text):
    c = conversation()
    replies = c.say(text)
    assert latest_intent(c) == "estimate"
    assert_language(replies, lang)
    assert MODEL_BUTTON in payloads(replies), joined(replies)


def test_a_formal_what_if_after_an_estimate_changes_the_method(conversation):
    c = conversation()
    assert_estimate(c.say("میخوام llama 8b رو با LoRA فاین تیون کنم، ۲۰۴۸ توکن، بودجه ۵۰ دلار"), "fa")
    replies = c.say("در صورت استفاده از QLoRA چه تغییری ایجاد می‌شود؟")
    assert latest_intent(c) == "inform"
    assert_estimate(replies, "fa")
    assert slots_of(c, "method")["method"] == "qlora"


# ------------------------------------------------------------------------------ job values in a greeting


def test_job_values_in_a_finglish_greeting_reach_the_form(conversation):
    c = conversation()
    replies = c.say("salam, mikham llama 8b ro ba qlora train konam")
    assert latest_intent(c) in ("inform", "estimate")   # not greet: either starts the form with the values
    assert slots_of(c, "model_id", "method") == {"model_id": "llama-3.1-8b", "method": "qlora"}
    assert SEQ_LEN_BUTTON in payloads(replies), joined(replies)


@pytest.mark.parametrize("lang,text,values", [
    # The classifier reads both as greetings (greet 0.6); IntentGuard sends the values to the form.
    ("fa", "سلام، llama 8b با qlora", {"model_id": "llama-3.1-8b", "method": "qlora"}),
    ("tr", "selam qwen 14b lora", {"model_id": "qwen3-14b", "method": "lora"}),
])
def test_job_values_in_a_short_greeting_reach_the_form(conversation, lang, text, values):
    c = conversation()
    replies = c.say(text)
    assert latest_intent(c) in ("estimate", "inform")  # a job, not a greeting (both intents run the form)
    assert slots_of(c, *values) == values
    assert SEQ_LEN_BUTTON in payloads(replies), joined(replies)


# ------------------------------------------------------------------------------ model versions and typos


def test_a_typo_and_a_model_version_are_read_without_an_ambiguity_question(conversation):
    c = conversation()
    replies = c.say("mrb llma 3 8b qlora ile 2048 token butcem 30 $")
    assert_estimate(replies, "tr", mentions=["2048"])
    assert slots_of(c, "model_id", "budget_usd") == {"model_id": "llama-3-8b", "budget_usd": 30.0}
    assert response_text("utter_ambiguous_number", "tr").split("}")[1][:40] not in joined(replies)


def test_a_family_typo_is_taken_as_the_model(conversation):
    c = conversation()
    replies = c.say("mistrl 7b lora ile hangi gpu lazım?")
    assert slots_of(c, "model_id", "method") == {"model_id": "mistral-7b", "method": "lora"}
    assert SEQ_LEN_BUTTON in payloads(replies), joined(replies)
