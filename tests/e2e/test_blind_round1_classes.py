"""End-to-end (REST, real servers): the failure classes the first run of the blind set showed (2026-12-03), each in
both languages with sentences written for these tests (never the blind set's; tests/test_heldout_set.py checks
that no blind sentence is in the training data):
- a count of examples with one length ("N examples of M tokens"): the card and the time, never a refusal;
- a whole request that also asks for the price with KDV or sets an hourly limit: the estimate, not the price FAQ;
- a card named in the request: the answer says whether that card holds the job;
- two cards compared before any model is known: both cards with memory and price, then the model question;
- the price question naming a card: that card's price with and without KDV;
- Turkish typed without Turkish letters: a Turkish answer;
- training a vision or image model: the polite "not what I estimate", with what the servers offer.
"""
from __future__ import annotations

import pytest

from tests.e2e.helpers import assert_language, joined, names_a_card, tracker_slots

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("lang,message,examples", [
    ("fa", "Phi-4 رو با LoRA آموزش میدیم، ۸۰۰۰ نمونهٔ ۵۱۲ توکنی، سه دور", 8000),
    ("tr", "gemma 2 9b qlora, 12000 örnek her biri 768 token, 2 epoch", 12000),
])
def test_a_count_of_examples_with_one_length_gets_the_card(conversation, lang, message, examples):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert names_a_card(joined(replies)), joined(replies)
    assert tracker_slots(c)["examples"] == examples


@pytest.mark.parametrize("lang,message", [
    ("fa", "Llama 3.1 8B با QLoRA، قیمتش با مالیات چقدر میشه؟"),
    ("tr", "mistral 7b lora icin KDV dahil saatlik fiyat ne olur?"),
])
def test_a_whole_request_asking_the_price_gets_the_estimate(conversation, lang, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert names_a_card(joined(replies)), joined(replies)


@pytest.mark.parametrize("lang,message,card", [
    ("fa", "qwen2.5 7b رو با full fine tune روی یه RTX 4090 میشه آموزش داد؟", "RTX 4090"),
    ("tr", "Llama 3.1 8B QLoRA icin tek bir L4 yeterli olur mu?", "L4"),
])
def test_a_card_named_in_the_request_is_answered_about(conversation, lang, message, card):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    text = joined(replies)
    assert names_a_card(text) and card in text, text


@pytest.mark.parametrize("lang,message,cards", [
    ("fa", "A100 بهتره یا H100؟ هنوز مدل رو انتخاب نکردم", ("A100", "H100")),
    ("tr", "L40S mi A40 mı daha iyi, henüz model seçmedim", ("L40S", "A40")),
])
def test_two_cards_before_any_model_are_both_described(conversation, lang, message, cards):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    text = joined(replies)
    assert all(card in text for card in cards), text


@pytest.mark.parametrize("lang,message,card", [
    ("fa", "ساعتی B200 چند درمیاد؟", "B200"),
    ("tr", "L40S'in saatlik ücreti ne kadar?", "L40S"),
])
def test_the_price_question_naming_a_card_gives_that_cards_price(conversation, lang, message, card):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert card in joined(replies), joined(replies)


def test_turkish_without_turkish_letters_is_answered_in_turkish(conversation):
    c = conversation()
    replies = c.say("mistral 7b lora ile ogretecegiz, seq 1024")
    assert_language(replies, "tr")
    assert names_a_card(joined(replies)), joined(replies)


@pytest.mark.parametrize("lang,message", [
    ("fa", "یه مدل تشخیص پلاک خودرو دارم، می‌خوام با عکسامون آموزشش بدم، چه کارتی؟"),
    ("tr", "kendi çizimlerimizle bir resim üretme modelini eğitmek istiyoruz, hangi GPU?"),
])
def test_a_vision_or_image_model_gets_what_the_servers_offer(conversation, lang, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    assert any((r.get("buttons") or []) and any(b.get("payload") == "/request_human" for b in r["buttons"])
               for r in replies), joined(replies)
    assert tracker_slots(c).get("estimate_summary") is None
