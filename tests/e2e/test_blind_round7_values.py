"""End-to-end (REST, real servers): the value and dialogue classes of round 7, in Persian (also typed in Latin
letters) and Turkish, with sentences written for these tests (never the blind set's):
1. a GPU count said colloquially ("4 ta gpu", "se ta kart", «دو تا کارت», "4 GPU'lu", "2 adet A100") comes with
   the model and the method of the same message, and the answer is the multi-GPU plan for that count; a number
   with only a counter never answers the budget question;
2. Qwen3's MoE name in Persian letters or with spaces and hyphens is the MoE preset, answered as such;
3. a token count before the count of examples is each example's length, and a sequence length said before stays;
4. a stack named after the first answer, which chose the stack itself, is compared with the stack that answer used;
5. a language switch asked in the same message as a value: the reply is in the new language and the value kept.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bot.advisor.stacks import load_stacks
from bot.present.formatting import gb
from tests.e2e.helpers import (NoRepeatTurns, assert_language, expected_advice, joined, names_a_card, price_text,
                               settle_estimate, tracker_slots)

pytestmark = pytest.mark.e2e
STACKS = load_stacks()
DIALOGUE = yaml.safe_load((Path(__file__).resolve().parents[2] / "knowledge" / "dialogue.yml").read_text("utf-8"))


def stack_change_lead(lang: str, new: str, previous: str) -> str:
    """The start of the stack-change line ("Unsloth yerine Axolotl ile"), from the sentence in knowledge/."""
    return DIALOGUE["stack_change"][lang].split(":")[0].format(stack=STACKS.get(new).name,
                                                               previous=STACKS.get(previous).name)


# ------------------------------------------------------------------------------- 1. GPU counts

@pytest.mark.parametrize("lang,message,model,method,gpus", [
    ("fa", "llama 70b ro ba 4 ta H100 lora mikhaym fine tune konim", "llama-3.3-70b", "lora", 4),
    ("fa", "qwen 14b lora, 2 ta A100 darim", "qwen3-14b", "lora", 2),
    ("fa", "llama 70b qlora, se ta kart mikhaym", "llama-3.3-70b", "qlora", 3),
    ("fa", "لاما ۷۰ میلیارد رو با دو تا کارت H100 و لورا آموزش می‌دیم", "llama-3.3-70b", "lora", 2),
    ("fa", "با ۴ تا جی‌پی‌یو می‌خوایم لاما ۷۰ میلیارد رو لورا کنیم", "llama-3.3-70b", "lora", 4),
    ("tr", "llama 3.1 70b lora, 4 GPU'lu sunucuda eğiteceğiz", "llama-3.1-70b", "lora", 4),
    ("tr", "llama 3.1 70b qlora için 2 adet A100 kiralamayı düşünüyoruz", "llama-3.1-70b", "qlora", 2),
    ("tr", "qwen 32b lora yapacağız, dört kartla", "qwen3-32b", "lora", 4),
])
def test_a_colloquial_gpu_count_gives_the_multi_gpu_plan(conversation, lang, message, model, method, gpus):
    turns = NoRepeatTurns(conversation())
    replies = turns.say(message)
    assert_language(replies, lang)
    slots = turns.slots()
    assert (slots.get("model_id"), slots.get("method"), slots.get("gpus")) == (model, method, gpus), slots
    assert slots.get("budget_usd") is None and slots.get("seq_len") is None, slots
    text = joined(replies)
    advice = expected_advice(model=model, method=method, seq_len=2048, gpus=gpus)
    card = advice.recommendation.card
    assert card.gpus == gpus and card.name in text, text
    # the price of the whole set of cards and the memory each card needs, as the plan for that count has them
    assert price_text(card.price_usd_hour * gpus, lang) in text, text
    assert gb(advice.estimate.per_gpu_gib, lang) in text, text
    settle_estimate(turns, lang)  # (never the quote offer twice in a row on the way)
    assert turns.slots()["estimate_summary"]["best_card"] is not None


@pytest.mark.parametrize("lang,job,count", [
    ("fa", "llama 8b qlora, 4096 token", "3 ta"),
    ("fa", "لاما ۸ میلیارد کیولورا، طول توالی ۴۰۹۶", "۳ تا"),
    ("tr", "llama 8b qlora, 4096 token", "3 tane"),
])
def test_a_counted_number_does_not_answer_the_budget_question(conversation, lang, job, count):
    c = conversation()
    c.say(job)
    assert tracker_slots(c).get("requested_slot") == "budget", tracker_slots(c)
    replies = c.say(count)
    assert_language(replies, lang)
    slots = tracker_slots(c)
    assert (slots.get("budget_usd"), slots.get("model_size_b")) == (None, 8.0), slots


# ------------------------------------------------------------------------------- 2. Qwen3 MoE names

@pytest.mark.parametrize("lang,message", [
    ("fa", "کوئن ۳ ۳۰ بی ای ۳ بی رو با کیولورا می‌خوام"),
    ("fa", "کوین۳-۳۰بی-ای۳بی کیولورا چه کارتی لازم داره؟"),
    ("fa", "qwen3 30b-a-3b ro ba qlora mikham"),
    ("tr", "qwen 3 30b a 3b modelini qlora ile eğitmek istiyoruz"),
    ("tr", "kwen3 30ba3b qlora icin hangi kart"),
])
def test_a_qwen_moe_name_however_written_is_answered_as_the_moe(conversation, lang, message):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    slots = tracker_slots(c)
    assert (slots.get("model_id"), slots.get("method")) == ("qwen3-30b-a3b", "qlora"), slots
    text = joined(replies)
    assert "Qwen3 30B-A3B" in text and names_a_card(text), text
    advice = expected_advice(model="qwen3-30b-a3b", method="qlora", seq_len=2048)
    assert gb(advice.estimate.per_gpu_gib, lang) in text, text


# ------------------------------------------------------------------------------- 3. length before count

@pytest.mark.parametrize("lang,message,avg,examples", [
    ("fa", "mistral 7b qlora, har nemune 300 token, 5000 ta nemune darim", 300, 5000),
    ("fa", "لاما ۸ میلیارد با لورا؛ نمونه‌های ۶۰۰ توکنی دارم، ۸ هزار تا", 600, 8000),
    ("tr", "llama 8b lora, 400 tokenlik 12 bin örnek", 400, 12000),
    ("tr", "qwen 7b qlora yapacağız, 512 token'lık 3000 kayıt var", 512, 3000),
])
def test_a_length_before_the_count_is_each_examples_length(conversation, lang, message, avg, examples):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    slots = tracker_slots(c)
    assert (slots.get("avg_tokens"), slots.get("examples"), slots.get("seq_len")) == (avg, examples, None), slots
    assert names_a_card(joined(replies)), joined(replies)


@pytest.mark.parametrize("lang,job,volume,avg,examples", [
    ("tr", "llama 8b lora, 4096 token context", "400 tokenlik 12 bin örnek var", 400, 12000),
    ("tr", "mistral 7b qlora, dizi uzunluğu 4096", "512 token'lık 3000 kayıt", 512, 3000),
    ("fa", "لاما ۸ میلیارد لورا با طول توالی ۴۰۹۶", "نمونه‌های ۷۰۰ توکنی داریم، ۶ هزار تا", 700, 6000),
    ("fa", "mistral 7b qlora, context 4096", "har nemune 350 token, 9000 ta", 350, 9000),
])
def test_each_examples_length_leaves_the_stated_sequence_length(conversation, lang, job, volume, avg, examples):
    c = conversation()
    c.say(job)
    assert tracker_slots(c).get("seq_len") == 4096
    replies = c.say(volume)
    assert_language(replies, lang)
    slots = tracker_slots(c)
    assert (slots.get("seq_len"), slots.get("avg_tokens"), slots.get("examples")) == (4096, avg, examples), slots


# ------------------------------------------------------------------------------- 4. stack change

@pytest.mark.parametrize("lang,job,followup,new", [
    ("tr", "qwen3 30b a3b qlora", "Axolotl kullansam ne değişir?", "axolotl"),
    ("tr", "qwen3-30b-a3b qlora yapacağız", "peki torchtune ile olsa?", "torchtune"),
    ("fa", "کوئن ۳ ۳۰ بی ای ۳ بی با کیولورا", "اگه با اکسولوتل کار کنیم چی میشه؟", "axolotl"),
    ("fa", "qwen3 30b a3b ba qlora", "با Transformers و PEFT معمولی چی میشه؟", "hf"),
    ("fa", "qwen3 30b a3b ba qlora mikham", "agar ba axolotl kar konim chi mishe?", "axolotl"),
    ("fa", "qwen3 30b a3b ro qlora mikonim", "age ba transformers va peft bashe chi?", "hf"),
])
def test_a_stack_after_the_first_answer_is_compared_with_the_stack_it_used(conversation, lang, job, followup, new):
    c = conversation()
    c.say(job)
    used = expected_advice(model="qwen3-30b-a3b", method="qlora", seq_len=2048).plan.stack
    assert used != STACKS.default and used != new  # the first answer chose its stack itself
    replies = c.say(followup)
    assert_language(replies, lang)
    text = joined(replies)
    assert stack_change_lead(lang, new, used) in text, text
    assert stack_change_lead(lang, new, STACKS.default) not in text, text
    assert tracker_slots(c).get("stack") == new


@pytest.mark.parametrize("lang,job,followup", [
    ("tr", "qwen3 30b a3b qlora", "Unsloth ile yapsak ne olur?"),
    ("fa", "کوئن ۳ ۳۰ بی ای ۳ بی با کیولورا", "اگه با آنسلوث کار کنم چی؟"),
])
def test_the_stack_the_first_answer_used_changes_nothing(conversation, lang, job, followup):
    c = conversation()
    c.say(job)
    used = expected_advice(model="qwen3-30b-a3b", method="qlora", seq_len=2048).plan.stack
    assert used == "unsloth"
    replies = c.say(followup)
    assert_language(replies, lang)
    same = DIALOGUE["stack_same"][lang].format(stack=STACKS.get(used).name)
    assert same in joined(replies), joined(replies)


# ------------------------------------------------------------------------------- 5. language switch with a value

@pytest.mark.parametrize("first_lang,job,switch,lang,slot,value", [
    ("fa", "لاما ۸ میلیارد با کیولورا می‌خوام", "Türkçe devam edelim, bütçem 50 dolar", "tr", "budget_usd", 50.0),
    ("fa", "mistral 7b ro ba lora mikham", "Türkçe yazar mısınız? 4096 token kullanacağız", "tr", "seq_len", 4096),
    ("tr", "llama 3.1 8b qlora yapacağız", "از اینجا به بعد فارسی بنویس، بودجه‌ام ۴۰ دلاره", "fa", "budget_usd",
     40.0),
    ("tr", "qwen 7b lora eğitmek istiyoruz", "لطفا فارسی جواب بدید، طول توالی ۴۰۹۶ است", "fa", "seq_len", 4096),
])
def test_a_language_switch_with_a_value_keeps_the_value(conversation, first_lang, job, switch, lang, slot, value):
    c = conversation()
    assert_language(c.say(job), first_lang)
    replies = c.say(switch)
    assert_language(replies, lang)
    slots = tracker_slots(c)
    assert (slots.get("language"), slots.get(slot)) == (lang, value), slots
    # from then on a message without a language of its own is answered in the new language
    assert_language(c.say("H100?"), lang)
