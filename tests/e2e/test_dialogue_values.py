"""End-to-end (REST, real servers): issue 13 §1 - the dialogue never loses a value and never loops.

Every failure class in both languages, with sentences written for these tests (not the reviewers' examples):
- a value given inside a question an FAQ answers is kept, and the FAQ answer uses the job;
- after an interruption the form confirms what it has and asks only for what is missing;
- the same question never comes twice in a row word for word; after two turns without progress a person is offered;
- thanks and goodbye in the middle of the form get a short answer and the form (and its values) are kept.
"""
from __future__ import annotations

from typing import List

import pytest

from tests.e2e.helpers import assert_estimate, assert_language, joined, payloads, texts, tracker_slots

pytestmark = pytest.mark.e2e

MODEL_QUESTION = {"fa": "کدام مدل", "tr": "Hangi modele"}
MODEL_QUESTION_AGAIN = {"fa": "با کدام مدل کار می‌کنیم", "tr": "Hangi modelle çalışacağımızı"}


def asks_for_model(replies: List[dict], lang: str) -> bool:
    text = joined(replies)
    return MODEL_QUESTION[lang] in text or MODEL_QUESTION_AGAIN[lang] in text


def questions(replies: List[dict]) -> List[str]:
    """Bot messages that carry answer buttons (the form's questions)."""
    return [r["text"] for r in replies if r.get("text") and r.get("buttons")]


# ------------------------------------------------------------------------- a value inside an FAQ question


@pytest.mark.parametrize("lang,first,method,length,budget", [
    ("fa", "ما روی Llama 3.1 8B کار می‌کنیم؛ یک کارت ۲۴ گیگی برای آموزشش کافی است؟", "با کیولورا", "۲۰۴۸ توکن",
     "حدود ۳۰ دلار"),
    ("tr", "Llama 3.1 8B kullanıyoruz; 24 GB'lık bir kart eğitmek için yeterli olur mu?", "QLoRA ile olsun",
     "2048 token", "30 dolar civarı"),
])
def test_a_model_named_in_a_question_is_kept_and_never_asked_for(conversation, lang, first, method, length, budget):
    c = conversation()
    answer = c.say(first)
    assert_language(answer, lang)
    assert "Llama 3.1 8B" in joined(answer), joined(answer)   # the answer speaks about the customer's job
    assert tracker_slots(c)["model_id"] == "llama-3.1-8b"
    for message in (method, length):
        replies = c.say(message)
        assert_language(replies, lang)
        assert not asks_for_model(replies, lang), joined(replies)
    estimate = c.say(budget)
    assert_estimate(estimate, lang, mentions=["Llama 3.1 8B"])


@pytest.mark.parametrize("lang,question,fits", [
    ("fa", "برای Llama 3.1 8B با QLoRA، کارت ۲۴ گیگابایتی جواب می‌دهد؟", "کافی است"),
    ("tr", "QLoRA yapacağız; 24 GB'lık bir kart Llama 3.1 8B için yeterli mi?", "yeterli"),
])
def test_faq_answer_names_the_memory_of_the_job_and_whether_the_card_fits(conversation, lang, question, fits):
    c = conversation()
    replies = c.say(question)
    text = joined(replies)
    assert_language(replies, lang)
    if tracker_slots(c).get("requested_slot"):
        pytest.fail(f"an FAQ with a job started the form instead of answering: {text[:300]!r}")
    assert "GB" in text and "QLoRA" in text and fits in text, text


# ------------------------------------------------------------------------- confirmation after an interruption


@pytest.mark.parametrize("lang,start,interruption,assumed,length", [
    ("fa", "می‌خواهم Qwen2.5 14B را با QLoRA آموزش بدهم", "راستی قیمت‌ها با مالیات است؟ بودجه‌مان ۶۰ دلار است",
     "طول توالی 2048", "۱۰۲۴"),
    ("tr", "Mistral 7B'yi LoRA ile eğitmek istiyoruz", "bu arada fiyatlara KDV dahil mi? bütçemiz 40 dolar",
     "2.048 token", "1024"),
])
def test_after_an_faq_the_question_asked_once_is_assumed_and_the_estimate_follows(
        conversation, lang, start, interruption, assumed, length):
    """Answer first (issue 21): the card came with the first message and the length was asked once; after the FAQ
    (which brought a budget) the length is assumed and said, and the estimate uses the budget given in passing."""
    c = conversation()
    c.say(start)
    replies = c.say(interruption)
    text = joined(replies)
    assert_language(replies, lang)
    assert ("KDV" in text) if lang == "tr" else ("مالیات" in text)     # the question was answered
    assert assumed in text, text                                          # the default is said
    assert "40" in text or "60" in text                                  # the budget given in passing is used
    assert tracker_slots(c)["requested_slot"] is None
    estimate = c.say(length)                                             # a length later still recalculates
    assert_estimate(estimate, lang)
    assert tracker_slots(c)["seq_len"] == int(length.translate(str.maketrans("۰۱۲۳۴۵۶۷۸۹", "0123456789")))


# ------------------------------------------------------------------------- no loops


@pytest.mark.parametrize("lang,start,junk", [
    ("fa", "سلام، یه مدل می‌خوام فاین‌تیون کنم", ["هوم", "نمی‌دونم والا"]),
    ("tr", "merhaba, bir model eğitmek istiyorum", ["hmm", "şey işte öyle bir şey"]),
])
def test_the_same_question_is_never_sent_twice_in_a_row_and_a_person_is_offered(conversation, lang, start, junk):
    c = conversation()
    first = c.say(start)
    previous = questions(first)
    assert previous, joined(first)
    offered = False
    for message in junk:
        replies = c.say(message)
        assert_language(replies, lang)
        asked = questions(replies)
        assert asked and asked[-1] != previous[-1], f"the same question twice: {asked[-1]!r}"
        previous = asked
        offered = offered or "/request_human" in payloads(replies)
    assert offered, "two turns without progress and no offer of a person"


# ------------------------------------------------------------------------- thanks and goodbye inside the form


@pytest.mark.parametrize("lang,start,thanks,bye,method", [
    ("fa", "Gemma 2 9B رو می‌خوام آموزش بدم", "دستت درد نکنه", "فعلاً خداحافظ، بعداً برمی‌گردم", "لورا"),
    ("tr", "Gemma 2 9B eğitmek istiyorum", "eyvallah", "şimdilik hoşça kalın, sonra dönerim", "LoRA"),
])
def test_thanks_and_goodbye_inside_the_form_keep_it(conversation, lang, start, thanks, bye, method):
    c = conversation()
    c.say(start)
    thanked = c.say(thanks)
    assert_language(thanked, lang)
    assert questions(thanked), joined(thanked)            # short answer, then the form's question
    bye_replies = c.say(bye)
    assert_language(bye_replies, lang)
    assert not questions(bye_replies)                     # no question after a goodbye
    slots = tracker_slots(c)
    assert slots["model"] and slots["requested_slot"] == "method"
    back = c.say(method)                                  # the form carries on where it stopped
    assert_language(back, lang)
    assert not asks_for_model(back, lang)
    assert tracker_slots(c)["method"] == "lora"


# ------------------------------------------------------------------------- the contract's newer values


@pytest.mark.parametrize("lang,message", [
    ("fa", "Qwen2.5 7B با QLoRA و ۲۰۴۸ توکن؛ ساعتی حداکثر یک و نیم دلار می‌توانیم بدهیم"),
    ("tr", "Qwen2.5 7B, QLoRA, 2048 token; saatte en fazla 1,5 dolar ödeyebiliriz"),
])
def test_an_hourly_cap_answers_the_budget_question_and_reaches_the_estimate(conversation, lang, message):
    c = conversation()
    replies = c.say(message)
    assert_estimate(replies, lang, mentions=["Qwen2.5 7B"])      # no total budget asked on top of the cap
    slots = tracker_slots(c)
    assert slots["hourly_cap"] == 1.5 and slots["budget_usd"] is None


@pytest.mark.parametrize("lang,message,model_id,method", [
    ("fa", "درباره آموزش Qwen2.5 14B با LoRA می‌خواهم با یک کارشناس صحبت کنم", "qwen2.5-14b", "lora"),
    ("tr", "Gemma 2 9B'yi QLoRA ile eğitmek konusunda bir uzmanla konuşmak istiyorum", "gemma-2-9b", "qlora"),
])
def test_values_in_a_request_for_a_person_go_with_the_handoff(conversation, lang, message, model_id, method):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert "/affirm" in payloads(replies)                   # the handoff's consent question
    slots = tracker_slots(c)
    assert (slots["model_id"], slots["method"]) == (model_id, method)   # the ticket will carry them


# ------------------------------------------------------------------------- never the same message twice in a row


@pytest.mark.parametrize("lang,start,question", [
    ("fa", "می‌خوام Mistral 7B رو با LoRA آموزش بدم", "راستی، فاکتور رسمی هم صادر می‌کنید؟"),
    ("tr", "Qwen2.5 14B'yi QLoRA ile eğitmek istiyoruz", "bu arada e-fatura kesiyor musunuz?"),
])
def test_after_a_question_without_new_values_no_message_of_the_previous_turn_comes_again(conversation, lang,
                                                                                        start, question):
    c = conversation()
    before = c.say(start)
    replies = c.say(question)
    assert_language(replies, lang)
    assert not set(texts(replies)) & set(texts(before)), texts(replies)
    # answer first (issue 21): the length was asked once with the first card; after a question that brought no
    # value the question comes once more in its short wording, and the estimate is not sent again (round 5)
    assert tracker_slots(c)["requested_slot"] == "seq_len" and tracker_slots(c)["estimate_summary"] is None
    assert len(texts(replies)) == 2, texts(replies)


# ------------------------------------------------------------------------- a change of mind inside thanks or a no


@pytest.mark.parametrize("lang,job,change,method", [
    ("fa", "Llama 3.1 8B، روش QLoRA، ۱۰۲۴ توکن، بودجه ۵۰ دلار", "مرسی از توضیح، حالا اگه LoRA بزنیم چی؟", "lora"),
    ("tr", "Mistral 7B, LoRA, 1024 token, bütçe 40 dolar", "yok, onu QLoRA ile hesaplayalım", "qlora"),
])
def test_thanks_or_a_no_that_changes_a_value_after_an_estimate_recalculates(conversation, lang, job, change,
                                                                            method):
    c = conversation()
    assert_estimate(c.say(job), lang)
    replies = c.say(change)
    assert_estimate(replies, lang)
    assert tracker_slots(c)["method"] == method
