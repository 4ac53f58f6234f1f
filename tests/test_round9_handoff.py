"""Round 9 hand-over, pure parts: a purchase with quote words (order_requests.buys_hardware) and a decline of the
offered hand-over (actions/declined_offer.py). Sentences of our own."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from actions.declined_offer import declines_the_handoff
from bot.assistant.components.order_requests import buys_hardware

NO_JOB = SimpleNamespace(model_id=None, model_size_b=None, method=None, compare=None)
JOB = SimpleNamespace(model_id="llama-3.1-8b", model_size_b=None, method="lora", compare=None)


@pytest.mark.parametrize("intent,text,cards,expected", [
    ("request_quote", "Firmamız için 4 tane H100 satın alacağız, teklif gönderir misiniz?", ("h100",), True),
    ("request_quote", "برای شرکت سه تا A100 می‌خوایم بخریم، پیش‌فاکتور میدید؟", ("a100",), True),
    ("request_quote", "sunucu satın almak istiyoruz, fiyat teklifi alabilir miyiz", (), True),
    ("request_quote", "H100 kiralamak için teklif istiyoruz", ("h100",), False),          # renting: the quote
    ("request_quote", "satın almak yerine kiralamak istiyoruz, teklif?", (), False),
    ("request_quote", "4 H100 için fiyat teklifi verir misiniz", ("h100",), False),       # no purchase word
    ("faq_pricing", "H100 satın alabilir miyim?", ("h100",), False),                       # not a quote intent
])
def test_a_purchase_with_quote_words(intent, text, cards, expected):
    assert buys_hardware(intent, text, NO_JOB, cards) is expected


def test_a_purchase_with_a_whole_job_keeps_the_estimate():
    assert not buys_hardware("request_quote", "Llama 8B LoRA için 2 A100 satın almak istiyoruz", JOB, ("a100",))


class _Tracker:
    def __init__(self, text, offer=None, asked=None):
        self.latest_message = {"text": text}
        self._slots = {"pending_offer": offer}
        self.events = [{"event": "user", "text": "..."}]
        if asked:
            self.events.append({"event": "bot", "text": "?", "metadata": {"utter_action": asked}})
        self.events.append({"event": "user", "text": text})

    def get_slot(self, name):
        return self._slots.get(name)


@pytest.mark.parametrize("tracker,expected", [
    (_Tracker("yok gerek yok, Mistral 7B QLoRA ne ister?", offer="quote"), True),
    (_Tracker("na mersi, Gemma 2 9B LoRA che karti mikhad?", offer="human"), True),
    (_Tracker("نه بیخیال، Qwen 7B با LoRA چه کارتی میخواد؟", asked="utter_ask_handoff_consent"), True),
    (_Tracker("Mistral 7B QLoRA ne ister?", offer="quote"), False),                # no decline
    (_Tracker("hayır, Mistral 7B QLoRA ne ister?"), False),                        # nothing was offered
])
def test_a_decline_of_the_offered_handoff(tracker, expected):
    assert declines_the_handoff(tracker) is expected
