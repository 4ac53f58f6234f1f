"""Odd input still gets an answer in the conversation's language (issue 20, findings 7, 9 and 6), on the real servers.

- superscript and circled digits ("²", "①") were digits to the parser's token check (str.isdigit) but not to
  float(): the parse raised and the turn got no answer;
- "1e999" (infinity once read as a float) in a value or a button payload broke the form's validation;
- a JSON-looking message was answered with the bilingual "I speak only Persian and Turkish";
- a budget the estimator refuses was kept in the slots and made the ticket urgent.
"""
from __future__ import annotations

import json
import re
import urllib.request

import pytest

from bot.tickets.priority import prioritize

PERSIAN = re.compile(r"[\u0600-\u06FF]")
GREETING = {"fa": "سلام", "tr": "Merhaba"}


def _slots(server, sender: str) -> dict:
    url = f"{server.url}/conversations/{sender}/tracker?token={server.extra['auth_token']}"
    with urllib.request.urlopen(url, timeout=30) as resp:
        return json.loads(resp.read())["slots"]


def _in_language(text: str, lang: str) -> bool:
    letters = [ch for ch in text if ch.isalpha()]
    persian = sum(1 for ch in letters if PERSIAN.match(ch))
    return persian > len(letters) / 2 if lang == "fa" else persian == 0


JOB = {"fa": "می‌خواهم Llama 3.1 8B را با QLoRA آموزش بدهم", "tr": "Llama 3.1 8B'yi QLoRA ile eğitmek istiyorum"}


@pytest.mark.parametrize("lang", ["fa", "tr"])
@pytest.mark.parametrize("odd", ["²", "①", "⁴⁰⁹⁶", "Llama ③B", "8B ²"])
@pytest.mark.parametrize("where", ["greeted", "in the estimate form"])
def test_superscript_and_circled_digits_get_an_answer(conversation, lang, odd, where):
    user = conversation()
    user.say(GREETING[lang] if where == "greeted" else JOB[lang])
    answer = user.say_text(odd)
    assert answer.strip(), f"no answer to {odd!r}"
    assert _in_language(answer, lang), answer


@pytest.mark.parametrize("lang, job", sorted(JOB.items()))
@pytest.mark.parametrize("odd", ["1e999", '/inform{"seq_len": 1e999}', '/inform{"budget_usd": 1e999}',
                                 '/inform{"model_size_b": 1e999}'])
def test_1e999_gets_an_answer_and_is_not_kept(conversation, rasa_server, lang, job, odd):
    user = conversation()
    user.say(job)
    answer = user.say_text(odd)
    assert answer.strip(), f"no answer to {odd!r}"
    assert _in_language(answer, lang), answer
    slots = _slots(rasa_server, user.sender)
    for name in ("seq_len", "budget_usd", "model_size_b"):
        value = slots.get(name)
        assert value is None or value < 1e12, (name, value)


@pytest.mark.parametrize("lang", ["fa", "tr"])
@pytest.mark.parametrize("data", ['{"model": "llama", "gpus": [1, 2]}', '[1, 2, 3]', '{"foo": "bar"}'])
def test_a_json_looking_message_is_answered_in_the_conversations_language(conversation, lang, data):
    user = conversation()
    user.say(GREETING[lang])
    answer = user.say_text(data)
    assert answer.strip()
    assert _in_language(answer, lang), answer  # not the bilingual "I speak Persian and Turkish only"


@pytest.mark.parametrize("lang, budget", [("fa", "بودجه‌ام ۵۰ میلیارد دلار است"),
                                           ("tr", "Bütçem 50 milyar dolar")])
def test_a_refused_budget_is_said_and_not_kept(conversation, rasa_server, lang, budget):
    user = conversation()
    user.say(GREETING[lang])
    user.say("Llama 3.1 8B QLoRA 2048")
    answer = user.say_text(budget)
    assert _in_language(answer, lang), answer
    slots = _slots(rasa_server, user.sender)
    assert slots.get("budget_usd") is None, slots.get("budget_usd")


def test_a_budget_the_estimator_refuses_does_not_make_a_ticket_urgent():
    for refused in (5e10, float("inf"), float("nan"), "1e999"):
        level, reasons = prioritize("technical", {"budget_usd": refused}, None)
        assert "large_budget" not in reasons and level > 1, (refused, level, reasons)
    level, reasons = prioritize("technical", {"budget_usd": 5000}, None)
    assert level == 1 and "large_budget" in reasons  # a real large order still is urgent


@pytest.mark.parametrize("lang, text", [("fa", "می‌خواهم با کارشناس صحبت کنم، بودجه ما ۵۰ میلیارد دلار است"),
                                        ("tr", "Bir uzmanla görüşmek istiyorum, bütçemiz 50 milyar dolar")])
def test_a_refused_budget_in_a_message_the_form_does_not_read_is_not_kept_either(conversation, rasa_server, lang,
                                                                                  text):
    user = conversation()
    user.say(GREETING[lang])
    assert user.say_text(text).strip()
    assert _slots(rasa_server, user.sender).get("budget_usd") is None
