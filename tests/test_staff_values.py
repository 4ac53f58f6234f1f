"""The staff page and the staff notification speak like staff (issue 14 #7): values as the customer gave them
("5000 dolar"), the multi-GPU plan as a sentence, the recommended cards also for multi-GPU jobs, no raw JSON."""
from __future__ import annotations

import asyncio

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.staff.app import create_app
from bot.tickets import TicketStore
from bot.tickets.models import Message, TicketDraft
from bot.tickets.notify import notification_message
from bot.tickets.texts import staff_cards, staff_estimate_lines, staff_labels, staff_summary, staff_value_lines

SLOTS = {"model": "llama-3.1-70b", "model_id": "llama-3.1-70b", "method": "full", "seq_len": 4096.0,
         "budget": "usd", "budget_usd": 5000.0, "budget_period": "month", "hourly_cap": 12.0, "hourly_cap_vat": True}
ESTIMATE = {"per_gpu_gib": 1157.0, "low_gib": 986.0, "high_gib": 1546.0, "best_card": None, "fitting_cards": [],
            "needs_quote": True, "multi_gpu": {"card": "b200", "count": 8, "sharding": "zero3", "per_gpu_gib": 145.2},
            "model_display": "Llama 3.1 70B"}


@pytest.mark.parametrize("lang,budget,multi", [
    ("tr", "aylık 5.000 dolar", "8 × B200, ZeRO-3, GPU başına yaklaşık 145 GB"),
    ("fa", "ماهانه 5000 دلار", "8 × B200، ZeRO-3، حدود 145 GB روی هر GPU"),
    ("en", "$5000 per month", "8 × B200, ZeRO-3, about 145 GB per GPU"),
])
def test_values_and_the_plan_read_as_sentences(lang, budget, multi):
    fields = staff_labels(lang)["fields"]
    values = dict(staff_value_lines(SLOTS, lang))
    assert values[fields["budget"]] == budget and "usd" not in values.values()
    assert values[fields["model_display"]] == "Llama 3.1 70B"
    assert staff_labels(lang)["values"]["vat_included"] in values[fields["hourly_cap"]]
    estimate = dict(staff_estimate_lines(ESTIMATE, lang))
    assert estimate[fields["multi_gpu"]] == multi
    assert staff_cards([], ESTIMATE, lang) == ["8 × B200"]  # recommended cards also for a multi-GPU job
    for text in [*values.values(), *estimate.values(), staff_summary(SLOTS, ESTIMATE, lang)]:
        assert "{" not in text and "zero3" not in text and "b200" not in text


def test_notification_uses_the_same_sentences(tmp_path):
    store = TicketStore(f"sqlite:///{tmp_path}/t.db", spool_dir=tmp_path / "spool")
    ticket = store.create(TicketDraft(sender_id="s-1", channel="rest", language="tr", category="multi-gpu",
                                      trigger="request_quote", slots=SLOTS, estimate_summary=ESTIMATE, cards=[]))
    text = notification_message(ticket, "tr")
    assert "aylık 5.000 dolar" in text and "8 × B200, ZeRO-3" in text and "budget_usd" not in text


def test_the_staff_page_shows_the_sentences(tmp_path):
    store = TicketStore(f"sqlite:///{tmp_path}/tickets.db", spool_dir=tmp_path / "spool")
    ticket = store.create(TicketDraft(sender_id="w-1", channel="socketio", language="fa", category="multi-gpu",
                                      trigger="request_quote", slots=SLOTS, estimate_summary=ESTIMATE, cards=[],
                                      excerpt=[Message(role="user", text="8 B200 می‌خواهم")]))

    class NoRasa:
        def tracker(self, sender_id):
            from bot.staff.rasa_api import RasaUnavailable
            raise RasaUnavailable("not in this test")

    async def fetch():
        app = create_app(token="staff-token-123", store=store, rasa=NoRasa(), flush_interval_s=3600)
        async with TestClient(TestServer(app)) as client:
            response = await client.get(f"/tickets/{ticket.id}?ui=tr",
                                        headers={"Authorization": "Bearer staff-token-123"})
            return response.status, await response.text()

    status, body = asyncio.run(fetch())
    assert status == 200
    assert "aylık 5.000 dolar" in body and "8 × B200, ZeRO-3, GPU başına yaklaşık 145 GB" in body
    assert "&quot;count&quot;" not in body and '"count":' not in body and "zero3" not in body  # no raw JSON
