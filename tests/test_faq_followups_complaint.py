"""Server-free checks of the FAQ follow-ups and the complaint (actions/faq_followups.py, actions/complaint.py) and the
form's FAQ pause (issue 21, round 5); the
conversations themselves run in tests/e2e/test_blind_round5_dialogue.py. Sentences written for this file."""
from __future__ import annotations

import pytest
from rasa_sdk.executor import CollectingDispatcher

from actions.answer_first import ANSWERED_FIRST_SLOT
from actions.faq import ActionAnswerFaq
from actions.forms import ValidateEstimateForm
from actions.complaint import ActionComplaint, says_slow, slow_card_complaint
from actions.faq_followups import current_card_price
from bot.advisor.knowledge import load_knowledge
from bot.present.render import faq_text
from tests.test_actions import DOMAIN, as_dict, make_tracker, responses

KB = load_knowledge()
JOB = {"model": "qwen2.5-32b", "model_id": "qwen2.5-32b", "method": "lora", "seq_len": 2048,
       "budget_unlimited": True, "budget": "unlimited"}


@pytest.mark.parametrize("message,slow", [
    ("A100 üstünde iş 14 saattir bitmiyor", True),
    ("eğitim L4'te inanılmaz yavaş gidiyor", True),
    ("روی H200 آموزش خیلی کنده", True),
    ("روی L40S دو روزه تموم نشده", True),
    ("faturada KDV yanlış hesaplanmış", False),
    ("صورتحساب A100 رو دو بار از ما کم کردید", False),
    ("این مدل رو چطوری آموزش می‌کند؟", False),   # "می‌کند" (does) is not "کند" (slow)
])
def test_slowness_is_read_from_the_data_word_list(message, slow):
    assert says_slow(message) is slow


@pytest.mark.parametrize("lang", ["fa", "tr"])
def test_a_slow_run_names_the_card_and_a_billing_complaint_does_not(lang):
    reply = slow_card_complaint("A40 üzerinde 30 saattir bitmedi", lang, KB)
    assert reply is not None and "A40" in reply and "packing" in reply
    assert slow_card_complaint("fatura iki kez kesilmiş, A40 için", lang, KB) is None
    assert slow_card_complaint("eğitim çok yavaş", lang, KB) is None  # no card: the apology of utter_complaint


async def test_the_complaint_action_keeps_the_apology_without_a_card():
    dispatcher = CollectingDispatcher()
    await ActionComplaint().run(dispatcher, make_tracker("hizmetinizden hiç memnun değilim", intent="complaint",
                                                         slots={"language": "tr"}), DOMAIN)
    assert responses(dispatcher) == ["utter_complaint"]


@pytest.mark.parametrize("lang", ["fa", "tr"])
def test_the_card_and_price_now_follow_the_plan(lang):
    reply = current_card_price(JOB, lang, KB)
    assert reply is not None and "RTX PRO 6000" in reply
    # the card the estimate showed wins while it still holds the job (actions/consistency.py kept it)
    kept = current_card_price({**JOB, "estimate_summary": {"best_card": "h100"}}, lang, KB)
    assert kept is not None and "H100" in kept.splitlines()[0]


async def test_a_price_question_after_an_estimate_gets_the_card_not_the_list():
    slots = {**JOB, "language": "tr", "estimate_summary": {"best_card": "rtx-pro-6000"}}
    dispatcher = CollectingDispatcher()
    await ActionAnswerFaq().run(dispatcher, make_tracker("şimdi hangi kart, saati kaç?", intent="faq_prices_vat",
                                                         slots=slots), DOMAIN)
    sent = [m["text"] for m in dispatcher.messages]
    assert len(sent) == 1 and sent[0].startswith("Bu iş için şu anki önerim RTX PRO 6000")
    assert faq_text("prices_vat", "tr") not in sent


async def test_an_faq_after_the_first_answer_asks_the_open_question_again_in_short():
    slots = {"language": "fa", "model": "mistral-7b", "model_id": "mistral-7b", "method": "qlora", "seq_len": 2048,
             "requested_slot": "budget", ANSWERED_FIRST_SLOT: True}
    dispatcher = CollectingDispatcher()
    tracker = make_tracker("برای شرکت فاکتور رسمی می‌دید؟", intent="faq_invoice", slots=slots,
                           active_loop="estimate_form", last_action="action_answer_faq")
    values = as_dict(await ValidateEstimateForm().run(dispatcher, tracker, DOMAIN))
    assert values.get("requested_slot") == "budget" and values.get("question_repeat") is True
    assert "budget_unlimited" not in values and not dispatcher.messages  # no defaults taken, nothing said
