"""Round 9 of values: sentences of our own (never the blind set's) for the failure classes of the brief.

1. "key: value" fields, one a line or separated by "|" or a spaced "/": each value goes to its key, a colon between
   a keyword and its number does not break the keyword, "15.000" after a count keyword is fifteen thousand;
2. a method said not to be wanted is never the one kept;
3. "will my money be enough?" with the job and no amount (bot.text.enough.asks_money_enough);
4. the method picked by what matters ("hangisi ucuzsa o" -> QLoRA, quality -> LoRA).
"""
from __future__ import annotations

import pytest

from bot.advisor.knowledge import load_knowledge
from bot.text.enough import asks_money_enough, method_by_preference
from bot.text.parse import parse_values


@pytest.fixture(scope="module")
def kb():
    return load_knowledge()


def _found(text, kb, expected=None):
    return parse_values(text, kb=kb, expected=expected).found()


@pytest.mark.parametrize("text,expected", [
    ("model: Qwen2.5-14B | yöntem: QLoRA | bağlam: 8192 | örnek sayısı: 20.000 | ortalama token: 900",
     dict(model_id="qwen2.5-14b", method="qlora", seq_len=8192, examples=20000, avg_tokens=900)),
    ("model: Llama 3.1 8B\nyontem: LoRA\nseq: 2048\nornek: 12.500\nort. token: 450",
     dict(model_id="llama-3.1-8b", method="lora", seq_len=2048, examples=12500, avg_tokens=450)),
    ("مدل: Qwen2.5-14B / روش: کیولورا / طول توالی: ۸۱۹۲ / تعداد نمونه: ۲۰۰۰۰ / میانگین ۹۰۰ توکن",
     dict(model_id="qwen2.5-14b", method="qlora", seq_len=8192, examples=20000, avg_tokens=900)),
    ("مدل: Llama 3.1 8B\nروش: لورا\nبودجه: ۸۰ دلار", dict(model_id="llama-3.1-8b", method="lora", budget_usd=80)),
    ("model: mistral 7b / ravesh: qlora / budget: 60", dict(model_id="mistral-7b", method="qlora", budget_usd=60)),
    ("epoch: 2", dict(epochs=2)),
    ("bütçe: 75$", dict(budget_usd=75)),
    ("butce: 120", dict(budget_usd=120)),
    ("بودجه: ۴۵", dict(budget_usd=45)),
])
def test_key_value_fields_go_to_their_keys(kb, text, expected):
    found = _found(text, kb)
    for key, value in expected.items():
        assert found.get(key) == value, (key, found)


@pytest.mark.parametrize("text,method", [
    ("qwen 7b, kamil fine-tune yapalım, QLoRA değil", "full"),
    ("llama 8b tam ince ayar olsun, lora istemiyoruz", "full"),
    ("mistral 7b lora olmasın, qlora olsun", "qlora"),
    ("llama 8b ro کامل فاین‌تیون کنیم، نه لورا", "full"),
    ("مدل لاما ۸ میلیارد، لورا نمی‌خوام، فول فاین تیون", "full"),
    ("qwen 7b, qlora nemikham, lora", "lora"),
    ("not qlora, lora please, llama 8b", "lora"),
])
def test_a_negated_method_is_never_kept(kb, text, method):
    assert _found(text, kb).get("method") == method


@pytest.mark.parametrize("text", ["LoRA olmasın", "qlora istemiyorum", "نه لورا"])
def test_only_a_negation_chooses_no_method(kb, text):
    assert _found(text, kb).get("method") is None


def test_a_question_with_degil_is_no_negation(kb):
    assert _found("llama 8b, LoRA değil mi daha iyi?", kb).get("method") == "lora"


@pytest.mark.parametrize("text,asks", [
    ("پولم کفاف میده؟ لاما ۸ میلیارد با کیولورا", True),
    ("Bütçem yeter mi acaba? Llama 3.1 8B, LoRA", True),
    ("param yetecek mi, qwen 7b qlora", True),
    ("poolam mirese? mistral 7b qlora", True),
    ("bütçem 40 dolar, yeter mi?", False),
    ("llama 8b qlora", False),
])
def test_money_enough_without_an_amount(text, asks):
    assert asks_money_enough(text) is asks


@pytest.mark.parametrize("text,method", [
    ("hangisi daha ucuzsa onu seçelim", "qlora"), ("هر کدوم ارزون‌تر باشه", "qlora"), ("har kodoom arzoontare", "qlora"),
    ("the cheapest one", "qlora"), ("kalitesi en iyi olan", "lora"), ("هر کدوم کیفیت بهتری داره", "lora"),
    ("bilmiyorum", None),
])
def test_method_by_preference(text, method):
    assert method_by_preference(text) == method
