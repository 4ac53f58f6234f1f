"""End-to-end (REST, real servers): an out-of-memory complaint that names the job (issue 21, round 8; blind set 7):
the apology, then the job's memory and the card that holds it, then the hand-over offer - not only the hand-over.
Sentences written for these tests (never a blind set's)."""
from __future__ import annotations

import re

import pytest

from tests.e2e.helpers import assert_language, joined, last_intent, names_a_card, tracker_slots

pytestmark = pytest.mark.e2e
GB = re.compile(r"\d+(?:[.,]\d+)?\s*GB")


@pytest.mark.parametrize("lang,message,method", [
    ("tr", "Dediğiniz gibi RTX 4090 tuttum ama Llama 3.1 8B LoRA eğitimi out of memory ile çöktü, paramız gitti!",
     "lora"),
    ("tr", "L4 kiraladik, mistral 7b qlora calistirdik, bellek yetersiz hatasi aldik. Boşuna ödeme yaptık",
     "qlora"),
    ("fa", "طبق پیشنهادتون L4 گرفتم ولی Qwen2.5 7B با LoRA حافظه کم آورد و کلی پولم رفت!", "lora"),
])
def test_an_out_of_memory_complaint_with_the_job_gets_its_estimate(conversation, lang, message, method):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    text = joined(replies)
    assert tracker_slots(c).get("method") == method, tracker_slots(c)
    assert names_a_card(text) and GB.search(text), text
    if last_intent(c) == "complaint":
        assert len(replies) >= 2, text  # the apology, then the job's memory and card
