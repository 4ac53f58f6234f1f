"""Questions about the answer (issue 21 #3): bot/text/followups.py reads the kind and the cards, actions/followup.py
answers from the same plan as the estimate. Sentences written for this test."""
from __future__ import annotations

import pytest

from actions.estimate import advice_request_fields
from actions.followup import followup_answer
from actions.answer_first import _Slots, assumed_values
from bot.advisor.advice import AdviceRequest, advise
from bot.advisor.knowledge import load_knowledge
from bot.text.followups import KINDS, read_followup

KB = load_knowledge()
JOB = {"model": "llama-3.1-8b", "model_id": "llama-3.1-8b", "model_size_b": 8.0, "method": "qlora"}


@pytest.mark.parametrize("text,kind,cards", [
    ("bu kartı neden seçtiniz?", "why", ()),
    ("چرا این GPU رو گفتی؟", "why", ()),
    ("RTX 4090 olmaz mı, neden o değil?", "why", ("rtx4090",)),
    ("L40S روی این کار چند ساعت طول می‌کشه؟", "hours", ("l40s",)),
    ("kaç adet H200 gerekir?", "gpu_count", ("h200",)),
    ("چندتا A100 لازمه؟", "gpu_count", ("a100",)),
    ("ucuz bir alternatif var mı?", "cheaper", ()),
    ("سریع‌ترین گزینه چیه؟", "faster", ()),
    ("chera B200 na?", "why", ("b200",)),
    ("merhaba", None, ()),
])
def test_kind_and_cards(text, kind, cards):
    asked = read_followup(text, KB)
    assert (asked.kind, asked.cards) == (kind, cards)
    assert asked.kind is None or asked.kind in KINDS


def test_a_long_message_is_read_in_one_pass():
    """4,000 characters (the channels' limit) of card names and question words: every card found once."""
    text = ("neden A40 değil, H100 kaç saat sürer, چرا L4 نه؟ " * 90)[:4000]
    assert read_followup(text, KB).cards == ("a40", "h100", "l4")


def _recommended(slots):
    filled = {**slots, **assumed_values(slots)}
    advice = advise(AdviceRequest(**advice_request_fields(_Slots(filled))))
    return advice.recommendation.card


@pytest.mark.parametrize("lang", ["fa", "tr"])
def test_why_names_the_card_the_estimate_recommends(lang):
    card = _recommended(JOB)
    answer = followup_answer("neden bu?" if lang == "tr" else "چرا این؟", JOB, lang)
    assert card.name in answer and "GB" in answer


@pytest.mark.parametrize("lang", ["fa", "tr"])
def test_a_card_too_small_is_said_to_be_too_small(lang):
    job = {"model": "llama-3.1-70b", "model_id": "llama-3.1-70b", "model_size_b": 70.0, "method": "lora"}
    answer = followup_answer("neden L4 değil?" if lang == "tr" else "چرا L4 نه؟", job, lang)
    assert "L4 (24 GB)" in answer and ("yeterli değil" in answer if lang == "tr" else "کافی نیست" in answer)


def test_without_model_and_method_the_job_is_asked_for():
    assert "LoRA" in followup_answer("neden bu kart?", {}, "tr")


def test_a_cheaper_answer_never_names_a_dearer_card():
    card = _recommended(JOB)
    answer = followup_answer("daha ucuzu var mı?", JOB, "tr")
    named = [g for g in KB.gpus if g.name in answer and g.name != card.name]
    assert all(g.price_usd_hour <= card.price_usd_hour for g in named), answer
