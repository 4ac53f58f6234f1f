"""End-to-end (REST, real servers): the value, model-name and what-if failure classes the second blind run showed
(2026-12-03), each in both languages with sentences written for these tests (never the blind set's):
- a bare number after an estimate is placed by the plan's state (a length near the length, a GPU count after "how
  many GPUs?"), and a raised hourly cap is applied;
- model given, then method, then a length in its own message: every such reply carries the card (answer first);
- a job no single card holds: the first answer names the multi-GPU plan (card, count, GB per GPU) and offers the
  quote or a person;
- model names: Granite, OLMo 2 (also as a Hub id, offline), Mistral NeMo, SmolLM2, Phi-3.5-mini as a bare answer,
  a version given after the family, a glued Persian method, an unknown family shown as typed;
- "would QLoRA be cheaper?" after an estimate compares the two methods;
- "does it fit my budget?" with no budget known asks for the budget; "active 3B" keeps the MoE model; QA pairs are
  examples.
"""
from __future__ import annotations

import re

import pytest

from bot.advisor.knowledge import load_knowledge
from tests.e2e.helpers import assert_language, joined, payloads, tracker_slots

pytestmark = pytest.mark.e2e

KB = load_knowledge()
CARDS = [card.name for card in KB.gpus]
GB_FIGURE = re.compile(r"\d+(?:[.,]\d+)?\s*GB")
QUOTE_PAYLOADS = ("/request_quote", "/request_human")


def names_a_card(text: str) -> bool:
    return bool(GB_FIGURE.search(text)) and any(name in text for name in CARDS)


def offers_quote(conversation, replies) -> bool:
    return any(p.startswith(QUOTE_PAYLOADS) for p in payloads(replies)) or bool(
        tracker_slots(conversation).get("pending_offer"))


# ------------------------------------------------------------------------------- 1. a bare value as a what-if

@pytest.mark.parametrize("lang,first,what_if,seq_len", [
    ("fa", "gemma 2 9b رو با لورا آموزش می‌دیم، طول توالی ۲۰۴۸ و بودجه ۶۰ دلار", "خب اگه ۳۰۰۰ بشه چی؟", 3000),
    ("tr", "phi 4 qlora ile, 2048 token, bütçemiz 80 dolar", "peki 2500 olsa ne değişir?", 2500),
    ("fa", "qwen2.5 7b با qlora، ۱۰۲۴ توکن، بودجه ۴۰ دلار", "agar 1500 bashe chi?", 1500),
])
def test_a_bare_number_near_the_length_is_the_new_length(conversation, lang, first, what_if, seq_len):
    c = conversation()
    c.say(first)
    replies = c.say(what_if)
    assert_language(replies, lang)
    slots = tracker_slots(c)
    assert slots["seq_len"] == seq_len and slots["budget_usd"] not in (None, float(seq_len)), slots
    assert names_a_card(joined(replies)), joined(replies)


@pytest.mark.parametrize("lang,first,what_if", [
    ("fa", "llama 3.1 8b رو با qlora می‌خوام آموزش بدم", "اگه ۸۱۹۲ باشه چی میشه؟"),
    ("tr", "mistral 7b'yi lora ile eğiteceğiz", "peki 4096 olursa?"),
])
def test_a_what_if_length_while_the_budget_is_asked_is_a_length(conversation, lang, first, what_if):
    c = conversation()
    c.say(first)  # the first answer, then the length question
    c.say("2048")  # the card again, then the budget question
    replies = c.say(what_if)
    assert_language(replies, lang)
    slots = tracker_slots(c)
    assert slots["seq_len"] in (4096, 8192) and slots.get("budget_usd") is None, slots
    assert names_a_card(joined(replies)), joined(replies)


@pytest.mark.parametrize("lang,first,raise_cap,card", [
    ("fa", "mistral 7b با لورا، طول توالی ۲۰۴۸، بودجه ۱۰۰ دلار",
     "اگه سقف قیمت ساعتی رو ببرم روی ۳ دلار، پیشنهادت عوض میشه؟", "A100"),
    ("tr", "mistral 7b lora, 2048 token, bütçe 100 dolar",
     "saatlik tavanı 3 dolara yükseltirsem öneriniz değişir mi?", "A100"),
])
def test_a_raised_hourly_cap_is_applied(conversation, lang, first, raise_cap, card):
    c = conversation()
    c.say(first)
    replies = c.say(raise_cap)
    assert_language(replies, lang)
    slots = tracker_slots(c)
    assert slots["hourly_cap"] == 3.0 and slots["budget_usd"] == 100.0, slots
    assert card in joined(replies) and names_a_card(joined(replies)), joined(replies)


@pytest.mark.parametrize("lang,first,ask,answer", [
    ("fa", "Llama 3.1 70B رو full fine-tune می‌کنیم، ۲۰۴۸ توکن، بودجه محدودیتی نداره",
     "برای این کار چند تا GPU لازمه؟", "پس ۴ تا"),
    ("tr", "Llama 3.1 70B tam ince ayar, 2048 token, bütçe sınırı yok", "bunun için kaç GPU lazım?", "4 olsun o zaman"),
])
def test_a_bare_number_after_the_gpu_count_question_is_the_count(conversation, lang, first, ask, answer):
    c = conversation()
    c.say(first)
    c.say(ask)
    replies = c.say(answer)
    assert_language(replies, lang)
    assert tracker_slots(c)["gpus"] == 4


# ------------------------------------------------------------------------------- 2. answer first, every time

@pytest.mark.parametrize("lang,turns", [
    ("fa", ["می‌خوام qwen2.5 14b رو فاین‌تیون کنم", "با لورا", "طول توالی ۴۰۹۶"]),
    ("tr", ["gemma 2 9b eğitmek istiyorum", "qlora", "1024 token"]),
    ("fa", ["mistral 7b dare, mikham fine tune konam", "ba qlora", "طول توالی ۵۱۲"]),
])
def test_a_length_given_after_the_first_answer_brings_the_card_again(conversation, lang, turns):
    c = conversation()
    for turn in turns[:-1]:
        c.say(turn)
    replies = c.say(turns[-1])
    assert_language(replies, lang)
    assert names_a_card(joined(replies)), joined(replies)
    slots = tracker_slots(c)
    assert slots["requested_slot"] == "budget" and slots["seq_len"] is not None


# ------------------------------------------------------------------------------- 3. several GPUs: plan and quote

@pytest.mark.parametrize("lang,message,count_at_least", [
    ("fa", "Qwen3-235B-A22B رو می‌خوایم کامل (full fine-tuning) آموزش بدیم", 9),
    ("tr", "Llama 4 Maverick'i tam ince ayar (full fine-tuning) ile eğitmek istiyoruz", 9),
    ("fa", "llama 3.1 405b رو با qlora آموزش بدیم چی لازمه؟", 2),
    ("tr", "Llama 3.1 70B full fine-tuning yapacağız", 2),
    ("fa", "qwen2.5 32b full fine tune, بودجه ۲۰ دلار", 2),
    ("tr", "Qwen2.5 32B tam eğitim, bütçemiz sadece 15 dolar", 2),
])
def test_a_job_for_several_gpus_names_the_plan_and_offers_a_quote_at_once(conversation, lang, message,
                                                                           count_at_least):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    text = joined(replies)
    plan = re.search(r"(\d+) × (" + "|".join(map(re.escape, CARDS)) + r")", text)
    assert plan and int(plan.group(1)) >= count_at_least, text
    assert GB_FIGURE.search(text), text
    assert offers_quote(c, replies), text


# ------------------------------------------------------------------------------- 4. model names

@pytest.mark.parametrize("lang,message,model_id,display", [
    ("fa", "مدل IBM Granite 3.1 8B Instruct رو با qlora آموزش بدیم", "granite-3.1-8b", "Granite 3.1 8B"),
    ("tr", "granite 3.3 2b instruct modelini lora ile eğiteceğiz", "granite-3.3-2b", "Granite 3.3 2B"),
    ("fa", "allenai/OLMo-2-1124-13B-Instruct رو با لورا", "olmo-2-13b", "OLMo 2 13B"),
    ("tr", "OLMo 2 7B için qlora yapmak istiyoruz", "olmo-2-7b", "OLMo 2 7B"),
    ("fa", "Mistral Nemo 12B رو با qlora فاین‌تیون می‌کنیم", "mistral-nemo-12b", "Mistral NeMo 12B"),
    ("tr", "mistral-nemo ile lora yapacağız", "mistral-nemo-12b", "Mistral NeMo 12B"),
    ("fa", "SmolLM2 360M رو full fine tune کنیم", "smollm2-360m", "SmolLM2 360M"),
    ("tr", "SmolLM2 1.7B ile tam ince ayar", "smollm2-1.7b", "SmolLM2 1.7B"),
    ("fa", "کوئن ۲.۵ ۳ بی بالورا", "qwen2.5-3b", "Qwen2.5 3B"),
    ("tr", "Qwen2.5 32B'yi LoRA ile eğitmek için bir sunucu sipariş edeceğiz, hangi kartı alalım?", "qwen2.5-32b",
     "Qwen2.5 32B"),
    ("fa", "برای آموزش Qwen2.5 32B با لورا می‌خوایم سرور سفارش بدیم، کدوم کارت؟", "qwen2.5-32b", "Qwen2.5 32B"),
    ("fa", "Qwen3-30B-A3B که ۳ میلیاردش فعاله رو با qlora", "qwen3-30b-a3b", "Qwen3 30B-A3B"),
    ("tr", "Qwen3-30B-A3B, 3B aktif parametreli, kulora ile", "qwen3-30b-a3b", "Qwen3 30B-A3B"),
])
def test_model_names_are_read_and_shown(conversation, lang, message, model_id, display):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert tracker_slots(c)["model_id"] == model_id
    assert display in joined(replies), joined(replies)


@pytest.mark.parametrize("lang,opening", [
    ("fa", "می‌خوام یه مدل رو فاین‌تیون کنم"),
    ("tr", "bir modele ince ayar yapmak istiyorum"),
])
def test_phi_3_5_mini_as_the_bare_answer_to_the_model_question(conversation, lang, opening):
    c = conversation()
    c.say(opening)
    replies = c.say("Phi-3.5-mini")
    assert_language(replies, lang)
    assert tracker_slots(c)["model_id"] == "phi-3.5-mini"
    assert "Phi-3.5 mini" in joined(replies), joined(replies)


@pytest.mark.parametrize("lang,family,size_and_version", [
    ("fa", "سلام، مدلی که داریم لاماست", "همون هشت میلیاردیه، نسخه ۳.۱"),
    ("tr", "Llama kullanıyoruz", "8 milyarlık olan, sürüm 3.1"),
])
def test_a_version_given_after_the_family(conversation, lang, family, size_and_version):
    c = conversation()
    c.say(family)
    replies = c.say(size_and_version)
    assert_language(replies, lang)
    assert tracker_slots(c)["model_id"] == "llama-3.1-8b"
    assert "Llama 3.1 8B" in joined(replies), joined(replies)


@pytest.mark.parametrize("lang,message,shown", [
    ("fa", "Falcon3 10B رو با لورا آموزش بدیم", "Falcon3 10B"),
    ("tr", "zephyrix 12b modelini lora ile eğiteceğiz", "Zephyrix 12B"),
    # a Hub id with no preset, no Hub reachable from the tests: its family and size, never "a 1B model"
    ("tr", "allenai/OLMo-2-0425-1B-Instruct modelini qlora ile eğiteceğiz", "OLMo 2 0425 1B"),
    ("fa", "allenai/OLMo-2-0425-1B-Instruct رو با لورا", "OLMo 2 0425 1B"),
])
def test_an_unknown_family_and_size_is_shown_as_named(conversation, lang, message, shown):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    text = joined(replies)
    assert shown in text and names_a_card(text), text


# ------------------------------------------------------------------------------- 5. a one-method what-if

@pytest.mark.parametrize("lang,first,what_if", [
    ("fa", "mistral 7b با لورا، طول توالی ۲۰۴۸، بودجه ۱۰۰ دلار", "با QLoRA ارزون‌تر در نمیاد؟"),
    ("tr", "mistral 7b lora, 2048 token, bütçe 100 dolar", "QLoRA ile daha da ucuza gelmez mi?"),
])
def test_would_another_method_be_cheaper_compares_it_with_the_current_one(conversation, lang, first, what_if):
    c = conversation()
    c.say(first)
    replies = c.say(what_if)
    assert_language(replies, lang)
    text = joined(replies)
    assert "QLoRA" in text and "LoRA" in text.replace("QLoRA", "") and names_a_card(text), text
    assert KB.text("compare_not_understood", lang) not in text


# ------------------------------------------------------------------------------- earlier rounds, still open

@pytest.mark.parametrize("lang,first,ask", [
    ("fa", "qwen2.5 7b با qlora، طول توالی ۲۰۴۸", "به بودجه‌ام می‌خوره؟"),
    ("tr", "qwen2.5 7b qlora 2048 token", "bu bütçeme uyar mı?"),
])
def test_does_it_fit_my_budget_without_a_budget_asks_for_it(conversation, lang, first, ask):
    c = conversation()
    c.say(first)
    replies = c.say(ask)
    assert_language(replies, lang)
    assert budget_request_text(lang) in joined(replies), joined(replies)
    assert tracker_slots(c)["requested_slot"] == "budget"


def budget_request_text(lang: str) -> str:
    from actions.dialogue_text import text

    return text("budget_fit_needs_budget", lang)


@pytest.mark.parametrize("lang,message,examples", [
    ("fa", "llama 3.1 8b با لورا، ۵۰۰۰ جفت سوال و جواب داریم", 5000),
    ("tr", "llama 3.1 8b lora, 4000 soru-cevap çiftimiz var", 4000),
])
def test_question_answer_pairs_are_examples(conversation, lang, message, examples):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert tracker_slots(c)["examples"] == examples
