"""End-to-end: Turkish conversations through the REST channel against the real Rasa and action servers.

Written the way people type in chat (with and without Turkish letters, English terms mixed in, numbers as "4 bin"
or "2.048"), apart from the NLU training examples. Figures are checked against the core library's own advice.
"""
from __future__ import annotations

import os

import pytest

from bot.present.render import faq_text
from tests.e2e.helpers import (assert_estimate, assert_language, expected_advice, images, is_persian, is_turkish,
                               joined, payloads, price_text, tracker_slots)

pytestmark = pytest.mark.e2e
TR = "tr"


def test_greeting_in_turkish(conversation):
    replies = conversation().say("Merhabalar, iyi günler")
    assert_language(replies, TR)
    assert "/estimate" in payloads(replies)


def test_everything_in_one_message(conversation):
    c = conversation()
    replies = c.say("Selam, Llama 3.1 8B modelini QLoRA ile 2048 token uzunlukla eğitmek istiyorum, bütçem 50 dolar")
    advice = expected_advice(model="llama-3.1-8b", method="qlora", seq_len=2048, budget_usd=50)
    text = assert_estimate(replies, TR, best_card=advice.best.card_id, mentions=["Llama 3.1 8B", "2048"])
    assert price_text(advice.best.price_usd_hour, TR) in text
    assert tracker_slots(c)["estimate_summary"]["best_card"] == advice.best.card_id


def test_values_across_turns(conversation):
    c = conversation()
    first = c.say("Merhaba, fine-tuning için hangi GPU'yu kiralamalıyım?")
    assert_language(first, TR)
    assert '/inform{"model_size_b":8}' in payloads(first)
    second = c.say("modelim Qwen2.5 14B")
    assert '/inform{"method":"qlora"}' in payloads(second)
    third = c.say("lora")
    assert '/inform{"seq_len":2048}' in payloads(third)
    fourth = c.say("4 bin")
    assert_language(fourth, TR)
    assert '/inform{"budget_unlimited":true}' in payloads(fourth)
    final = c.say('/inform{"budget_unlimited":true}')
    advice = expected_advice(model="qwen2.5-14b", method="lora", seq_len=4096, budget_unlimited=True)
    assert_estimate(final, TR, best_card=advice.best.card_id, mentions=["4096"])


def test_lora_olursa_after_an_estimate(conversation):
    c = conversation()
    c.say("8B model, QLoRA, 2048 token, bütçe 40 dolar")
    replies = c.say("LoRA olursa?")
    assert_estimate(replies, TR, mentions=["LoRA"])
    slots = tracker_slots(c)
    assert slots["method"] == "lora" and slots["seq_len"] == 2048 and slots["budget_usd"] == 40


def test_budget_changed_after_an_estimate(conversation):
    c = conversation()
    c.say("Mistral 7B'yi QLoRA ile 1024 token ile eğiteceğim, bütçem 30 dolar")
    replies = c.say("bütçem aslında 100 dolar")
    text = assert_estimate(replies, TR)
    assert "100 dolar" in text
    assert tracker_slots(c)["budget_usd"] == 100


def test_sequence_length_changed_after_an_estimate(conversation):
    c = conversation()
    c.say("13B modeli QLoRA ile 2048 token ile eğitmek istiyorum, bütçe sınırı yok")
    replies = c.say("4096 token olursa?")
    assert_estimate(replies, TR, mentions=["4096"])


def test_turkish_without_diacritics(conversation):
    c = conversation()
    replies = c.say("merhaba 7b modeli qlora ile egitmek istiyorum, 1024 token, butce 20 dolar")
    assert_estimate(replies, TR, mentions=["1024"])
    assert tracker_slots(c)["language"] == "tr"


def test_lira_budget_gets_the_usd_note(conversation):
    c = conversation()
    c.say("8B modeli LoRA ile 2048 token ile eğitmek istiyorum")
    note = c.say("bütçem 5000 TL")
    assert_language(note, TR)
    assert "USD" in joined(note) and tracker_slots(c)["budget_usd"] is None
    replies = c.say("tamam, 150 dolar")
    assert_estimate(replies, TR)
    assert tracker_slots(c)["budget_usd"] == 150


def test_no_budget_limit_typed(conversation):
    c = conversation()
    c.say("Gemma 2 9B, QLoRA, 2048 token")
    replies = c.say("butce yok")
    assert_estimate(replies, TR)
    assert tracker_slots(c)["budget_unlimited"] is True


def test_faq_mid_form_then_the_form_resumes(conversation):
    c = conversation()
    c.say("Llama 3.1 8B için GPU önerisi istiyorum")
    replies = c.say("bu arada LoRA ile QLoRA arasındaki fark ne?")
    assert_language(replies, TR)
    assert "4" in joined(replies) and '/inform{"method":"qlora"}' in payloads(replies)
    c.say("qlora")
    assert tracker_slots(c)["method"] == "qlora"


def test_kvkk(conversation):
    replies = conversation().say("verilerimiz nerede tutuluyor, KVKK'ya uygun mu?")
    assert_language(replies, TR)
    assert joined(replies) == faq_text("kvkk", "tr", public_url=os.environ.get("ADVISOR_PUBLIC_URL"))
    assert "yurt dışı" in joined(replies)


def test_checkpoints(conversation):
    replies = conversation().say("sunucuyu kapatinca checkpointler silinir mi?")
    assert_language(replies, TR)
    assert "S3" in joined(replies)


def test_prices_and_kdv(conversation):
    replies = conversation().say("fiyatlara KDV dahil mi?")
    assert_language(replies, TR)
    assert "%20" in joined(replies)


def test_13b_on_24gb(conversation):
    replies = conversation().say("24 GB kartta 13B model eğitilir mi sizce?")
    assert_language(replies, TR)
    assert "QLoRA" in joined(replies) and "24 GB" in joined(replies)


def test_h100_vs_a100(conversation):
    replies = conversation().say("H100 mü alsam A100 mü?")
    assert_language(replies, TR)
    assert "80 GB" in joined(replies) and "4,99" in joined(replies)


def test_e_invoice(conversation):
    replies = conversation().say("e-fatura kesiyor musunuz?")
    assert_language(replies, TR)
    assert "e-fatura" in joined(replies)


def test_support_languages(conversation):
    replies = conversation().say("Destek ekibiniz Türkçe konuşuyor mu?")
    assert_language(replies, TR)
    assert "Türkçe" in joined(replies)


def test_70b_full_training_needs_several_gpus_and_offers_a_quote(conversation):
    c = conversation()
    replies = c.say("70B modeli tam eğitimle 4096 token ile eğitmek istiyorum, bütçe sınırı yok")
    advice = expected_advice(size_b=70, method="full", seq_len=4096, budget_unlimited=True)
    text = assert_estimate(replies, TR)
    assert advice.multi_gpu.name in text and str(advice.multi_gpu.count) in text
    assert {"/request_quote", "/request_human"} <= set(payloads(replies))


def test_volume_gives_hours_and_cost(conversation):
    replies = conversation().say("8B model, LoRA, 2048 token, 10 bin örnek, ortalama 500 token, 2 epoch, "
                                 "bütçem 50 dolar")
    text = assert_estimate(replies, TR)
    assert "saat" in text or "dakika" in text


def test_bot_challenge(conversation):
    c = conversation()
    c.say("merhaba")
    replies = c.say("sen gerçek bir insan mısın yoksa bot musun?")
    assert_language(replies, TR)
    assert "bot" in joined(replies)


def test_out_of_scope(conversation):
    replies = conversation().say("bana bir kek tarifi verir misin?")
    assert_language(replies, TR)
    assert {"/estimate", "/request_human"} <= set(payloads(replies))


def test_two_failed_turns_offer_a_person(conversation):
    c = conversation()
    c.say("bana bir kek tarifi verir misin?")
    replies = c.say("yarın İstanbul'da hava nasıl olacak?")
    assert_language(replies, TR)
    assert "/request_human" in payloads(replies) and "destek ekibimizden" in joined(replies)


def test_english_gets_both_languages(conversation):
    c = conversation()
    c.say("merhaba")
    replies = c.say("hello, do you speak english?")
    lines = joined(replies).splitlines()
    assert any(is_turkish(line) for line in lines) and any(is_persian(line) for line in lines)
    assert tracker_slots(c)["language"] == "tr"


def test_no_signal_keeps_turkish(conversation):
    c = conversation()
    c.say("merhaba")
    replies = c.say("7B QLoRA 4096 20$")
    assert_estimate(replies, TR, mentions=["4096"])


def test_switch_to_persian(conversation):
    c = conversation()
    c.say("merhaba")
    replies = c.say("سلام، میشه فارسی صحبت کنیم؟ قیمت‌ها با مالیاته؟")
    assert_language(replies, "fa")


def test_thanks_and_goodbye(conversation):
    c = conversation()
    assert_language(c.say("çok teşekkürler, çok yardımcı oldunuz"), TR)
    assert_language(c.say("hoşça kalın"), TR)


def test_emoji_in_turkish_conversation(conversation):
    c = conversation()
    c.say("merhaba")
    assert_language(c.say("👍👍"), TR)


def test_chart_image(conversation):
    replies = conversation().say("Qwen2.5 32B QLoRA 2048 token bütçe 200 dolar")
    assert images(replies) and images(replies)[0].endswith(".png")
