"""End-to-end: Persian conversations through the REST channel against the real Rasa and action servers.

Written the way people type in chat (colloquial, with or without half-spaces, Persian/Arabic digits, Finglish
terms), apart from the NLU training examples. Figures are checked against the core library's own advice.
"""
from __future__ import annotations

import os

import pytest

from bot.present.render import faq_text
from tests.e2e.helpers import (assert_estimate, assert_language, expected_advice, images, is_persian, is_turkish,
                               joined, payloads, price_text, tracker_slots)

pytestmark = pytest.mark.e2e
FA = "fa"


def test_greeting_introduces_the_advisor_with_buttons(conversation):
    c = conversation()
    replies = c.say("سلام وقتتون بخیر")
    assert_language(replies, FA)
    assert "GPU" in joined(replies)
    assert "/estimate" in payloads(replies) and "/request_human" in payloads(replies)


def test_everything_in_one_message_gives_an_estimate_with_the_cheapest_card(conversation):
    c = conversation()
    replies = c.say("سلام، میخوام Llama 3.1 8B رو با QLoRA و طول توالی ۲۰۴۸ فاین‌تیون کنم، بودجه‌ام ۵۰ دلاره")
    advice = expected_advice(model="llama-3.1-8b", method="qlora", seq_len=2048, budget_usd=50)
    text = assert_estimate(replies, FA, best_card=advice.best.card_id, mentions=["Llama 3.1 8B", "2048"])
    assert price_text(advice.best.price_usd_hour, FA) in text
    slots = tracker_slots(c)
    assert slots["estimate_summary"]["best_card"] == advice.best.card_id
    assert slots["model_id"] == "llama-3.1-8b" and slots["language"] == "fa"


def test_values_across_turns_one_question_at_a_time(conversation):
    c = conversation()
    first = c.say("یه جی پی یو برای فاین تیون لازم دارم")
    assert "/inform{\"model_size_b\":8}" in payloads(first)          # asks for the model
    second = c.say("مدلم Qwen2.5 14B هست")
    assert set(payloads(second)) >= {'/inform{"method":"qlora"}', '/inform{"method":"lora"}',
                                     '/inform{"method":"full"}'}   # then the method, with buttons
    third = c.say('/inform{"method":"lora"}')
    assert_language(third, FA)
    assert '/inform{"seq_len":2048}' in payloads(third)
    fourth = c.say("4k")
    assert '/inform{"budget_unlimited":true}' in payloads(fourth)
    final = c.say("بودجه محدودیتی نداره")
    advice = expected_advice(model="qwen2.5-14b", method="lora", seq_len=4096, budget_unlimited=True)
    assert_estimate(final, FA, best_card=advice.best.card_id, mentions=["4096"])


def test_changing_the_method_after_an_estimate_gives_a_new_estimate(conversation):
    c = conversation()
    c.say("لاما ۸ میلیارد، کیولورا، ۲۰۴۸ توکن، بودجه ۳۰ دلار")
    replies = c.say("با LoRA چطور؟")
    assert_estimate(replies, FA, mentions=["LoRA"])
    slots = tracker_slots(c)
    assert slots["method"] == "lora" and slots["budget_usd"] == 30
    lora = expected_advice(model="llama-3.1-8b", method="lora", seq_len=2048, budget_usd=30)
    assert slots["estimate_summary"]["per_gpu_gib"] == round(lora.estimate.per_gpu_gib, 1)


def test_changing_the_sequence_length_with_persian_digits(conversation):
    c = conversation()
    c.say("مدل 7b با qlora و ۱۰۲۴ توکن میخوام، محدودیت بودجه ندارم")
    replies = c.say("با ۴۰۹۶ توکن چی؟")
    assert_estimate(replies, FA, mentions=["4096"])
    assert tracker_slots(c)["seq_len"] == 4096


def test_arabic_letters_and_digits_are_understood(conversation):
    c = conversation()
    replies = c.say("مدل ٧ ميليارد با روش QLoRA، طول ١٠٢٤ توكن، بودجه ٢٠ دلار")
    assert_estimate(replies, FA, mentions=["1024"])
    slots = tracker_slots(c)
    assert slots["model_size_b"] == 7 and slots["budget_usd"] == 20


def test_toman_budget_gets_a_usd_note_then_dollars_work(conversation):
    c = conversation()
    c.say("میخوام مدل ۸ میلیاردی رو با لورا و ۲۰۴۸ توکن آموزش بدم")
    note = c.say("حدود ۲ میلیون تومن")
    assert_language(note, FA)
    assert "USD" in joined(note) and tracker_slots(c)["budget_usd"] is None
    replies = c.say("باشه ۴۰ دلار")
    assert_estimate(replies, FA)
    assert tracker_slots(c)["budget_usd"] == 40


def test_faq_in_the_middle_of_the_form_is_answered_and_the_form_resumes(conversation):
    c = conversation()
    c.say("برای فاین تیون یه مدل ۱۳ میلیاردی چه کارتی لازمه")
    replies = c.say("اصلا فرق لورا و کیولورا چیه؟")
    text = joined(replies)
    assert_language(replies, FA)
    assert "4" in text and "QLoRA" in text                    # QLoRA: 4-bit base model
    assert '/inform{"method":"qlora"}' in payloads(replies)   # the method question again
    c.say("QLoRA")
    assert tracker_slots(c)["method"] == "qlora"


def test_kvkk_and_data_location(conversation):
    replies = conversation().say("دیتاهامون کجا نگهداری میشه؟ با KVKK مشکلی نداره؟")
    assert_language(replies, FA)
    assert joined(replies) == faq_text("kvkk", "fa", public_url=os.environ.get("ADVISOR_PUBLIC_URL"))
    assert "خارج از کشور" in joined(replies)


def test_checkpoints_are_lost_when_the_server_stops(conversation):
    replies = conversation().say("اگه سرور رو خاموش کنم چک پوینت هام میپره؟")
    assert_language(replies, FA)
    assert "S3" in joined(replies)


def test_prices_and_vat(conversation):
    replies = conversation().say("قیمتایی که گفتین با مالیات ارزش افزوده هست یا نه؟")
    assert_language(replies, FA)
    assert "20" in joined(replies)


def test_13b_on_a_24gb_card(conversation):
    replies = conversation().say("میشه یه مدل 13 میلیاردی رو رو کارت 24 گیگی فاین تیون کرد؟")
    assert_language(replies, FA)
    text = joined(replies)
    assert "QLoRA" in text and "24 GB" in text


def test_h100_or_a100(conversation):
    replies = conversation().say("H100 بگیرم بهتره یا A100؟")
    assert_language(replies, FA)
    text = joined(replies)
    assert "80 GB" in text and "4.99" in text and "2.24" in text


def test_e_invoice(conversation):
    replies = conversation().say("فاکتور الکترونیکی رسمی صادر می‌کنید؟")
    assert_language(replies, FA)
    assert "e-fatura" in joined(replies)


def test_full_fine_tuning_of_70b_needs_several_gpus_and_offers_a_quote(conversation):
    c = conversation()
    replies = c.say("میخوام لاما ۷۰ میلیارد رو کامل آموزش بدم، تمام پارامترها، طول ۴۰۹۶، محدودیت بودجه ندارم")
    # "لاما ۷۰ میلیارد" names no version: the newest Llama of that size, and the answer says which one it took
    advice = expected_advice(model="llama-3.3-70b", method="full", seq_len=4096, budget_unlimited=True)
    assert advice.needs_quote and advice.multi_gpu is not None
    text = assert_estimate(replies, FA, mentions=["Llama 3.3 70B", "جدیدترین نسخهٔ Llama"])
    assert advice.multi_gpu.name in text and str(advice.multi_gpu.count) in text
    assert {"/request_quote", "/request_human"} <= set(payloads(replies))
    assert tracker_slots(c)["estimate_summary"]["needs_quote"] is True


def test_training_volume_gives_time_and_total_cost(conversation):
    replies = conversation().say("مدل ۸ میلیاردی با لورا، ۲۰۴۸ توکن، ۵۰۰۰ نمونه با میانگین ۶۰۰ توکن و ۳ ایپاک، "
                                 "بودجه ۱۰۰ دلار")
    text = assert_estimate(replies, FA)
    assert "ساعت" in text or "دقیقه" in text
    advice = expected_advice(size_b=8, method="lora", seq_len=2048, budget_usd=100, examples=5000,
                             avg_tokens=600, epochs=3)
    assert advice.volume_tokens == 5000 * 600 * 3


def test_bot_challenge(conversation):
    replies = conversation().say("ببخشید شما آدم واقعی هستید یا ربات؟")
    assert_language(replies, FA)
    assert "ربات" in joined(replies)
    assert "/request_human" in payloads(replies)


def test_out_of_scope_is_polite_and_offers_what_it_can_do(conversation):
    replies = conversation().say("دستور پخت قرمه سبزی رو بلدی؟")
    assert_language(replies, FA)
    assert {"/estimate", "/request_human"} <= set(payloads(replies))


def test_two_failed_turns_in_a_row_offer_a_person(conversation):
    c = conversation()
    first = c.say("نظرت درباره بازی دیشب پرسپولیس چیه؟")
    assert "/request_human" in payloads(first)   # out-of-scope buttons
    second = c.say("هوای تهران فردا بارونیه؟")
    assert_language(second, FA)
    assert "همکاران پشتیبانی" in joined(second) and "/request_human" in payloads(second)


def test_emoji_only_gets_a_persian_rephrase_request(conversation):
    c = conversation()
    c.say("سلام")
    replies = c.say("🙂🙂🙂")
    assert_language(replies, FA)


def test_english_gets_a_short_answer_in_both_languages(conversation):
    replies = conversation().say("Hi, can you help me choose a GPU please?")
    text = joined(replies)
    assert any(is_persian(line) for line in text.splitlines())
    assert any(is_turkish(line) for line in text.splitlines())


def test_switching_to_turkish_mid_conversation(conversation):
    c = conversation()
    assert_language(c.say("سلام"), FA)
    replies = c.say("Merhaba, Türkçe devam edebilir miyiz? Fiyatlara KDV dahil mi?")
    assert_language(replies, "tr")
    assert tracker_slots(c)["language"] == "tr"


def test_message_without_language_signal_keeps_persian(conversation):
    c = conversation()
    c.say("سلام")
    replies = c.say("70B qlora 2048 50$")
    assert_estimate(replies, FA, mentions=["2048"])


def test_leaving_the_form(conversation):
    c = conversation()
    c.say("میخوام یه مدل رو فاین تیون کنم")
    replies = c.say("نه بیخیال، فعلا نمیخوام")
    assert_language(replies, FA)
    slots = tracker_slots(c)
    assert slots["requested_slot"] is None


def test_unknown_model_gets_suggestions(conversation):
    c = conversation()
    c.say("سلام، یه جی پی یو واسه فاین تیون لازم دارم")
    replies = c.say("llamaa")
    assert_language(replies, FA)
    assert any(p.startswith('/inform{"model_id":"llama') for p in payloads(replies))


def test_thanks_and_goodbye(conversation):
    c = conversation()
    assert "خواهش" in joined(c.say("خیلی ممنون، عالی بود"))
    bye = c.say("خداحافظ")
    assert_language(bye, FA)


def test_telegram_start_payload_greets(conversation):
    replies = conversation().say("/start")
    assert_language(replies, FA)
    assert "/estimate" in payloads(replies)


def test_estimate_chart_is_served_under_the_public_url(conversation):
    replies = conversation().say("مدل ۳۲ میلیاردی با QLoRA و ۲۰۴۸ توکن، بودجه ۲۰۰ دلار")
    assert images(replies)[0].startswith("http://localhost:8080/charts/")
