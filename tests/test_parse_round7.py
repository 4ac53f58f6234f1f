"""Round 7 of values: sentences of our own for the failure classes of the brief (never the blind set's).

1. A GPU count in Finglish ("4 ta gpu", "se ta kart", "ba 2 ta A100") and colloquial Persian and Turkish is the
   count of GPUs, with the model and the method of the same message; a number with a counter and no unit is never
   a budget, a size or a sequence length;
2. Qwen3's Mixture-of-Experts name in Persian letters («کوئن ۳ ۳۰ بی ای ۳ بی») or with spaces, hyphens and slips
   ("qwen3 30b-a-3b", "kwen3 30b a3b") is the MoE preset, as the catalogue spelling is;
3. a token count written before the count of examples ("400 tokenlik 12 bin örnek", «نمونه‌های ۶۰۰ توکنی دارم، ۸
   هزار تا») is each example's length (avg_tokens), and leaves a sequence length said in the message alone.
"""
from __future__ import annotations

import pytest

from bot.advisor.architecture import active_params
from bot.advisor.knowledge import load_knowledge
from bot.text.parse import parse_values


@pytest.fixture(scope="module")
def kb():
    return load_knowledge()


def _found(text, kb, expected=None):
    return parse_values(text, kb=kb, expected=expected).found()


# ------------------------------------------------------------------------------- 1. GPU counts

@pytest.mark.parametrize("text,model,method,gpus", [
    ("qwen 32b qlora, 4 ta gpu mikhaym", "qwen3-32b", "qlora", 4),
    ("ba 2 ta A100 mikham qwen 14b ro lora konam", "qwen3-14b", "lora", 2),
    ("llama 70b qlora, se ta kart darim", "llama-3.3-70b", "qlora", 3),
    ("mistral 7b ro ba 8 ta H100 full finetune konim", "mistral-7b", "full", 8),
    ("mistral 7b lora 8ta h100", "mistral-7b", "lora", 8),
    ("gemma 27b lora ba do ta kart", "gemma-3-27b", "lora", 2),
    ("qwen 7b lora chahar ta gpu lazem darim", "qwen2.5-7b", "lora", 4),
    ("llama 70b qlora ba seta kart", "llama-3.3-70b", "qlora", 3),
    ("با ۴ تا جی‌پی‌یو می‌خوایم لاما ۷۰ میلیارد رو کیولورا کنیم", "llama-3.3-70b", "qlora", 4),
    ("دو تا کارت داریم، کوئن ۱۴ میلیارد با لورا", "qwen3-14b", "lora", 2),
    ("میسترال ۷ میلیارد فول فاین تیون با هشت تا H100", "mistral-7b", "full", 8),
    ("llama 70b qlora, 4 GPU'lu bir makinede", "llama-3.3-70b", "qlora", 4),
    ("llama 3.1 8b lora ile 2 adet A100 kullanacağız", "llama-3.1-8b", "lora", 2),
    ("qwen 32b qlora dört kartla eğiteceğiz", "qwen3-32b", "qlora", 4),
    ("qwen 14b lora yapacağız, iki tane H100 ile", "qwen3-14b", "lora", 2),
])
def test_a_colloquial_gpu_count_comes_with_the_model_and_method(kb, text, model, method, gpus):
    found = _found(text, kb)
    assert (found.get("model_id"), found.get("method"), found.get("gpus")) == (model, method, gpus), found
    assert "budget_usd" not in found and "seq_len" not in found, found


@pytest.mark.parametrize("text", ["llama 8 ta gpu qlora", "لاما ۸ تا کارت با کیولورا", "qwen 14 ta kart lora"])
def test_a_counted_number_after_a_family_word_is_no_size(kb, text):
    found = _found(text, kb)
    assert "model_size_b" not in found and "model_id" not in found, found


@pytest.mark.parametrize("expected", ["budget_usd", "model_size_b", "seq_len"])
@pytest.mark.parametrize("text", ["4 ta", "۴ تا", "4 tane", "دوتا", "se ta", "8 ta mikham", "5 hezar ta"])
def test_a_counted_number_is_never_a_budget_a_size_or_a_length(kb, text, expected):
    parsed = parse_values(text, kb=kb, expected=expected)
    assert parsed.found() == {} and parsed.ambiguous, parsed


@pytest.mark.parametrize("text,gpus", [("4 ta", 4), ("se ta", 3), ("۲ تا", 2)])
def test_a_counted_number_answers_the_gpu_question(kb, text, gpus):
    assert _found(text, kb, expected="gpus") == {"gpus": gpus}


@pytest.mark.parametrize("text,budget", [("budjam 50 ta 100 dolare", 100.0), ("50 dolar", 50.0)])
def test_a_range_with_ta_and_a_plain_budget_stay_budgets(kb, text, budget):
    assert _found(text, kb).get("budget_usd") == budget


@pytest.mark.parametrize("text", ["qwen 7b lora 1 hafta sürer", "eğitim 2 hafta ta sürebilir", "do it in 2 weeks"])
def test_turkish_and_english_words_are_no_finglish_counts(kb, text):
    # "hafta" is a Turkish week, not Finglish "haft ta" (seven of), and "do" alone is no number
    assert "gpus" not in _found(text, kb)


# ------------------------------------------------------------------------------- 2. Qwen3 MoE names

@pytest.mark.parametrize("text,model", [
    ("کوئن ۳ ۳۰ بی ای ۳ بی کیولورا", "qwen3-30b-a3b"),
    ("کوین۳-۳۰بی-ای۳بی", "qwen3-30b-a3b"),
    ("کوئن۳ ۳۰بی آ۳بی رو با لورا", "qwen3-30b-a3b"),
    ("کوئن ۳ ۳۰ میلیارد ای ۳ میلیارد", "qwen3-30b-a3b"),
    ("کویین ۳ ۳۰ بی ای ۳ بی", "qwen3-30b-a3b"),
    ("qwen3 30b-a-3b qlora", "qwen3-30b-a3b"),
    ("qwen 3 30ba3b qlora", "qwen3-30b-a3b"),
    ("qwen3 30b a 3b qlora", "qwen3-30b-a3b"),
    ("kwen3 30b-a3b qlora", "qwen3-30b-a3b"),
    ("qween 3 30b a3b", "qwen3-30b-a3b"),
    ("کوئن ۳.۵ ۳۵ بی ای ۳ بی با لورا", "qwen3.5-35b-a3b"),
])
def test_a_qwen_moe_name_however_written_is_the_moe_preset(kb, text, model):
    found = _found(text, kb)
    assert (found.get("model_id"), found.get("model_size_b")) == (model, kb.model(model).size_b), found


def test_the_moe_preset_carries_total_and_active_parameters(kb):
    found = _found("کوئن ۳ ۳۰ بی ای ۳ بی کیولورا", kb)
    arch = kb.model(found["model_id"]).arch
    assert arch.moe is not None and active_params(arch) < arch.params / 5, arch


def test_an_active_size_needs_a_size_before_it(kb):
    # "ای" alone is a Persian word; only right after a size is it the letter A of "a3b"
    assert _found("نمونه‌ای ۳ بی", kb).get("model_id") is None
    assert _found("llama 70b ba 4 ta gpu", kb).get("model_id") == "llama-3.3-70b"


# ------------------------------------------------------------------------------- 3. length before count

@pytest.mark.parametrize("text,avg,examples", [
    ("نمونه‌های ۶۰۰ توکنی دارم، ۸ هزار تا", 600, 8000),
    ("۸۰۰ توکنی، ۶ هزار تا نمونه", 800, 6000),
    ("400 tokenlik 12 bin örnek", 400, 12000),
    ("512 token'lık 3000 kayıt", 512, 3000),
    ("512 token’lık 3000 kayıt", 512, 3000),
    ("600 tokenlik örneklerden 8 bin tane var", 600, 8000),
    ("har nemune 300 token, 5000 ta", 300, 5000),
    ("300 token 5000 ta nemune darim", 300, 5000),
    ("400 token 12 bin örnek", 400, 12000),
])
def test_a_length_before_the_count_is_each_examples_length(kb, text, avg, examples):
    found = _found(text, kb)
    assert (found.get("avg_tokens"), found.get("examples"), found.get("seq_len")) == (avg, examples, None), found


@pytest.mark.parametrize("text,seq_len,avg,examples", [
    ("llama 8b lora 4096 token context, 400 tokenlik 12 bin örnek", 4096, 400, 12000),
    ("llama 8b qlora 1024 token'lık 6 bin örnek, context 4096", 4096, 1024, 6000),
    ("لاما ۸ میلیارد لورا، کانتکست ۴۰۹۶، نمونه‌های ۵۰۰ توکنی دارم، ۹ هزار تا", 4096, 500, 9000),
])
def test_each_examples_length_leaves_the_sequence_length_alone(kb, text, seq_len, avg, examples):
    found = _found(text, kb)
    assert (found.get("seq_len"), found.get("avg_tokens"), found.get("examples")) == (seq_len, avg, examples), found


@pytest.mark.parametrize("text", [
    "2048 token, 5000 örnek",
    "2048 token 12 bin örnek",
    "en fazla 2048 token 5000 örnek",
    "2048 token context, 5000 örnek",
])
def test_a_sequence_length_before_the_count_stays_a_sequence_length(kb, text):
    found = _found(text, kb)
    assert (found.get("seq_len"), found.get("avg_tokens")) == (2048, None), found


def test_a_scale_makes_the_count_a_total(kb):
    assert _found("2 milyon token 5000 örnek", kb).get("total_tokens") == 2_000_000


def test_other_apostrophe_endings_are_still_dropped(kb):
    assert _found("4 GPU'lu, 40 GB'lık kart", kb) == {"gpus": 4}
