"""End-to-end (REST, real servers): the chat answers the 2025-2026 model families by name (issue 9), reads values as
people type them (issue 13 #2, #6).

Each family in Persian and in Turkish (MoE models included), a pasted config.json read or refused with the missing
key named, a model name we do not know (never "you gave only the size"), Turkish case suffixes and Persian particles,
hourly price caps, "no budget limit" inside a longer message, a contact inside a sentence. Sentences written for
these tests; the expected figures come from the core library for the same values.
"""
from __future__ import annotations

import json

import pytest

from bot.advisor.knowledge import load_knowledge
from bot.present.render import gb
from tests.e2e.helpers import assert_estimate, assert_language, expected_advice, joined, tracker_slots

pytestmark = pytest.mark.e2e

ONLY_SIZE = {"fa": "فقط اندازه مدل", "tr": "Yalnızca model boyutunu"}

# (lang, message, preset id, method, seq_len, budget in USD or None for "no limit")
FAMILY_CONVERSATIONS = [
    # Qwen3 (dense and MoE)
    ("fa", "می‌خوام Qwen3 8B رو با کیولورا فاین‌تیون کنم، طول توالی ۲۰۴۸ توکن، بودجه ۴۰ دلار",
     "qwen3-8b", "qlora", 2048, 40),
    ("tr", "Qwen3'ü 14B olarak LoRA ile eğitmek istiyoruz, 4096 token, bütçemiz 80 dolar",
     "qwen3-14b", "lora", 4096, 80),
    ("fa", "Qwen3-30B-A3B رو با لورا و ۲۰۴۸ توکن آموزش بدیم، محدودیت بودجه نداریم",
     "qwen3-30b-a3b", "lora", 2048, None),
    ("tr", "qwen3 30b a3b'yi qlora ile 2048 token eğitsek, bütçe sınırımız yok", "qwen3-30b-a3b", "qlora", 2048, None),
    # Qwen3.5
    ("fa", "مدل Qwen3.5 9B رو با کیولورا و ۴۰۹۶ توکن، بودجه ۵۰ دلار", "qwen3.5-9b", "qlora", 4096, 50),
    ("tr", "Qwen3.5-35B-A3B'yi QLoRA ile 2048 token ile eğitsek, bütçe 100 dolar", "qwen3.5-35b-a3b", "qlora", 2048,
     100),
    # Gemma 3
    ("fa", "جما ۳ دوازده میلیاردی با کیولورا و ۴۰۹۶ توکن، بودجه ۶۰ دلار", "gemma-3-12b", "qlora", 4096, 60),
    ("tr", "gemma-3-27b-it'yi LoRA ile 2048 token ile eğitmek istiyorum, 150 dolar", "gemma-3-27b", "lora", 2048, 150),
    # Gemma 4 (dense and MoE)
    ("fa", "Gemma 4 31B رو با کیولورا، ۲۰۴۸ توکن، بودجه ۱۰۰ دلار", "gemma-4-31b", "qlora", 2048, 100),
    ("tr", "gemma 4 26b a4b modelini qlora ile 4096 token ile eğitmek istiyorum, bütçe önemli değil",
     "gemma-4-26b-a4b", "qlora", 4096, None),
    # gpt-oss (MoE)
    ("fa", "جی پی تی او اس اس ۲۰ بی رو با لورا آموزش بدیم، طول توالی ۲۰۴۸ توکن، بودجه ۷۰ دلار",
     "gpt-oss-20b", "lora", 2048, 70),
    ("tr", "gpt oss 20b'yi QLoRA ile 4096 token eğitmek istiyoruz, para sorun değil", "gpt-oss-20b", "qlora", 4096,
     None),
    # Llama 3.3
    ("fa", "لاما ۳.۳ ۷۰ میلیارد رو با کیولورا، ۲۰۴۸ توکن، بودجه ۲۰۰ دلار", "llama-3.3-70b", "qlora", 2048, 200),
    ("tr", "Llama 3.3 70B'yi QLoRA ile eğitmek istiyorum, 4096 token, 300 dolar", "llama-3.3-70b", "qlora", 4096, 300),
    # Llama 4 (MoE)
    ("fa", "Llama 4 Scout رو با لورا و ۲۰۴۸ توکن فاین‌تیون کنیم، محدودیت بودجه نداریم", "llama-4-scout", "lora",
     2048, None),
    ("tr", "llama 4 maverick'i qlora ile 2048 token eğitsek, bütçemizde tavan yok", "llama-4-maverick", "qlora", 2048,
     None),
    # Mistral Small / Magistral
    ("fa", "Mistral Small 3.2 24B رو با کیولورا و ۴۰۹۶ توکن، بودجه ۵۰ دلار", "mistral-small-3.2-24b", "qlora",
     4096, 50),
    ("tr", "Magistral Small'u LoRA ile 2048 token ile eğitmek istiyoruz, 60 dolar", "magistral-small", "lora", 2048,
     60),
    # Mixtral (MoE)
    ("fa", "میکسترال ۸ در ۷ بی رو با کیولورا، ۲۰۴۸ توکن، بودجه ۱۰۰ دلار", "mixtral-8x7b", "qlora", 2048, 100),
    ("tr", "mixtral 8x22b'yi qlora ile 2048 token eğitmek istiyoruz, bütçe sınırı yok", "mixtral-8x22b", "qlora",
     2048, None),
    # Phi-4
    ("fa", "فای ۴ رو با لورا و ۲۰۴۸ توکن آموزش بدیم، بودجه ۳۰ دلار", "phi-4", "lora", 2048, 30),
    ("tr", "Phi-4-mini'yi LoRA ile 4096 token ile eğitmek istiyorum, bütçem 20 dolar", "phi-4-mini", "lora", 4096, 20),
    # DeepSeek-R1 distills
    ("fa", "DeepSeek-R1-Distill-Qwen-7B رو با کیولورا و ۲۰۴۸ توکن، بودجه ۲۵ دلار", "deepseek-r1-distill-qwen-7b",
     "qlora", 2048, 25),
    ("tr", "r1 distill llama 8b yi LoRA ile 2048 token eğitmek istiyoruz, 40 dolar", "deepseek-r1-distill-llama-8b",
     "lora", 2048, 40),
]


@pytest.mark.parametrize("lang,message,preset_id,method,seq_len,budget", FAMILY_CONVERSATIONS,
                         ids=[f"{row[0]}-{row[2]}-{i}" for i, row in enumerate(FAMILY_CONVERSATIONS)])
def test_each_family_is_answered_by_name(conversation, lang, message, preset_id, method, seq_len, budget):
    c = conversation()
    replies = c.say(message)
    display = load_knowledge().model(preset_id).display
    text = assert_estimate(replies, lang, mentions=[display])
    assert ONLY_SIZE[lang] not in text
    slots = tracker_slots(c)
    assert slots["model_id"] == preset_id and slots["method"] == method and slots["seq_len"] == seq_len
    assert slots["model_unrecognised"] is None
    if budget is None:
        assert slots["budget_unlimited"] is True
    else:
        assert slots["budget_usd"] == budget
    expected = expected_advice(model=preset_id, method=method, seq_len=seq_len, budget_usd=budget,
                               budget_unlimited=budget is None)
    assert gb(expected.estimate.per_gpu_gib, lang) in text, (gb(expected.estimate.per_gpu_gib, lang), text[:500])


@pytest.mark.parametrize("lang,message,preset_id", [
    ("tr", "gpt-oss-120b'yi LoRA ile 2048 token eğitmek istiyoruz, para sorun değil", "gpt-oss-120b"),
    ("fa", "Qwen3-235B-A22B رو با کیولورا و ۲۰۴۸ توکن، محدودیت بودجه نداریم", "qwen3-235b-a22b"),
])
def test_a_moe_model_too_large_for_one_card_is_still_answered_by_name(conversation, lang, message, preset_id):
    c = conversation()
    replies = c.say(message)
    assert_language(replies, lang)
    text = joined(replies)
    assert load_knowledge().model(preset_id).display in text and "GB" in text and ONLY_SIZE[lang] not in text
    assert tracker_slots(c)["model_id"] == preset_id


def test_gemma_3_12b_qlora_at_4096_tokens_is_not_sent_to_a_24_gb_card(conversation):
    # issue 9: its 262k vocabulary makes the logits alone cost many GB; a 24 GB card must not be recommended
    c = conversation()
    text = joined(c.say("Gemma 3 12B'yi QLoRA ile 4096 token eğitmek istiyorum, bütçe sınırımız yok"))
    advice = expected_advice(model="gemma-3-12b", method="qlora", seq_len=4096, budget_unlimited=True)
    assert advice.estimate.per_gpu_gib > 22.5
    assert advice.best is not None and load_knowledge().gpu(advice.best.card_id).vram_gb > 24
    assert "Gemma 3 12B" in text


# ------------------------------------------------------------------------- a pasted config.json

QWEN3_8B_CONFIG = {  # Qwen/Qwen3-8B config.json, as a customer would paste it
    "architectures": ["Qwen3ForCausalLM"], "attention_bias": False, "bos_token_id": 151643, "eos_token_id": 151645,
    "head_dim": 128, "hidden_act": "silu", "hidden_size": 4096, "intermediate_size": 12288,
    "max_position_embeddings": 40960, "model_type": "qwen3", "num_attention_heads": 32, "num_hidden_layers": 36,
    "num_key_value_heads": 8, "rms_norm_eps": 1e-06, "rope_theta": 1000000, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16", "vocab_size": 151936}
MIXTRAL_LIKE_CONFIG = {  # a Mixture-of-Experts config (mistralai/Mixtral-8x7B-v0.1 values)
    "architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336,
    "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "num_local_experts": 8,
    "num_experts_per_tok": 2, "vocab_size": 32000, "tie_word_embeddings": False, "rms_norm_eps": 1e-05}

CONFIG_READ = {"fa": "از config.json شما خواندم", "tr": "config.json dosyanızdan şu değerleri okudum"}
MOE_READ = {"fa": "8 expert که 2 تای آن", "tr": "her token için 2 tanesi çalışan 8 uzman"}


@pytest.mark.parametrize("lang,before,after,config,words", [
    ("fa", "این config.json مدل ماست:", "با کیولورا و ۲۰۴۸ توکن، بودجه ۵۰ دلار", QWEN3_8B_CONFIG, ["36", "151936"]),
    ("tr", "Modelimizin config.json dosyası şu:", "QLoRA ile 2048 token, bütçemiz 50 dolar", QWEN3_8B_CONFIG,
     ["36", "151936"]),
    ("fa", "کانفیگ مدلمون:", "با لورا، ۲۰۴۸ توکن، بودجه محدودیتی نداره", MIXTRAL_LIKE_CONFIG,
     ["32 لایه", MOE_READ["fa"]]),
    ("tr", "MoE modelimizin ayarları:", "LoRA ile 2048 token, bütçe sınırı yok", MIXTRAL_LIKE_CONFIG,
     ["32 katman", MOE_READ["tr"]]),
])
def test_a_pasted_config_is_read_and_the_answer_says_which_values(conversation, lang, before, after, config, words):
    c = conversation()
    replies = c.say(f"{before}\n{json.dumps(config, indent=2)}\n{after}")
    text = assert_estimate(replies, lang)
    assert CONFIG_READ[lang] in text
    for word in words:
        assert word in text, (word, text[:600])
    slots = tracker_slots(c)
    assert slots["custom_arch"]["layers"] == config["num_hidden_layers"] and slots["model_id"] is None


@pytest.mark.parametrize("lang,intro,missing,phrase", [
    ("fa", "این هم config مدل:", "num_hidden_layers", "کلید «num_hidden_layers»"),
    ("tr", "config.json şöyle:", "hidden_size", "\"hidden_size\" anahtarı"),
])
def test_a_config_without_a_key_is_answered_naming_the_key(conversation, lang, intro, missing, phrase):
    c = conversation()
    broken = {k: v for k, v in QWEN3_8B_CONFIG.items() if k != missing}
    replies = c.say(f"{intro} {json.dumps(broken)}")
    assert_language(replies, lang)
    assert phrase in joined(replies), joined(replies)
    assert tracker_slots(c).get("custom_arch") is None


# ------------------------------------------------------------------------- a model name we do not know


@pytest.mark.parametrize("lang,message,query,stand_in", [
    ("fa", "می‌خوام qwen 4.5 8b رو با کیولورا آموزش بدم، ۲۰۴۸ توکن، بودجه ۳۰ دلار", "qwen 4.5 8b", "Qwen3 8B"),
    ("tr", "Gemma 5 12B'yi LoRA ile 2048 token ile eğitsek, bütçemiz 60 dolar", "gemma 5 12b", "Gemma 3 12B"),
    # (OLMo 2 has presets since blind round 2; StableLM has none)
    ("tr", "stablelm 7b'yi qlora ile 2048 token eğitmek istiyorum, 30 dolar", "stablelm 7b", None),
])
def test_an_unknown_model_is_named_never_taken_for_a_size(conversation, lang, message, query, stand_in):
    c = conversation()
    replies = c.say(message)
    text = assert_estimate(replies, lang)
    assert query in text.lower() and ONLY_SIZE[lang] not in text
    slots = tracker_slots(c)
    assert slots["model_unrecognised"].lower() == query
    kb = load_knowledge()
    used = kb.model(slots["model_id"]).display
    assert used in text and (stand_in is None or used == stand_in)
    assert kb.text("model_unrecognised_range", lang, low="", high="").split(" ")[0] in text  # widened, said so


# ------------------------------------------------------------------------- suffixes and particles


# ------------------------------------------------------------------------- a family and a size, no version


@pytest.mark.parametrize("lang,message,preset_id,note", [
    ("tr", "qwen 14b'yi LoRA ile 2048 token eğitmek istiyorum, bütçe 60 dolar", "qwen3-14b", "en yeni Qwen sürümü"),
    ("tr", "phi 14b'yi QLoRA ile eğitmek istiyorum, 2048 token, bütçem 40 dolar", "phi-4", "en yeni Phi sürümü"),
    ("fa", "جما ۲۷ بی رو با کیولورا و ۲۰۴۸ توکن، بودجه ۸۰ دلار", "gemma-3-27b", "جدیدترین نسخهٔ Gemma"),
])
def test_a_family_and_a_size_mean_the_newest_release_and_the_answer_says_so(conversation, lang, message, preset_id,
                                                                             note):
    c = conversation()
    assert_estimate(c.say(message), lang, mentions=[load_knowledge().model(preset_id).display, note])
    slots = tracker_slots(c)
    assert slots["model_id"] == preset_id and slots["model_version_assumed"] is None  # said once, then cleared
    again = joined(c.say("4096 token" if lang == "tr" else "با ۴۰۹۶ توکن چی؟"))
    assert note not in again and load_knowledge().model(preset_id).display in again


def test_a_named_version_is_taken_as_named_without_a_note(conversation):
    c = conversation()
    text = assert_estimate(c.say("Qwen2.5 14B'yi LoRA ile 2048 token eğitmek istiyorum, bütçe 60 dolar"), "tr",
                           mentions=["Qwen2.5 14B"])
    assert "en yeni Qwen sürümü" not in text and tracker_slots(c)["model_id"] == "qwen2.5-14b"


@pytest.mark.parametrize("lang,message,preset_id", [
    ("tr", "mistral 7b yi qlora ile 2048 token eğitmek istiyorum, bütçe 30 dolar", "mistral-7b"),
    ("tr", "qwen3 8b yi lora ile 4096 token, 40 dolar", "qwen3-8b"),
    ("tr", "llamayı 8 milyar olarak qlora ile 2048 token, 25 dolar", "llama-3.1-8b"),
    ("fa", "لامارو ۸ میلیاردی با کیولورا و ۲۰۴۸ توکن، بودجه ۳۰ دلار", "llama-3.1-8b"),
    ("fa", "کوئنو ۱۴ بی با لورا آموزش بدیم، ۲۰۴۸ توکن، ۶۰ دلار", "qwen3-14b"),
])
def test_case_suffixes_and_particles_never_change_the_model(conversation, lang, message, preset_id):
    c = conversation()
    text = assert_estimate(c.say(message), lang, mentions=[load_knowledge().model(preset_id).display])
    assert "Yi 34B" not in text
    assert tracker_slots(c)["model_id"] == preset_id


def test_a_size_with_an_accusative_word_is_a_size_never_the_model_yi(conversation):
    c = conversation()
    text = assert_estimate(c.say("14b yi LoRA ile 2048 token eğitmek istiyoruz, bütçe 50 dolar"), "tr")
    assert "Yi 34B" not in text
    slots = tracker_slots(c)
    assert slots["model_size_b"] == 14.0 and slots["model_id"] != "yi-34b"


# ------------------------------------------------------------------------- hourly caps, no-limit budgets


@pytest.mark.parametrize("lang,message,cap,vat", [
    ("tr", "Llama 3.1 8B'yi QLoRA ile 2048 token eğitmek istiyorum, saatte en fazla 1 dolar verebilirim", 1.0, None),
    ("tr", "Mistral 7B, LoRA, 4096 token; saatlik ücret 2$'ı geçmesin, KDV dahil", 2.0, True),
    ("fa", "لاما ۸ میلیارد با کیولورا و ۲۰۴۸ توکن، هزینه ساعتی حداکثر ۱ دلار باشه", 1.0, None),
    ("fa", "Qwen2.5 7B با لورا، ۲۰۴۸ توکن، ساعتی نهایتا ۳ دلار بدون مالیات", 3.0, False),
])
def test_an_hourly_cap_is_kept_as_a_cap_not_a_total_budget(conversation, lang, message, cap, vat):
    c = conversation()
    replies = c.say(message)
    assert_estimate(replies, lang)
    slots = tracker_slots(c)
    assert slots["hourly_cap"] == cap and slots["hourly_cap_vat"] == vat
    assert slots["budget_usd"] is None


@pytest.mark.parametrize("lang,message", [
    ("tr", "Qwen2.5 7B'yi QLoRA ile 2048 token eğitmek istiyoruz; bütçe konusunda bir sınırımız yok, hızlı olsun"),
    ("tr", "Mistral 7B LoRA 4096 token, masraf önemli değil yeter ki çabuk bitsin"),
    ("fa", "لاما ۸ میلیارد رو با کیولورا و ۲۰۴۸ توکن می‌خوایم، از نظر بودجه مشکلی نداریم"),
    ("fa", "Gemma 2 9B با لورا و ۴۰۹۶ توکن، پول مسئله نیست فقط سریع باشه"),
])
def test_no_budget_limit_inside_a_longer_message(conversation, lang, message):
    c = conversation()
    assert_estimate(c.say(message), lang)
    assert tracker_slots(c)["budget_unlimited"] is True


# ------------------------------------------------------------------------- contact inside a sentence


@pytest.mark.parametrize("lang,ask,yes,sentence,contact", [
    ("tr", "bir uzmanla görüşmek istiyorum", "evet, kabul ediyorum",
     "e-posta adresim deniz.kaya@example.com, telefonumu da daha önce vermiştim", "deniz.kaya@example.com"),
    ("fa", "می‌خوام با یه کارشناس صحبت کنم", "بله موافقم", "ایمیلم reza.ahmadi@example.ir هست، همون‌جا جواب بدید",
     "reza.ahmadi@example.ir"),
])
def test_a_contact_inside_a_sentence_opens_the_ticket(conversation, lang, ask, yes, sentence, contact):
    c = conversation()
    c.say(ask)
    if tracker_slots(c).get("requested_slot") == "handoff_consent":
        c.say(yes)
    assert tracker_slots(c).get("requested_slot") == "handoff_contact"
    replies = c.say(sentence)
    assert_language(replies, lang)
    assert contact in joined(replies), joined(replies)
    assert tracker_slots(c).get("requested_slot") is None


# ------------------------------------------------------------------------- numbers of any length (issue 12 #4)


@pytest.mark.parametrize("lang,template", [
    ("fa", "بودجه ما {number} دلار است"),
    ("tr", "dizi uzunluğu {number} token olsun"),
])
def test_a_number_of_any_length_gets_the_usual_unclear_number_answer(conversation, lang, template):
    c = conversation()
    c.say("Mistral 7B'yi QLoRA ile eğitmek istiyorum" if lang == "tr" else "می‌خوام Mistral 7B رو با کیولورا آموزش بدم")
    replies = c.say(template.format(number="9" * 3000))  # under the channel's message limit, far above any value
    assert_language(replies, lang)
    text = joined(replies)
    assert "999999…999" in text and "9" * 20 not in text
    slots = tracker_slots(c)
    assert slots["budget_usd"] is None and slots["seq_len"] is None
