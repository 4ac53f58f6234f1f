"""Issue 21, fifth round of values: sentences of our own for the failure classes blind set 5 found.

1. Finglish question words, "you", "to be" and pronoun endings ("koja", "shoma", "hastin", "kartetoon") make a
   Latin message Persian; Turkish typed without its letters stays Turkish;
2. an hourly word tied to the budget word ("saatlik bütçem", «بودجه‌ام ساعتی») makes the amount an hourly cap, not
   the job's budget; a count of hours before the hourly word is a duration and leaves the budget a budget;
3. LLaMA-Factory is a stack of its own, with the memory and speed of what it runs on (Transformers + PEFT).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.advisor.advice import AdviceRequest, advise
from bot.advisor.knowledge import load_knowledge
from bot.advisor.stacks import load_stacks
from bot.advisor.throughput import load_speed_model
from bot.text.language import detect_language
from bot.text.parse import parse_values
from bot.text.stack_names import read_stack

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def kb():
    return load_knowledge()


# ------------------------------------------------------------------------------- 1. Finglish or Turkish

@pytest.mark.parametrize("text", [
    "server hatoon koja hast?",
    "gpu hatoon too iran hastan ya kharej?",
    "shoma a100 darin?",
    "emrooz mitunam llama 8b ro shoroo konam?",
    "kartetoon saati chande?",
    "qwen 7b lora, qlora behtare?",
    "pas ba 40 dolar chand saat mishe?",
    "modelhatoon kodome?",
    "h100 koja hast, too turkie?",
    "budjatoon baraye mistral 7b kafie?",
    "datacenteretoon koja hast",
])
def test_finglish_question_words_and_endings_are_persian(text):
    assert detect_language(text) == "fa"


@pytest.mark.parametrize("text", [
    "sunucular turkiyede mi yoksa yurt disinda mi",
    "bu soruyu pas geciyorum, qwen 7b lora",
    "h100 kartiniz var mi, bugun baslayabilir miyim",
    "qlora daha mi iyi yoksa lora mi",
    "kac saat surer llama 8b lora",
    "hastaneden yaziyorum, mistral 7b qlora ne kadar tutar",
])
def test_turkish_without_its_letters_stays_turkish(text):
    assert detect_language(text) == "tr"


# ------------------------------------------------------------------------------- 2. an hourly budget

@pytest.mark.parametrize("text, cap", [
    ("saatlik bütçem en fazla 1,5 dolar", 1.5),
    ("saatlik butcem 4 dolar", 4.0),
    ("saat başı bütçemiz 2 doları aşmasın", 2.0),
    ("bütçem saatlik 3,25 dolar", 3.25),
    ("بودجه‌مون ساعتی حداکثر ۳ دلاره", 3.0),
    ("بودجه ساعتی من ۱٫۵ دلاره", 1.5),
    ("hourly budget of 2.75 dollars", 2.75),
])
def test_an_hourly_budget_is_an_hourly_cap(kb, text, cap):
    parsed = parse_values(text, kb)
    assert (parsed.hourly_cap, parsed.budget_usd) == (cap, None)


@pytest.mark.parametrize("text, budget", [
    ("bütçem 120 dolar", 120.0),
    ("60 saat bütçem 150 dolar", 150.0),  # a count of hours: how long, not a price per hour
    ("۳۰ ساعت، بودجه‌ام ۸۰ دلاره", 80.0),
    ("budget 75 dollars", 75.0),
])
def test_a_budget_without_an_hourly_word_stays_the_budget(kb, text, budget):
    parsed = parse_values(text, kb)
    assert (parsed.budget_usd, parsed.hourly_cap) == (budget, None)


def test_a_budget_and_an_hourly_cap_in_one_message_are_both_read(kb):
    parsed = parse_values("toplam bütçe 300 dolar, saatlik en fazla 2,5 dolar", kb)
    assert (parsed.budget_usd, parsed.hourly_cap) == (300.0, 2.5)


# ------------------------------------------------------------------------------- 3. LLaMA-Factory

@pytest.mark.parametrize("text", [
    "LLaMA-Factory ile aynı rakam mı?",
    "llamafactory kullanıyoruz",
    "llama factory'de değişir mi",
    "با لاما فکتوری هم همینه؟",
    "ما با LlamaFactory کار می‌کنیم",
    "and with llama_factory?",
])
def test_llama_factory_is_named_as_a_stack(text):
    assert read_stack(text) == "llama_factory"


def test_naming_llama_factory_changes_neither_the_model_nor_the_method(kb):
    parsed = parse_values("is it the same with LLaMA-Factory?", kb)
    assert (parsed.stack, parsed.model_id, parsed.method) == ("llama_factory", None, None)
    parsed = parse_values("qwen 7b lora, llama factory ile", kb)
    assert (parsed.stack, parsed.model_id, parsed.method) == ("llama_factory", "qwen2.5-7b", "lora")


def test_llama_factory_has_the_memory_and_speed_of_transformers_peft():
    stacks = load_stacks()
    entry = stacks.get("llama_factory")
    assert entry.name == "LLaMA-Factory" and entry.plan == stacks.get("hf").plan
    assert all(e.source.startswith("https://github.com/hiyouga/LLaMA-Factory") for e in entry.effects)
    model = load_speed_model()
    assert model.stack_dense["llama_factory"] == model.stack_dense["hf"]
    assert model.stack_moe["llama_factory"] == model.stack_moe["hf"]
    for name in ("llama-3.1-8b", "qwen3-30b-a3b"):
        hf, lf = (advise(AdviceRequest(model=name, method="qlora", seq_len=2048, stack=s))
                  for s in ("hf", "llama_factory"))
        assert lf.plan.stack == "llama_factory"
        assert lf.estimate.per_gpu_gib == hf.estimate.per_gpu_gib
        assert lf.recommended_card.card_id == hf.recommended_card.card_id
        assert lf.recommended_card.tokens_per_second == hf.recommended_card.tokens_per_second


def test_the_cli_takes_llama_factory():
    out = subprocess.run([sys.executable, "-m", "bot.cli", "estimate", "--model", "llama-3.1-8b", "--method", "lora",
                          "--seq-len", "2048", "--stack", "llama_factory", "--json"], capture_output=True, text=True,
                         cwd=REPO, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["plan"]["stack"] == "llama_factory"
