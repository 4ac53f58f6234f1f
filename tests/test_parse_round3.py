"""Issue 21, third round of values: sentences of our own for the failure classes a blind evaluation found."""
import pytest

from bot.advisor.knowledge import load_knowledge
from bot.text.parse import parse_values


@pytest.fixture(scope="module")
def kb():
    return load_knowledge()


@pytest.mark.parametrize("text, examples, avg", [
    ("qwen 7b lora yapacağız, 12000 örnek, 450 tokenlik", 12000, 450),
    ("8000 örnek 300 tokenluk, mistral 7b qlora", 8000, 300),
    ("۸۰۰۰ تا نمونه ۷۰۰ توکنی داریم، لاما ۸ میلیارد با لورا", 8000, 700),
    ("حدود ۲۰۰۰ نمونه ۵۱۲ توکنی", 2000, 512),
    ("we have 6000 examples of 900 tokens for llama 8b", 6000, 900),
    ("3000 örnek x 650 token, phi 4 lora", 3000, 650),
])
def test_examples_with_their_length_in_one_phrase(kb, text, examples, avg):
    parsed = parse_values(text, kb)
    assert (parsed.examples, parsed.avg_tokens, parsed.seq_len) == (examples, avg, None)


@pytest.mark.parametrize("text", ["9000 örnek, 2048 token context", "۹۰۰۰ نمونه، طول توالی ۲۰۴۸ توکن"])
def test_a_length_named_as_context_stays_a_sequence_length(kb, text):
    parsed = parse_values(text, kb)
    assert (parsed.examples, parsed.seq_len, parsed.avg_tokens) == (9000, 2048, None)


@pytest.mark.parametrize("text, cap, vat", [
    ("saatlik KDV dahil en fazla 2,5 dolar öderim. qwen 14b qlora", 2.5, True),
    ("saatte KDV hariç 3 dolar olsun, llama 8b lora", 3.0, False),
    ("ساعتی با احتساب مالیات حداکثر ۲ دلار، لاما ۸ میلیارد کیولورا", 2.0, True),
    ("ساعتی بدون مالیات نهایتا ۱.۵ دلار می‌تونیم بدیم", 1.5, False),
    ("saatliği KDV dahil 1,2 doları aşmasın; gemma 2 9b qlora", 1.2, True),
])
def test_an_hourly_cap_with_vat_before_the_amount_is_no_budget(kb, text, cap, vat):
    parsed = parse_values(text, kb)
    assert (parsed.hourly_cap, parsed.hourly_cap_vat, parsed.budget_usd) == (cap, vat, None)


@pytest.mark.parametrize("text, card", [
    ("dizüstümde RTX 4060 var, 8 GB", "rtx-4060-8gb"),
    ("لپ‌تاپم RTX 4050 داره", "rtx-4050-laptop"),
    ("evde 4070 super var, llama 8b qlora olur mu", "rtx-4070-12gb"),
    ("یه 4090 لپ تاپ دارم", "rtx-4090-laptop"),
    ("bizde kendi A100 80 GB kartımız var, 70b qlora sığar mı", "own-a100-80gb"),
    ("ما خودمون یک H100 داریم، ۷۰ میلیارد با کیولورا جا میشه؟", "own-h100-80gb"),
    ("elimizde A100 40 GB var", "own-a100-40gb"),
])
def test_own_cards_are_read(kb, text, card):
    assert parse_values(text, kb).own_gpu == card


@pytest.mark.parametrize("text", ["A100 var mı? llama 8b qlora", "H100 ile qwen 14b lora ne kadar sürer",
                                  "A100 دارید؟ لاما ۸ میلیارد"])
def test_a_rented_card_asked_about_is_not_the_customers(kb, text):
    assert parse_values(text, kb).own_gpu is None


@pytest.mark.parametrize("text, examples, avg", [
    ("elimde 25 bin soru-cevap çifti var, ortalama 300 token", 25000, 300),
    ("۲۵ هزار جفت پرسش و پاسخ داریم، میانگین ۳۰۰ توکن", 25000, 300),
    ("40 bin soru-cevap çiftimiz var, tanesi 180 token kadar", 40000, 180),
    ("۴۰ هزار جفت سوال و جواب داریم، هر جفت تقریبا ۱۸۰ توکن", 40000, 180),
])
def test_data_only_first_message_keeps_both_values(kb, text, examples, avg):
    parsed = parse_values(text, kb)
    assert (parsed.examples, parsed.avg_tokens, parsed.own_gpu) == (examples, avg, None)


@pytest.mark.parametrize("text, stack", [("Unsloth ile mistral 7b qlora", "unsloth"),
                                         ("با axolotl می‌خوام qwen 7b رو لورا کنم", "axolotl")])
def test_the_stack_named_in_a_request_is_read(kb, text, stack):
    assert parse_values(text, kb).stack == stack
