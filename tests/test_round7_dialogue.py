"""Server-free checks of the round 7 dialogue pieces (tests/e2e/test_blind_round7_dialogue.py has the conversations):
records pasted into the chat, an order or a quote carrying the whole job, the topic words, a named configuration."""
from __future__ import annotations

import pytest

from bot.dataset.formats import Example, Problem, pasted_records
from bot.text.parsed import parsed_message
from bot.text.topics import names_topic


@pytest.mark.parametrize("text,expected", [
    ('{"prompt": "p", "completion": "c"} bu biçim doğru mu?', [("prompt_completion", Example)]),
    ('{"prompt": "a", "completion": "b"} {"prompt": "c", "completion": ""} ok?',  # JSONL joined into one line
     [("prompt_completion", Example), ("prompt_completion", Problem)]),
    ('{\n "instruction": "x",\n "output": "y"\n}\nدرسته؟', [("alpaca", Example)]),
    ('نمونه: {"messages": [{"role": "user", "content": "س"}, {"role": "assistant", "content": "ج"}]} خوبه؟',
     [("chat", Example)]),
    ('{"hidden_size": 4096, "num_hidden_layers": 32}', []),  # a config.json is no training data
    ('{"a": 1}', []),
    ("{{{{ {\"prompt\": ", []),
    ('{"a": ' + "[" * 5000 + "}", []),  # nested past the JSON parser's depth
    ("", []),
])
def test_pasted_records_are_read_with_their_format(text, expected):
    found = pasted_records(text)
    assert [(fmt, type(parsed)) for fmt, parsed in found] == expected


def test_pasted_records_try_a_bounded_number_of_objects():
    text = "{" * 10_000 + '{"prompt": "a", "completion": "b"}'
    assert pasted_records(text) == []  # the record past the bound is not looked for


@pytest.mark.parametrize("intent,text,expected", [
    ("order_multi_gpu", "4 tane A100 ile 32B modeli full fine-tune edeceğiz, nasıl sipariş veririm?", True),
    ("order_multi_gpu", "8x H100 nasıl sipariş ederim?", False),  # no job: the order answer itself
    ("request_quote", "70B modelin full fine-tune'u için fiyat teklifi istiyorum", True),  # no single card holds it
    ("request_quote", "llama 3.1 8b qlora için teklif istiyorum", False),  # one card: the hand-over stays
    ("faq_multi_gpu", "70B full fine-tune için kaç GPU?", False),
])
def test_an_order_or_quote_with_the_whole_job_goes_to_the_estimate(intent, text, expected):
    from bot.assistant.components.order_requests import order_with_job

    assert order_with_job(intent, parsed_message(text)) is expected


@pytest.mark.parametrize("topic,text,expected", [
    ("total_cost", "KDV dahil toplam ne tutar?", True),
    ("total_cost", "ba maliat kolesh chand mishe?", True),
    ("total_cost", "hangi kart daha hızlı?", False),
    ("order", "چطوری سفارش بدم؟", True),
    ("order", "siparis nasil veriliyor", True),
    ("download", "modeli kendi bilgisayarıma indirebilir miyim?", True),
    ("download", "adapter ro mishe rooye system khodam download konam?", True),
    ("download", "checkpoint'leri nerede saklamalıyım?", False),
    ("monthly", "aylık fiyatınız var mı?", True),
    ("monthly", "قیمت ماهانه هم میدید؟", True),
])
def test_round7_topic_words(topic, text, expected):
    assert names_topic(text, topic) is expected


def test_the_offer_after_a_multi_gpu_answer_tells_the_order_process_when_ordering_is_asked():
    from actions.answer_first import quote_offer_response

    assert quote_offer_response("32B full, 4 A100, nasıl sipariş veririm?") == "utter_order_multi_gpu"
    assert quote_offer_response("70B full fine-tune için teklif") == "utter_estimate_offer_quote"


@pytest.mark.parametrize("lang", ["fa", "tr"])
def test_a_named_configuration_gets_its_list_price_and_the_month_when_asked(lang):
    from actions.order import MONTH_HOURS, order_lines
    from bot.advisor.knowledge import load_knowledge
    from bot.present.render import money

    h100 = load_knowledge().gpu("h100")
    lines = order_lines("8x H100 nasıl sipariş ederim, aylık fiyat?", lang)
    assert len(lines) == 2 and f"8 × {h100.name}" in lines[0]
    assert money(8 * h100.price_usd_hour, lang) in lines[0]
    assert money(8 * h100.price_usd_hour * MONTH_HOURS, lang) in lines[1]
    assert len(order_lines("4x A100 nasıl sipariş ederim?", lang)) == 1  # no month asked
    per_gpu = order_lines("H100 sunucusu nasıl sipariş ederim?", lang)
    assert "×" not in per_gpu[0] and money(h100.price_usd_hour, lang) in per_gpu[0]  # no count: the price per GPU
    assert order_lines("çoklu GPU nasıl sipariş ederim?", lang) == []  # no card named
