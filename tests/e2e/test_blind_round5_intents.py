"""Failure classes of the fifth blind run (issue 21, round 5: intents), through the real servers.

Every sentence here is our own (never the blind set's), and none is a training example:
1. small talk outside the product in Finglish (exchange rate, weather, a football score), and in Turkish typed
   without its letters: the polite out-of-scope answer, not "did not understand"; the Latin mash reader does not
   call Finglish words mash, a consonant written with two letters (kh, gh, sh, ch, zh) included;
2. a Finglish or Persian question after an own-card answer ("then which of your cloud cards?"): a question about
   the answer on the table, answered for the job of the earlier turn (kept), not the fallback or an FAQ;
3. a formal, letter-style request from a company's IT unit naming a model and a method: an estimate request with
   the model and the method read, not the other-workload answer; a formal request to serve a model without
   training it, or to work on images, still gets the other-workload answer.
"""
from __future__ import annotations

import pytest

from bot.assistant.components.latin_mash import is_latin_mash
from tests.e2e.helpers import (assert_language, domain_response as response, joined, last_intent, texts,
                               tracker_slots)

pytestmark = pytest.mark.e2e


def said(replies, name: str, lang: str) -> bool:
    return response(name, lang) in texts(replies)


# ------------------------------------------------------------------------- 1. small talk outside the product


@pytest.mark.parametrize("lang,opening,message", [
    ("fa", None, "salam, ghimate dollar too bazar azad emrooz chand shode?"),
    ("fa", "سلام", "havaye karaj emshab sard mishe?"),
    ("fa", "سلام وقتتون بخیر", "natijeye bazi sepahan va tractor chi shod?"),
    ("fa", None, "ghaymate bitcoin alan chande?"),
    ("tr", None, "bugun euro kac lira oldu?"),
    ("tr", "merhaba", "yarin bursada kar yagar mi?"),
    ("tr", "selam", "trabzonspor maci kac kac bitti?"),
])
def test_small_talk_outside_the_product_is_out_of_scope(conversation, lang, opening, message):
    c = conversation()
    if opening:
        c.say(opening)
    replies = c.say(message)
    assert_language(replies, lang)
    assert last_intent(c) == "out_of_scope", joined(replies)
    assert said(replies, "utter_out_of_scope", lang), joined(replies)
    assert not said(replies, "utter_default", lang), joined(replies)


@pytest.mark.parametrize("message", ["akhbare varzeshi", "tarikhche bakhsh", "eshgh", "dakhl va kharj",
                                     "ghimate dollar chande", "havaye shomal", "bazi emshab"])
def test_finglish_words_are_not_mash(message):
    assert not is_latin_mash(message)


@pytest.mark.parametrize("message", ["khghsh", "shchzhkh zhch", "qwpoeiru zkhtrw", "ghjtkrw zcxvbnq"])
def test_mash_with_finglish_letter_pairs_is_still_mash(message):
    assert is_latin_mash(message)


# ------------------------------------------------------------------------- 2. a follow-up after an own-card answer


@pytest.mark.parametrize("lang,own,followup", [
    ("fa", "یه RTX 3090 خودم دارم، میخوام llama 3.1 8b رو با qlora آموزش بدم، جا میشه؟",
     "khob hala too cloud-e shoma kodoom karto begiram behtare?"),
    ("fa", "یه RTX 3090 خودم دارم، میخوام llama 3.1 8b رو با qlora آموزش بدم، جا میشه؟",
     "age az server haye shoma bekham kodoom gpu arzoontar dar miad?"),
    ("fa", "کارت خودم 4090 هست، mistral 7b رو با qlora میشه روش آموزش داد؟",
     "خب اگه بخوام از شما کارت بگیرم، کدومش به‌صرفه‌تره؟"),
    ("tr", "Evde bir RTX 3090 var, Llama 3.1 8B'yi QLoRA ile eğitmeye yeter mi?",
     "o zaman sizin sunucularınızda hangi GPU daha hesaplı olur?"),
])
def test_a_followup_after_an_own_card_answer_keeps_the_job(conversation, lang, own, followup):
    c = conversation()
    c.say(own)
    assert last_intent(c) == "own_card"
    before = tracker_slots(c)
    replies = c.say(followup)
    assert_language(replies, lang)
    assert last_intent(c) == "ask_about_answer", joined(replies)
    assert not said(replies, "utter_default", lang) and not said(replies, "utter_out_of_scope", lang)
    after = tracker_slots(c)
    assert (after["model_id"], after["method"]) == (before["model_id"], before["method"]), after
    # The answer is about the job of the earlier turn: it names a catalogue card and a price.
    answer = joined(replies)
    assert any(card in answer for card in ("A40", "L4", "L40S", "A100", "H100", "RTX")), answer
    assert ("دلار" if lang == "fa" else "dolar") in answer, answer


# ------------------------------------------------------------------------- 3. formal requests


@pytest.mark.parametrize("lang,message,model_id,method", [
    ("fa", "با سلام؛ احتراماً واحد انفورماتیک این سازمان برنامهٔ آموزش کامل مدل Llama 3.1 8B روی مستندات داخلی را "
           "دارد. خواهشمند است پیکربندی سخت‌افزاری پیشنهادی و برآورد هزینه را اعلام فرمایید.",
     "llama-3.1-8b", "full"),
    ("fa", "ضمن تشکر، مقتضی است هزینه و مشخصات GPU لازم برای تنظیم مدل Qwen2.5 7B به روش LoRA بر روی "
           "آرشیو مکاتبات اداری این شرکت اعلام گردد.", "qwen2.5-7b", "lora"),
    ("tr", "Sayın yetkili, bilgi işlem daire başkanlığımız Llama 3.1 8B modelinin kurum içi belgelerle tam ince "
           "ayarını planlamaktadır; önerilen yapılandırma ile maliyetin tarafımıza iletilmesini rica ederiz.",
     "llama-3.1-8b", "full"),
    ("tr", "Merhabalar, şirketimiz Qwen2.5 7B modelini iç raporlarımız üzerinde QLoRA yöntemiyle eğitmeyi "
           "düşünmektedir. Gerekli donanım ve tahmini ücret konusunda bilgi verebilir misiniz?",
     "qwen2.5-7b", "qlora"),
])
def test_a_formal_request_with_a_model_and_a_method_is_an_estimate(conversation, lang, message, model_id, method):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert last_intent(c) in ("estimate", "inform"), joined(replies)
    assert not said(replies, "utter_other_workload", lang), joined(replies)
    slots = tracker_slots(c)
    assert (slots["model_id"], slots["method"]) == (model_id, method), slots
    assert ("دلار" if lang == "fa" else "dolar") in joined(replies), joined(replies)


@pytest.mark.parametrize("lang,message", [
    ("fa", "با سلام و احترام، خواهشمند است شرایط و هزینهٔ میزبانی مدل زبانی این شرکت برای پاسخ‌گویی به "
           "کاربران از طریق API را اعلام فرمایید."),
    ("fa", "احتراماً، این سازمان قصد دارد یک مدل طبقه‌بندی تصویر برای عکس‌های بایگانی آموزش دهد؛ آیا امکانش "
           "روی سرورهای شما هست؟"),
    ("tr", "Sayın yetkili, kurumumuzun dil modelini çalışanlara API üzerinden sunmak için barındırma "
           "koşullarınızı öğrenmek istiyoruz."),
    ("tr", "Firmamız arşiv fotoğraflarını sınıflandıracak bir görüntü modeli eğitmek istemektedir, bu mümkün müdür?"),
])
def test_a_formal_request_to_serve_or_for_images_stays_other_workload(conversation, lang, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert last_intent(c) == "other_workload", joined(replies)
    assert said(replies, "utter_other_workload", lang), joined(replies)
