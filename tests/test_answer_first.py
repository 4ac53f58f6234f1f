"""Answer first (issue 21 #1, actions/answer_first.py): a card as soon as model and method are known, the defaults
said; a refining question left unanswered is not asked again. Sentences written for this test."""
from __future__ import annotations

from rasa_sdk.executor import CollectingDispatcher

from actions.forms import ValidateEstimateForm
from bot.advisor.knowledge import load_knowledge
from tests.test_actions import DOMAIN, as_dict, make_tracker, run_form

CARDS = [card.name for card in load_knowledge().gpus]


def _texts(dispatcher):
    return [m["text"] for m in dispatcher.messages if m.get("text")]


async def test_persian_model_and_method_get_a_card_before_any_question():
    values, dispatcher = await run_form("ما یه gemma 2 9b داریم، میخوایم با lora روی دیتای خودمون تنظیمش کنیم",
                                        slots={"language": "fa"})
    assert values["requested_slot"] == "seq_len" and values["answered_first"] is True
    first = _texts(dispatcher)[0]
    assert "Gemma 2 9B" in first and "2048" in first and "بدون بودجهٔ مشخص" in first
    assert any(name in first for name in CARDS) and "GB" in first


async def test_turkish_length_given_card_first_then_the_budget_is_asked_once():
    values, dispatcher = await run_form("Mistral 7B, QLoRA, 1024 token olacak", slots={"language": "tr"})
    assert values["requested_slot"] == "budget"
    first = _texts(dispatcher)[0]
    assert "belirli bir bütçe olmadan" in first and any(name in first for name in CARDS)


JOB = {"model": "qwen2.5-14b", "model_id": "qwen2.5-14b", "model_size_b": 14.0, "method": "lora",
       "answered_first": True}


async def test_a_question_instead_of_the_budget_takes_the_default_and_finishes():
    values, dispatcher = await run_form("peki bu iş kaç saat sürer ki?", intent="estimate",
                                        slots={"language": "tr", **JOB, "seq_len": 2048.0,
                                               "requested_slot": "budget"})
    assert values["budget"] == "not_given" and values["requested_slot"] is None
    texts = _texts(dispatcher)
    assert len(texts) == 1 and "belirli bir bütçe olmadan" in texts[0]
    assert not [m for m in dispatcher.messages if m.get("response") == "utter_budget_not_understood"]


async def test_after_an_faq_the_length_question_comes_once_in_its_short_wording():
    """Issue 21, round 5: an FAQ after the first card is answered, then the open question in its short wording;
    the defaults are not taken, so the whole estimate is not sent again after the FAQ (it was, in blind set 5)."""
    tracker = make_tracker("داده‌هامون داخل ایران می‌مونه؟", intent="faq_kvkk", active_loop="estimate_form",
                           slots={"language": "fa", **JOB, "requested_slot": "seq_len"},
                           last_action="action_answer_faq")
    dispatcher = CollectingDispatcher()
    values = as_dict(await ValidateEstimateForm().run(dispatcher, tracker, DOMAIN))
    assert values["requested_slot"] == "seq_len" and values["question_repeat"] is True
    assert "seq_len" not in values and "budget" not in values and not _texts(dispatcher)


async def test_a_value_still_answers_the_question_after_the_first_card():
    values, _ = await run_form("بودجه‌مون حدود ۸۰ دلاره", slots={"language": "fa", **JOB, "seq_len": 4096.0,
                                                               "requested_slot": "budget"})
    assert values["budget_usd"] == 80 and values["requested_slot"] is None and "seq_len" not in values


CAPPED = {**JOB, "seq_len": 2048.0, "hourly_cap": 1.0, "budget": "hourly_cap", "requested_slot": None}


async def test_a_vat_qualifier_alone_belongs_to_the_hourly_cap_just_given():
    """Values by meaning (issue 21 #2): "with tax, I mean" after an hourly cap qualifies the cap."""
    for lang, message in (("tr", "KDV dahil fiyatı kastediyorum"), ("fa", "منظورم قیمت با مالیات بود")):
        values, _ = await run_form(message, slots={"language": lang, **CAPPED})
        assert values["hourly_cap_vat"] is True and not values.get("budget_usd"), values


async def test_the_cap_restated_with_vat_is_no_budget():
    for lang, message in (("tr", "1 dolar, KDV dahil yani"), ("fa", "همون ۱ دلار، با مالیات")):
        values, _ = await run_form(message, slots={"language": lang, **CAPPED, "budget_usd": 40.0, "budget": "usd"})
        assert values["hourly_cap_vat"] is True and values["budget_usd"] == 40.0, values
