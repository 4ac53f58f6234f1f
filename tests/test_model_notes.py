"""No silent substitutes (issue 9 #7) and a pasted config.json (#8): the form's model reading and the notes said with
the estimate (actions/model_notes.py, actions/forms.py _model_from_text), against the real knowledge base."""
import json

import pytest
from rasa_sdk.executor import CollectingDispatcher

from actions.forms import _model_from_text
from actions.model_notes import config_error_message, stand_in, unrecognised_note
from bot.advisor.advice import AdviceRequest, advise
from bot.advisor.knowledge import load_knowledge
from bot.text.parse import parse_values

QWEN3_8B_CONFIG = {  # Qwen/Qwen3-8B config.json (the values the preset qwen3-8b also records)
    "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 4096, "num_hidden_layers": 36,
    "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 12288, "vocab_size": 151936,
    "head_dim": 128, "tie_word_embeddings": False, "rms_norm_eps": 1e-6, "max_position_embeddings": 40960}


def _read(text, lang="fa"):
    dispatcher = CollectingDispatcher()
    updates = _model_from_text(dispatcher, parse_values(text), text, lang)
    return updates, [m.get("text") or m.get("response") for m in dispatcher.messages]


@pytest.mark.parametrize("text, family", [("qwen 4.5 8b ile qlora", "qwen"), ("Gemma 5 12B'yi lora ile", "gemma"),
                                          ("لاما ۵ با ۷۰ میلیارد پارامتر", "llama")])
def test_an_unknown_name_of_a_known_family_uses_a_same_family_stand_in_and_keeps_the_name(text, family):
    kb = load_knowledge()
    updates, said = _read(text)
    assert updates["model_unrecognised"] and updates["model"] == updates["model_unrecognised"]
    assert kb.model(updates["model_id"]).family == family
    assert said == []  # said with the estimate, not before


def test_a_known_model_is_always_used_by_name():
    for text in ("Qwen3 8B ile QLoRA", "gpt-oss-20b'yi lora ile", "Llama 4 Scout رو با لورا", "Mixtral 8x7B"):
        updates, _ = _read(text)
        assert updates["model_id"] and updates["model_unrecognised"] is None, text


@pytest.mark.parametrize("lang", ["fa", "tr"])
def test_the_estimate_note_names_the_model_the_stand_in_and_a_wider_range(lang):
    values = stand_in("qwen 4.5 8b", 8.0)
    fields = dict(model=values["model_id"], size_b=None, method="qlora", seq_len=2048)
    advice = advise(AdviceRequest(**fields))
    note = unrecognised_note("qwen 4.5 8b", advice, fields, lang)
    assert "Qwen 4.5 8B" in note and advice.preset.display in note
    assert ("فقط اندازه" not in note) and ("Yalnızca model boyutunu" not in note)
    kb = load_knowledge()
    assert kb.text("model_difference_vocab", lang) in note
    # the range said is at least as wide as the stand-in's own
    from actions.model_notes import widened_range

    low, high = widened_range(advice, fields, True, kb)
    assert low <= advice.estimate.low_gib and high >= advice.estimate.high_gib and high > low


def test_an_unknown_family_uses_the_reference_preset_of_that_size_and_says_so():
    updates, _ = _read("stablelm 7b'yi lora ile eğitmek istiyorum", "tr")
    assert updates["model_unrecognised"] == "stablelm 7b"
    fields = dict(model=updates["model_id"], size_b=None, method="lora", seq_len=2048)
    note = unrecognised_note("stablelm 7b", advise(AdviceRequest(**fields)), fields, "tr")
    # the name as the customer gave it, family and size (blind round 2: never "a 7B model")
    assert "Stablelm 7B" in note and "referans modelimiz" in note and "config.json" in note


@pytest.mark.parametrize("lang, word", [("fa", "config.json"), ("tr", "config.json")])
def test_a_pasted_config_is_read_and_its_values_said(lang, word):
    text = "این رو حساب کن " + json.dumps(QWEN3_8B_CONFIG) + " با کیولورا"
    updates, said = _read(text, lang)
    assert updates["custom_arch"]["layers"] == 36 and updates["custom_arch"]["vocab"] == 151936
    assert updates["model_id"] is None and updates["model"] == updates["custom_arch_label"]
    assert len(said) == 1 and "36" in said[0] and "151936" in said[0] and word in said[0]
    # the numbers inside the JSON are not read as values of the message
    parsed = parse_values(text)
    assert parsed.seq_len is None and parsed.method == "qlora"


@pytest.mark.parametrize("lang, phrase", [("fa", "کلید «num_hidden_layers»"), ("tr", "\"num_hidden_layers\" anahtarı")])
def test_a_config_without_a_key_gets_a_message_naming_it(lang, phrase):
    broken = {k: v for k, v in QWEN3_8B_CONFIG.items() if k != "num_hidden_layers"}
    text = json.dumps(broken)
    updates, said = _read(text, lang)
    assert "custom_arch" not in updates and said and phrase in said[0]
    assert phrase in config_error_message(text, lang)


def test_a_cut_off_config_is_unreadable_and_its_numbers_are_no_values():
    text = '{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "vocab_size": 32000'
    parsed = parse_values(text)
    assert parsed.config_error == "json" and parsed.seq_len is None and parsed.ambiguous == []
    _, said = _read(text, "tr")
    assert said and "config.json" in said[0]


def test_an_unknown_variant_without_a_size_is_named_with_the_closest_presets():
    updates, said = _read("gemma 4 e2b'yi qlora ile 2048 token", "tr")
    assert "model_id" not in updates and said == ["utter_unknown_model"]


@pytest.mark.parametrize("text, preset_id", [("qwen 14b ile LoRA", "qwen3-14b"), ("جما ۲۷ بی با لورا", "gemma-3-27b"),
                                             ("phi 14b", "phi-4")])
def test_a_family_and_a_size_take_the_newest_release_and_remember_the_assumption(text, preset_id):
    updates, _ = _read(text)
    assert updates["model_id"] == preset_id and updates["model_version_assumed"] is True
    updates, _ = _read("qwen2.5 14b")  # a version named: nothing assumed, an earlier assumption cleared
    assert updates["model_id"] == "qwen2.5-14b" and updates["model_version_assumed"] is None
    assert stand_in("qwen 14b", 14.0)["model_version_assumed"] is True


@pytest.mark.parametrize("lang, words", [("fa", ["Qwen3 14B", "جدیدترین نسخهٔ Qwen"]),
                                         ("tr", ["Qwen3 14B", "en yeni Qwen sürümü"]),
                                         ("en", ["Qwen3 14B", "newest Qwen"])])
def test_the_version_note_names_the_release_and_the_family(lang, words):
    from actions.model_notes import version_note

    note = version_note("qwen3-14b", lang)
    assert all(word in note for word in words)
    assert version_note("no-such-preset", lang) is None
