"""End-to-end: a conversation answered from the tracker store's checkpoint and recent turns gets exactly the replies
it gets from the whole history (bot/assistant/tracker_store.py, issue 10).

Two Rasa servers with the trained model and the session's action server: one keeps 2 finished user turns after
of a checkpoint that moves every turn, the other effectively keeps everything. The same long conversation (form
questions, a question in the middle of the form, what-ifs after the estimate, an offer of a person declined, the
language switched, thanks) must get the same replies, turn by turn. Each server has its own conversation id (the
handoff opens a ticket per conversation in the shared ticket store); ticket numbers are compared as a placeholder.
The ticket opened twelve turns in carries the same trigger and 12-message excerpt from both: the bounded server
reads the turns behind its checkpoint from the store for that one action (bot/assistant/patches/action_payload.py).
"""
from __future__ import annotations

import re

import pytest

from bot.tickets import TicketStore
from tests.conftest import Conversation
from tests.e2e.helpers import tracker_slots
from tests.servers import start_rasa_server

pytestmark = pytest.mark.e2e

CONVERSATION = [
    "Merhaba", "fine-tuning için hangi GPU'yu kiralamalıyım?", "Qwen2.5 14B", "LoRA ile QLoRA arasındaki fark ne?",
    "lora", "4 bin", "bütçem 100 dolar", "2048 token olursa?", "QLoRA olursa?", "fiyatlara KDV dahil mi?",
    "8B olursa?", "insan istiyorum", "hayır", "evet", "teşekkürler", "سلام", "با LoRA چطور؟", "۵۰ دلار",
    "دیتاهامون کجا نگهداری میشه؟", "ممنون", "70B full fine-tune 4096 token", "QLoRA olursa?", "hoşça kalın",
]


def _store(workdir, keep_turns: int) -> dict:
    return {"type": "bot.assistant.tracker_store.RedactingSQLTrackerStore", "dialect": "sqlite",
            "db": str(workdir / f"tracker-{keep_turns}.db"), "keep_turns": keep_turns}


TICKET_NUMBER = re.compile(r"T-\d{6}-[0-9A-Z]+")


def _replies(conversation: Conversation, text: str) -> list:
    return [{key: TICKET_NUMBER.sub("T-#", value) if isinstance(value, str) else value
             for key, value in reply.items() if key != "recipient_id"}
            for reply in conversation.say(text)]


def test_checkpointed_tracker_answers_like_the_whole_history(rasa_model, action_server, tmp_path):
    bounded = start_rasa_server(action_server.port, endpoints={"tracker_store": _store(tmp_path, 2)})
    try:
        whole = start_rasa_server(action_server.port, endpoints={"tracker_store": _store(tmp_path, 100000)})
        try:
            conversations = [Conversation(bounded), Conversation(whole)]
            try:
                for number, text in enumerate(CONVERSATION):
                    got, expected = (_replies(conversation, text) for conversation in conversations)
                    assert got == expected, f"turn {number + 1}: {text}"
                    assert expected, f"turn {number + 1} got no reply: {text}"
                tickets = [TicketStore().get(tracker_slots(conversation)["ticket_id"])
                           for conversation in conversations]
                excerpts = [[(message.role, TICKET_NUMBER.sub("T-#", message.text)) for message in ticket.excerpt]
                            for ticket in tickets]
                assert excerpts[0] == excerpts[1] and len(excerpts[0]) == 12
                assert "fine-tuning için hangi GPU" not in str(excerpts[0])  # the excerpt is the latest messages
                assert tickets[0].trigger == tickets[1].trigger == "request_human"
            finally:
                tickets = [tracker_slots(conversation).get("ticket_id") for conversation in conversations]
                TicketStore().delete([ticket for ticket in tickets if ticket])
        finally:
            whole.stop()
    finally:
        bounded.stop()
