"""End-to-end (REST, real servers): issue 21 - answer first, questions about the answer, values by meaning.

Every failure class in both languages, with sentences written for these tests (never the issue's or the reviews'):
- model and method given: the first reply already names a card with its memory (defaults said), and a question
  left unanswered is not asked again - no conversation ends without a card;
- questions about the answer (why this card, why not another, hours on a card, how many GPUs, cheaper, faster) are
  answered from the plan of the estimate, naming the same recommended card;
- a length asked "what if" while the budget question is open is a length, never a budget;
- two cards joined by "or" are compared for the job, not answered with the general two-card FAQ.
"""
from __future__ import annotations

import pytest

from bot.advisor.knowledge import load_knowledge
from tests.e2e.helpers import assert_language, joined, names_a_card, tracker_slots

pytestmark = pytest.mark.e2e


def recommended(conversation) -> str:
    """The card the estimate recommended, from the estimate_summary slot."""
    return load_knowledge().gpu(tracker_slots(conversation)["estimate_summary"]["best_card"]).name


@pytest.mark.parametrize("lang,job,instead", [
    ("fa", "میخوایم Qwen2.5 7B رو با LoRA روی داده‌های پشتیبانی‌مون تنظیم کنیم", "خب کدوم کارت رو اجاره کنم؟"),
    ("tr", "Gemma 2 9B modelini QLoRA ile kendi verimizle eğitmek istiyoruz", "tamam da hangi kartı kiralayayım?"),
])
def test_model_and_method_get_a_card_and_the_question_is_asked_once(conversation, lang, job, instead):
    c = conversation()
    first = c.say(job)
    assert_language(first, lang)
    assert names_a_card(joined(first)), joined(first)
    assert "2048" in joined(first).replace(".", "")  # the assumed length is said
    again = c.say(instead)
    assert_language(again, lang)
    text = joined(again)
    assert names_a_card(text), text
    slots = tracker_slots(c)
    assert slots["requested_slot"] is None and slots["estimate_summary"] is not None
    assert slots["seq_len"] == 2048 and slots["budget"] == "not_given"


def _estimate(conversation, message: str):
    c = conversation()
    replies = c.say(message)
    assert names_a_card(joined(replies)), joined(replies)
    assert tracker_slots(c)["estimate_summary"] is not None
    return c


FA_JOB = "Mistral 7B با QLoRA، طول ۲۰۴۸ توکن، بودجه‌ای تعیین نکرده‌ایم ولی حدود ۵۰ دلار"
TR_JOB = "Qwen2.5 14B, LoRA, 2048 token, bütçe 80 dolar"


@pytest.mark.parametrize("lang,job,question", [
    ("fa", FA_JOB, "چرا دقیقاً این کارت رو پیشنهاد کردی؟"),
    ("tr", TR_JOB, "bu kartı seçmenizin gerekçesi ne?"),
])
def test_why_this_card_names_the_recommended_card_and_the_memory(conversation, lang, job, question):
    c = _estimate(conversation, job)
    card = recommended(c)
    replies = c.say(question)
    assert_language(replies, lang)
    text = joined(replies)
    assert card in text and "GB" in text, text
    assert tracker_slots(c)["estimate_summary"]["best_card"] == load_knowledge().gpus[
        [g.name for g in load_knowledge().gpus].index(card)].id  # the answer did not change the advice


@pytest.mark.parametrize("lang,job,question,other", [
    ("fa", FA_JOB, "چرا RTX 4090 رو نگفتی؟ اون که سریع‌تره", "RTX 4090"),
    ("tr", TR_JOB, "B200 daha hızlı değil mi, onu niye önermediniz?", "B200"),
])
def test_why_not_another_card_compares_it_with_the_recommended_one(conversation, lang, job, question, other):
    c = _estimate(conversation, job)
    card = recommended(c)
    replies = c.say(question)
    assert_language(replies, lang)
    text = joined(replies)
    assert other in text and card in text, text


@pytest.mark.parametrize("lang,job,question,card", [
    ("fa", FA_JOB, "روی L40S این کار چند ساعت طول میکشه؟", "L40S"),
    ("tr", TR_JOB, "H100 üzerinde bu iş kaç saat sürer?", "H100"),
])
def test_hours_on_a_named_card(conversation, lang, job, question, card):
    c = _estimate(conversation, job)
    replies = c.say(question)
    assert_language(replies, lang)
    text = joined(replies)
    assert card in text, text
    assert any(word in text for word in ("ساعت", "دقیقه", "روز", "saat", "dakika", "gün")), text


@pytest.mark.parametrize("lang,job,question,card", [
    ("fa", FA_JOB, "چند تا A100 باید بگیرم؟", "A100"),
    ("tr", TR_JOB, "kaç tane A40 kiralamam gerekir?", "A40"),
])
def test_how_many_gpus_for_a_job_that_fits_one(conversation, lang, job, question, card):
    c = _estimate(conversation, job)
    replies = c.say(question)
    assert_language(replies, lang)
    text = joined(replies)
    assert card in text and ("یک " + card in text or "Tek bir " + card in text), text


@pytest.mark.parametrize("lang,job,question", [
    ("fa", FA_JOB, "گزینهٔ ارزون‌تری هم دارید؟"),
    ("tr", TR_JOB, "bundan daha ucuz bir seçenek var mı?"),
])
def test_a_cheaper_option_is_cheaper_or_said_not_to_exist(conversation, lang, job, question):
    c = _estimate(conversation, job)
    card = recommended(c)
    price = load_knowledge().gpus[[g.name for g in load_knowledge().gpus].index(card)].price_usd_hour
    replies = c.say(question)
    assert_language(replies, lang)
    text = joined(replies)
    named = [g for g in load_knowledge().gpus if g.name in text and g.name != card]
    assert card in text, text
    assert all(g.price_usd_hour <= price for g in named), text  # never a dearer card as "cheaper"


@pytest.mark.parametrize("lang,job,what_if", [
    ("fa", "Llama 3.1 8B با QLoRA و ۱۰۲۴ توکن", "اگه طول توالی رو ۸۱۹۲ کنیم چی میشه؟"),
    ("tr", "Llama 3.1 8B, QLoRA, 1024 token", "dizi uzunluğunu 8192 yapsak ne değişir?"),
])
def test_a_length_asked_while_the_budget_is_open_is_a_length(conversation, lang, job, what_if):
    c = conversation()
    first = c.say(job)
    assert names_a_card(joined(first)), joined(first)
    assert tracker_slots(c)["requested_slot"] == "budget"
    replies = c.say(what_if)
    assert_language(replies, lang)
    slots = tracker_slots(c)
    assert slots["seq_len"] == 8192 and not slots.get("budget_usd"), slots
    assert names_a_card(joined(replies)), joined(replies)


@pytest.mark.parametrize("lang,job,question", [
    ("fa", FA_JOB, "برای همین کار A40 بگیرم یا H100؟"),
    ("tr", TR_JOB, "bu iş için L40S mi H200 mü?"),
])
def test_two_cards_joined_by_or_are_compared_for_the_job(conversation, lang, job, question):
    c = _estimate(conversation, job)
    replies = c.say(question)
    assert_language(replies, lang)
    text = joined(replies)
    names = ("A40", "H100") if lang == "fa" else ("L40S", "H200")
    assert all(name in text for name in names), text
    model = "Mistral 7B" if lang == "fa" else "Qwen2.5 14B"
    assert model in text, text


# Jobs where five times the examples makes another card a few per cent cheaper in total with the fitted speed model
# (knowledge/calibration/throughput_model.yml): L40S first, then A40 cheaper by 10-12 %.
@pytest.mark.parametrize("lang,job,volume,kept", [
    ("fa", "Llama 3.1 8B با LoRA، طول ۴۰۹۶ توکن، بودجه ۱۰۰ دلار، ۱۰۰۰ نمونه با میانگین ۶۰۰ توکن",
     "ببخشید، تعداد نمونه‌ها ۵۰۰۰ تاست", "خطای خود برآورد"),
    ("tr", "Gemma 2 9B, LoRA, 4096 token, bütçe 100 dolar, 1000 örnek, ortalama 600 token",
     "pardon, örnek sayısı 5000", "hata payı"),
])
def test_the_card_does_not_flip_on_a_difference_inside_the_estimates_error(conversation, lang, job, volume, kept):
    """The volume makes another card about 10 % cheaper in total in this estimate (inside its error): the card
    recommended before stays, and the answer says why (actions/consistency.py)."""
    c = _estimate(conversation, job)
    before = recommended(c)
    replies = c.say(volume)
    assert_language(replies, lang)
    text = joined(replies)
    assert recommended(c) == before and kept in text, text
