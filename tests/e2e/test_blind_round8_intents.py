"""Round 8 (intents), through the real servers.

Every sentence here is our own (never the blind set's), and none is a training example:
1. "which training stack are your figures based on? I use Unsloth" with no job: the stacks FAQ (knowledge/faq.yml
   stacks), naming the stack the customer mentioned; with a job known, the estimate again with that stack;
2. image and video model training with a model's name (FLUX.1, SDXL, Stable Diffusion 3, DreamBooth, ControlNet):
   the other-workload answer, never the own-card answer nor an estimate;
3. a Finglish or ASCII-Turkish price complaint quoting a card's price: the price complaint answer, not card facts;
4. a greeting, a model, a method and "what's the price?" in one message: an estimate with its card and price;
5. "which cards do you have under $0.8 an hour?" with no job: those cards with memory and price with and without
   KDV, then a question for the model; with a job known, those of them that hold it.
"""
from __future__ import annotations

import pytest

from bot.advisor.knowledge import load_knowledge
from bot.advisor.vat import price_with_vat
from tests.e2e.helpers import (assert_language, domain_response as response, joined, last_intent, names_a_card,
                               price_text, texts)

pytestmark = pytest.mark.e2e


def said(replies, name: str, lang: str) -> bool:
    return response(name, lang) in texts(replies)


def not_understood(replies, lang: str) -> bool:
    return said(replies, "utter_default", lang)


def own_card_unknown(replies) -> bool:
    kb = load_knowledge()
    return any(kb.text("own_card_unknown", lang) in joined(replies) for lang in ("fa", "tr"))


# ------------------------------------------------------------------------- 1. which training stack


@pytest.mark.parametrize("lang,message,stack", [
    ("fa", "ارقامی که میدید بر اساس کدوم فریمورک آموزشه؟", None),
    ("fa", "من با Unsloth کار می‌کنم، حساب‌هاتون فرقی می‌کنه؟", "Unsloth"),
    ("fa", "hesab haye shoma ba che stacki hast? man axolotl estefade mikonam", "Axolotl"),
    ("tr", "Rakamlarınız hangi eğitim altyapısına göre hesaplanıyor?", None),
    ("tr", "Ben Axolotl kullanıyorum, tahminleriniz değişir mi?", "Axolotl"),
    ("tr", "hesaplariniz hangi framework icin, torchtune ile fark eder mi", "torchtune"),
])
def test_stack_question_without_a_job_gets_the_stacks_faq(conversation, lang, message, stack):
    from actions.faq import faq_answer

    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert last_intent(c) == "faq_stacks", joined(replies)
    assert faq_answer("stacks", lang) in texts(replies), joined(replies)
    assert not not_understood(replies, lang)
    if stack:
        named = [t for t in texts(replies) if t != faq_answer("stacks", lang)]
        assert any(stack in t for t in named), joined(replies)


@pytest.mark.parametrize("lang,job,question", [
    ("fa", "Llama 3.1 8B با QLoRA", "حساب‌هاتون با کدوم فریمورکه؟ من Unsloth دارم"),
    ("tr", "Llama 3.1 8B QLoRA", "Ben Unsloth kullanıyorum, rakamlar hangi altyapıya göre?"),
])
def test_stack_question_with_a_job_estimates_again_with_that_stack(conversation, lang, job, question):
    c = conversation()
    c.say(job)
    replies = c.say(question)
    assert_language(replies, lang)
    text = joined(replies)
    assert "Unsloth" in text and names_a_card(text), text


# ------------------------------------------------------------------------- 2. image and video models by name


@pytest.mark.parametrize("lang,message", [
    ("fa", "میخوام FLUX.1 رو روی عکس‌های خودم فاین‌تیون کنم، چه کارتی لازمه؟"),
    ("fa", "برای DreamBooth روی SDXL چقدر حافظه میخواد؟"),
    ("fa", "mikham ye ControlNet baraye naghshe sakhtemoon train konam"),
    ("fa", "Stable Diffusion 3 ro ba LoRA mishe inja amoozesh dad?"),
    ("tr", "FLUX.1 dev modelini kendi fotoğraflarımla ince ayar yapmak istiyorum, hangi GPU?"),
    ("tr", "SDXL için LoRA eğitimi yapacağım, kaç GB lazım?"),
    ("tr", "controlnet egitmek icin sunucu lazim"),
    ("tr", "Stable Diffusion 3 ile DreamBooth eğitimi ne kadar tutar?"),
])
def test_image_models_by_name_are_other_workload(conversation, lang, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert last_intent(c) == "other_workload", joined(replies)
    assert said(replies, "utter_other_workload", lang), joined(replies)
    assert not own_card_unknown(replies), joined(replies)
    assert not names_a_card(joined(replies)), joined(replies)


# ------------------------------------------------------------------------- 3. price complaints quoting a price


@pytest.mark.parametrize("lang,message", [
    ("fa", "vay che gerune, H100 saati 3 dolar? kheili ziade"),
    ("fa", "A100 saati 2 dolar? in ke kheili geroone"),
    ("fa", "chera gheymat hatoon inghadr balast, L40S saati 1 dolar?"),
    ("tr", "A100 saatlik 2 dolar mi, bu cok fazla"),
    ("tr", "H200 saati 4 dolar mi? fiyatlariniz asiri pahali"),
    ("tr", "L4 saatlik yarim dolar bile pahali, neden bu kadar yuksek"),
])
def test_price_complaints_quoting_a_price_get_the_price_complaint(conversation, lang, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert last_intent(c) == "complaint_price", joined(replies)
    assert said(replies, "utter_complaint_price", lang), joined(replies)


# ------------------------------------------------------------------------- 4. greeting, job and "the price?"


@pytest.mark.parametrize("lang,message", [
    ("fa", "سلام، قیمت فاین‌تیون Qwen3 8B با QLoRA چنده؟"),
    ("fa", "salam, gheymate Llama 3.1 8B ba LoRA chande?"),
    ("fa", "درود، Mistral 7B با QLoRA چقدر هزینه داره؟"),
    ("tr", "Merhaba, Llama 3.1 8B LoRA için ücret ne kadar?"),
    ("tr", "selam, qwen3 8b qlora fiyati ne"),
    ("tr", "İyi günler, Mistral 7B QLoRA ile maliyeti nedir?"),
])
def test_greeting_model_method_and_price_gets_an_estimate(conversation, lang, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert last_intent(c) in ("estimate", "inform"), joined(replies)
    text = joined(replies)
    assert names_a_card(text), text
    assert ("KDV" in text) if lang == "tr" else ("مالیات" in text), text
    assert not not_understood(replies, lang)


# ------------------------------------------------------------------------- 5. cards under a price


def cards_under(usd: float):
    return [card for card in load_knowledge().gpus if card.price_usd_hour <= usd + 1e-9]


@pytest.mark.parametrize("lang,message,usd", [
    ("fa", "زیر ساعتی 0.8 دلار چه کارت‌هایی دارید؟", 0.8),
    ("fa", "kart haye zire saati 1 dolar chiast?", 1.0),
    ("tr", "saatlik 1,2 doların altında hangi GPU'lar var?", 1.2),
    ("tr", "saati 0,8 dolardan ucuz kartlariniz hangileri", 0.8),
])
def test_cards_under_a_price_are_listed_without_a_job(conversation, lang, message, usd):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    text = joined(replies)
    assert not not_understood(replies, lang), text
    cheap = cards_under(usd)
    assert cheap
    for card in cheap:
        assert card.name in text, text
        assert price_text(card.price_usd_hour, lang) in text, text
        vat = price_with_vat(card.price_usd_hour, load_knowledge().pricing.vat_rate, to_cent=True)
        assert price_text(vat, lang) in text, text
    for card in load_knowledge().gpus:
        if card.price_usd_hour > usd:
            assert card.name not in text, text


def test_cards_under_a_price_with_a_job_keeps_those_that_hold_it(conversation):
    c = conversation()
    c.say("Llama 3.1 8B با QLoRA")
    replies = c.say("کارت‌های زیر ساعتی 1 دلار کدوما هستن؟")
    assert_language(replies, "fa")
    text = joined(replies)
    assert not not_understood(replies, "fa"), text
    assert any(card.name in text for card in cards_under(1.0)), text
