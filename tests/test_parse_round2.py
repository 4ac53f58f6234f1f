"""parse_values() and the dialogue-state readers on the failure classes of the second blind run (2026-12-03), with
sentences written for these tests: model families that had no preset, the active parameters of a MoE model, methods
spelt as heard or glued to «با», question-answer pairs, a raised hourly cap, "a card" in a sentence; and the
state-decided meaning of a bare number (actions/what_if.py), a family named in an earlier message
(actions/model_context.py), a name we do not know written as typed (actions/model_notes.py)."""
from __future__ import annotations

import pytest

from actions.model_context import family_named_earlier, model_with_earlier_family, version_in
from actions.model_notes import display_name
from actions.what_if import asks_budget_fit, reread_expected, slot_for_bare_number
from bot.advisor.knowledge import load_knowledge
from bot.text.parse import parse_values
from bot.text.stack_names import read_stack


@pytest.fixture(scope="module")
def kb():
    return load_knowledge()


@pytest.mark.parametrize("text, model_id", [
    ("IBM Granite 3.1 8B Instruct ile qlora", "granite-3.1-8b"),
    ("گرانیت 3.3 8b رو با لورا", "granite-3.3-8b"),
    ("granite 2b lora", "granite-3.3-2b"),
    ("OLMo 2 13B ile lora", "olmo-2-13b"),
    ("allenai/OLMo-2-0325-32B-Instruct qlora", "olmo-2-32b"),
    ("olmo2 7b رو با qlora", "olmo-2-7b"),
    ("Mistral Nemo 12B lora", "mistral-nemo-12b"),
    ("mistral-nemo-instruct-2407 ile", "mistral-nemo-12b"),
    ("SmolLM2 360M full", "smollm2-360m"),
    ("smollm2 1.7b رو کامل آموزش بدیم", "smollm2-1.7b"),
    ("Phi-3.5-mini", "phi-3.5-mini"),
    ("ibm-granite/granite-3.2-8b-instruct lora", "granite-3.2-8b"),
    ("HuggingFaceTB/SmolLM2-135M-Instruct full", "smollm2-135m"),
    ("llama 3.1 405b qlora", "llama-3.1-405b"),
    ("Qwen2.5 32B için lora siparişi vermek istiyoruz", "qwen2.5-32b"),
])
def test_families_that_had_no_preset_are_read(kb, text, model_id):
    assert parse_values(text, kb=kb).model_id == model_id


@pytest.mark.parametrize("text", [
    "Qwen3-30B-A3B, active 3B, qlora",
    "Qwen3-30B-A3B 3B aktif parametreli lora",
    "qwen3 30b a3b که ۳ بی فعاله با لورا",
])
def test_the_active_parameters_do_not_replace_the_moe_model(kb, text):
    parsed = parse_values(text, kb=kb)
    assert parsed.model_id == "qwen3-30b-a3b" and parsed.model_size_b == 30.0


@pytest.mark.parametrize("text, method", [
    ("kulora ile olsun", "qlora"),
    ("kuloraya geçelim", "qlora"),
    ("لاما ۸ بی باکیولورا", "qlora"),
    ("کوئن ۲.۵ ۳ بی بالورا", "lora"),
])
def test_methods_spelt_as_heard_or_glued_to_ba(kb, text, method):
    assert parse_values(text, kb=kb).method == method


@pytest.mark.parametrize("text, examples", [
    ("6000 QA pairs", 6000),
    ("3500 soru-cevap çifti", 3500),
    ("۲۰۰۰ جفت سوال و جواب", 2000),
    ("۸۰۰۰ تا پرسش و پاسخ داریم", 8000),
])
def test_question_answer_pairs_are_examples(kb, text, examples):
    assert parse_values(text, kb=kb).examples == examples


@pytest.mark.parametrize("text, cap", [
    ("اگه سقف ساعتی رو به ۲.۵ دلار برسونم چی؟", 2.5),
    ("سقف ساعتیمون رو ۴ دلار کنیم کارت دیگه‌ای هست؟", 4.0),
    ("saatlik tavanı 5 dolara yükseltirsem?", 5.0),
    ("saatlik limiti 3 dolara çıkarırsam daha iyi bir kart önerir misin?", 3.0),
])
def test_a_raised_hourly_cap_is_a_cap_and_a_card_is_no_count(kb, text, cap):
    parsed = parse_values(text, kb=kb)
    assert parsed.hourly_cap == cap and parsed.budget_usd is None and parsed.gpus is None


def test_a_count_of_one_card_alone_is_still_a_count(kb):
    assert parse_values("یک کارت", kb=kb).gpus == 1
    assert parse_values("bir tane kart yeter mi", kb=kb).gpus == 1


def test_mistral_nemo_is_a_model_not_the_nemo_stack():
    assert read_stack("Mistral Nemo 12B lora") is None
    assert read_stack("mistral nemo, nemo automodel ile") == "nemo_automodel"
    assert read_stack("llama 8b with nemo automodel") == "nemo_automodel"


# ---------------------------------------------------------------------------- what a bare number means (state)

ESTIMATED = {"estimate_summary": {"best_card": "a40"}, "seq_len": 2048.0, "budget_usd": 100.0}


@pytest.mark.parametrize("number, slots, slot", [
    ("3000", ESTIMATED, "seq_len"),
    ("150", ESTIMATED, "budget_usd"),
    ("4", {**ESTIMATED, "estimate_summary": {"multi_gpu": {"count": 8}}}, "gpus"),
    ("700", ESTIMATED, None),  # between a length of 2,048 and a budget of 100: asked, not guessed
    ("3000", {"seq_len": 2048.0}, "seq_len"),
])
def test_a_bare_number_goes_to_the_plan_value_it_is_clearly_closest_to(number, slots, slot):
    assert slot_for_bare_number(number, slots) == slot


def test_no_estimate_no_guess():
    assert reread_expected("3000 olursa?", None, {"seq_len": 2048.0}) is None
    assert reread_expected("3000 olursa?", None, ESTIMATED) == "seq_len"


def test_a_what_if_length_while_the_budget_is_asked():
    slots = {"answered_first": True, "seq_len": 2048.0}
    assert reread_expected("peki 4096 olursa?", "budget", slots) is None  # read as it stands: a length
    assert reread_expected("4096", "budget", slots) == "budget"  # a plain answer answers the question


def test_after_how_many_gpus_a_bare_number_is_the_count():
    assert reread_expected("4 olsun o zaman", None, ESTIMATED, previous_text="kaç GPU lazım?") == "gpus"
    assert reread_expected("پس ۴ تا", None, ESTIMATED, previous_text="چند تا GPU لازمه؟") == "gpus"


@pytest.mark.parametrize("text, asks", [
    ("bütçeme uyar mı?", True),
    ("به بودجه‌ام می‌خوره؟", True),
    ("bütçem 100 dolar, uyar mı?", False),
    ("A40 saatlik ne kadar?", False),
])
def test_does_it_fit_my_budget(text, asks):
    assert asks_budget_fit(text) is asks


# ---------------------------------------------------------------------------- a model named over two messages

def test_a_family_named_earlier_and_a_version_now():
    assert family_named_earlier(["ok", "سلام، مدلمون لاماست"]) == "llama"
    assert family_named_earlier(["Qwen kullanıyoruz"]) == "qwen"
    assert version_in("8 milyarlık olan, sürüm 3.1") == "3.1" and version_in("نسخه ۳.۱ همون ۸ بی") == "3.1"
    assert model_with_earlier_family("8 milyarlık, sürüm 3.1", 8, ["Llama kullanıyoruz"]).model_id == "llama-3.1-8b"
    assert model_with_earlier_family("هشت میلیاردی", 8, ["لاما داریم"]).model_id == "llama-3.1-8b"
    assert model_with_earlier_family("8b", 8, ["merhaba"]) is None
    assert family_named_earlier(["8B'yi LoRA ile eğiteceğiz"]) is None  # a case ending, not the Yi family


@pytest.mark.parametrize("query, shown", [
    ("falcon3 10b", "Falcon3 10B"), ("zephyrix 12b", "Zephyrix 12B"), ("stablelm 1.6b", "Stablelm 1.6B"),
    ("اولمو 7b", "اولمو 7B"), ("olmo-2-0425-1b", "OLMo 2 0425 1B"), ("qwen 4.5 8b", "Qwen 4.5 8B"),
])
def test_an_unknown_name_is_shown_as_family_and_size(query, shown):
    assert display_name(query) == shown
