"""The estimate form reads answers that carry more than the asked value, or that the classifier files elsewhere
(actions/forms.py with bot.text.parse): a typical length given with the method, possessive endings on a model size,
a "no limit" said formally or called out of scope, two token counts, a method only compared with another.
Sentences written for this test (the held-out conversations are never copied here)."""
from __future__ import annotations

from tests.test_actions import run_form

JOB = {"model": "qwen3-8b", "model_id": "qwen3-8b", "model_size_b": 8.0}


async def test_a_typical_length_given_with_the_method_is_the_length():
    values, dispatcher = await run_form("lora, 1024", slots={"language": "tr", **JOB, "requested_slot": "method"})
    assert values["method"] == "lora" and values["seq_len"] == 1024
    assert values["requested_slot"] == "budget"
    assert "utter_ambiguous_number" not in [m.get("response") for m in dispatcher.messages]


async def test_persian_possessive_on_the_size_names_the_model():
    values, _ = await run_form("mistral 7bمون رو با کیولورا و ۲۰۴۸ توکن، بودجه ۴۰ دلار", slots={"language": "fa"})
    assert values["model_id"] == "mistral-7b" and values["method"] == "qlora"
    assert values["seq_len"] == 2048 and values["budget_usd"] == 40


async def test_a_formal_no_limit_fills_the_budget():
    values, _ = await run_form("bütçe tarafında herhangi bir limitimiz bulunmamaktadır",
                               slots={"language": "tr", **JOB, "method": "lora", "seq_len": 2048.0,
                                      "requested_slot": "budget"})
    assert values["budget_unlimited"] is True and values["budget"] == "unlimited"


async def test_no_limit_filed_as_out_of_scope_is_read_by_the_form():
    values, dispatcher = await run_form("از نظر مالی دستمون بازه، مدیرعامل تأیید کرده", intent="out_of_scope",
                                        slots={"language": "fa", **JOB, "method": "qlora", "seq_len": 1024.0,
                                               "requested_slot": "budget"})
    assert values["budget_unlimited"] is True and values["requested_slot"] is None


async def test_two_token_counts_keep_length_and_average_apart():
    values, _ = await run_form("Gemma 3 12B LoRA 4096 token 8000 örnek ortalama 650 token bütçe 120 dolar",
                               slots={"language": "tr"})
    assert values["seq_len"] == 4096 and values["avg_tokens"] == 650 and values["examples"] == 8000


async def test_a_method_only_measured_against_another_is_not_stored():
    values, _ = await run_form("QLoRA'nın kalitesi tam ince ayara göre ne kadar düşük?", intent="inform",
                               slots={"language": "tr", **JOB, "method": "lora", "requested_slot": "seq_len"})
    assert values.get("method") in (None, "lora")
