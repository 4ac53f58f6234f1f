"""End-to-end (REST, real servers): the value failure classes of the third blind run (issue 21), each in Persian and
Turkish with sentences written for these tests (never the blind set's):
1. a training stack named in the request is named in the answer, and "what if I use <stack>?" after an estimate
   re-estimates with that stack instead of repeating the previous reply;
2. "N examples of M tokens" sets examples and avg_tokens, alone or inside a whole request, and a whole request with
   model, method, examples, average length and epochs gets an estimate;
3. an hourly cap with VAT said before the amount is an hourly cap, not a budget;
4. a laptop 40-series card and a catalogue card the customer owns ("bizde A100") get the own-card answer;
5. a first message with only data keeps examples and average length and asks for the model.
"""
from __future__ import annotations

import pytest

from bot.advisor.stacks import load_stacks
from bot.text.stack_names import read_stack
from tests.e2e.helpers import assert_language, joined, names_a_card, tracker_slots

pytestmark = pytest.mark.e2e
STACKS = load_stacks()


# ------------------------------------------------------------------------------- 1. the stack named

@pytest.mark.parametrize("lang,message", [
    ("tr", "Unsloth kullanarak mistral 7b'yi qlora ile eğitmek istiyoruz, 2048 token"),
    ("tr", "torchtune ile qwen2.5 7b lora yapacağız, bütçe 50 dolar"),
    ("tr", "Axolotl ile llama 3.1 8b'ye LoRA atacağız"),
    ("fa", "با Unsloth می‌خوام لاما ۸ میلیارد رو با کیولورا فاین‌تیون کنم"),
    ("fa", "ما با NeMo کار می‌کنیم، qwen 7b با لورا و طول ۲۰۴۸"),
    ("fa", "با axolotl مدل mistral 7b رو qlora می‌کنیم، بودجه ۴۰ دلار"),
    ("tr", "NeMo ile qwen2.5 7b'yi lora ile eğitmek istiyoruz, 4096 token, bütçe 80 dolar"),
    ("fa", "torchtune داریم، لاما ۸ میلیارد رو لورا می‌زنیم با طول ۱۰۲۴ و بودجه ۵۰ دلار"),
])
def test_the_stack_named_in_the_request_is_named_in_the_answer(conversation, lang, message):
    replies = conversation().say(message)
    assert_language(replies, lang)
    text = joined(replies)
    stack = STACKS.get(read_stack(message))
    assert names_a_card(text) and stack.name in text, text


@pytest.mark.parametrize("lang,first,what_if", [
    ("tr", "llama 3.1 8b qlora ile, 2048 token, bütçemiz 60 dolar", "peki Unsloth kullanırsak ne olur?"),
    ("fa", "لاما ۸ میلیارد با کیولورا، طول ۲۰۴۸، بودجه ۶۰ دلار", "اگه با Unsloth کار کنیم چی؟"),
    ("tr", "qwen2.5 7b lora, 1024 token, bütçe 40 dolar", "ya unsloth ile yapsak?"),
    ("fa", "mistral 7b رو با لورا، ۱۰۲۴ توکن، بودجه ۴۰ دلار", "اگه از آنسلوث استفاده کنیم چی میشه؟"),
])
def test_a_stack_what_if_re_estimates_with_that_stack(conversation, lang, first, what_if):
    c = conversation()
    before = joined(c.say(first))
    replies = c.say(what_if)
    assert_language(replies, lang)
    text = joined(replies)
    assert text != before and STACKS.get("unsloth").name in text and names_a_card(text), text
    assert tracker_slots(c).get("stack") == "unsloth"


# ------------------------------------------------------------------------------- 2. examples of M tokens

@pytest.mark.parametrize("lang,message,examples,avg", [
    ("tr", "elimizde 7000 örnek var, 400 tokenlik", 7000, 400),
    ("tr", "qwen2.5 7b qlora, 9000 örnek, her biri ortalama 350 token, 3 epoch", 9000, 350),
    ("fa", "۶۰۰۰ تا نمونه ۸۰۰ توکنی داریم", 6000, 800),
    ("fa", "مدل لاما ۸ میلیارد با لورا، ۴۰۰۰ نمونه که هر کدوم حدود ۶۰۰ توکنه، ۲ ایپاک", 4000, 600),
])
def test_examples_of_m_tokens_fill_both_slots(conversation, lang, message, examples, avg):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    slots = tracker_slots(c)
    assert (slots.get("examples"), slots.get("avg_tokens")) == (examples, avg), slots


@pytest.mark.parametrize("lang,message", [
    ("fa", "می‌خوایم qwen2.5 7b رو با کیولورا آموزش بدیم، ۱۲۰۰۰ نمونه داریم با میانگین ۴۵۰ توکن، سه ایپاک"),
    ("tr", "mistral 7b'yi lora ile eğiteceğiz; 15 bin örnek, ortalama 500 token, 2 epoch"),
    ("fa", "سلام، لاما ۳.۱ ۸ میلیارد رو می‌خوایم لورا کنیم. ۸۰۰۰ تا نمونه ۵۱۲ توکنی داریم و ۳ ایپاک میزنیم"),
    ("tr", "gemma 2 9b qlora; 6000 örnek, 700 tokenlik, 4 epoch olacak"),
])
def test_a_whole_request_with_volume_and_epochs_gets_an_estimate(conversation, lang, message):
    replies = conversation().say(message)
    assert_language(replies, lang)
    assert names_a_card(joined(replies)), joined(replies)


# ------------------------------------------------------------------------------- 3. hourly cap with VAT first

@pytest.mark.parametrize("lang,message,cap", [
    ("tr", "saatlik KDV dahil en fazla 2 dolar ödeyebiliriz. mistral 7b qlora", 2.0),
    ("fa", "ساعتی با احتساب مالیات حداکثر ۱.۵ دلار میدیم. لاما ۸ میلیارد کیولورا", 1.5),
])
def test_an_hourly_cap_with_vat_first_is_no_budget(conversation, lang, message, cap):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    slots = tracker_slots(c)
    assert slots.get("hourly_cap") == cap and slots.get("budget_usd") != cap, slots


# ------------------------------------------------------------------------------- 4. own cards

@pytest.mark.parametrize("lang,message,card", [
    ("tr", "dizüstü bilgisayarımda RTX 4060 var, 8 GB; llama 8b qlora sığar mı?", "RTX 4060"),
    ("fa", "لپ‌تاپم RTX 4060 هشت گیگ داره، لاما ۸ میلیارد با کیولورا جا میشه؟", "RTX 4060"),
    ("tr", "bizde kendi A100 80 GB kartımız var, llama 70b qlora sığar mı?", "A100"),
    ("fa", "ما خودمون یه A100 هشتاد گیگ داریم، لاما ۷۰ میلیارد با کیولورا روش جا میشه؟", "A100"),
])
def test_own_cards_get_the_own_card_answer(conversation, lang, message, card):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert tracker_slots(c).get("own_gpu") and card in joined(replies), joined(replies)


# ------------------------------------------------------------------------------- 5. data only, first message

@pytest.mark.parametrize("lang,message,examples,avg", [
    ("tr", "yaklaşık 20 bin soru-cevap çiftimiz var, ortalama 200 token", 20000, 200),
    ("fa", "حدود ۲۰ هزار جفت سوال و جواب داریم، میانگین ۲۰۰ توکن", 20000, 200),
])
def test_a_data_only_first_message_keeps_the_volume_and_asks_for_the_model(conversation, lang, message, examples,
                                                                          avg):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    slots = tracker_slots(c)
    assert (slots.get("examples"), slots.get("avg_tokens"), slots.get("own_gpu")) == (examples, avg, None), slots
    assert slots.get("requested_slot") in ("model_size_b", "model") or "model" in joined(replies).lower(), replies
