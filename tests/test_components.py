"""The NLU components: same-length normalisation, detected_language, English routing - alone and in a pipeline."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st
from rasa.engine.graph import ExecutionContext
from rasa.engine.storage.local_model_storage import LocalModelStorage
from rasa.engine.storage.resource import Resource
from rasa.nlu.tokenizers.whitespace_tokenizer import WhitespaceTokenizer
from rasa.shared.nlu.training_data.message import Message
from rasa.shared.nlu.training_data.training_data import TrainingData

from bot.assistant.components import LanguageNormalizer, IntentGuard
from bot.assistant.components.language_normalizer import DETECTED_LANGUAGE, UNSUPPORTED_LANGUAGE_INTENT


@pytest.fixture
def context(tmp_path):
    storage = LocalModelStorage(tmp_path)
    resource = Resource("component")
    return storage, resource, ExecutionContext(storage, resource)


@pytest.fixture
def normalizer(context):
    storage, resource, ctx = context
    return LanguageNormalizer.create({}, storage, resource, ctx)


@pytest.fixture
def router(context):
    storage, resource, ctx = context
    return IntentGuard.create({}, storage, resource, ctx)


def _process(component, text: str, **data) -> Message:
    message = Message({"text": text, **data})
    component.process([message])
    return message


@pytest.mark.parametrize("raw,expected_fragment", [
    ("مدل ۷ ميليارد با كيفيت", "7"),      # Persian digit, Arabic ي and ك
    ("طول ٤٠٩٦ توکن", "4096"),            # Arabic-Indic digits
])
def test_normalizer_maps_digits_and_arabic_letters_keeping_length(normalizer, raw, expected_fragment):
    message = _process(normalizer, raw)
    text = message.get("text")
    assert len(text) == len(raw)
    assert expected_fragment in text
    assert "ي" not in text and "ك" not in text


def test_normalizer_lowers_turkish_dotted_capital_i_in_place(normalizer):
    message = _process(normalizer, "İSTANBUL'dan İyi günler")
    text = message.get("text")
    assert len(text) == len("İSTANBUL'dan İyi günler")
    assert "İ" not in text


@pytest.mark.parametrize("text,language", [
    ("سلام، برای لاما ۸ میلیارد چه کارتی لازم است؟", "fa"),
    ("Merhaba, 8B model için hangi kart lazım?", "tr"),
    ("merhaba hangi gpu yeterli olur", "tr"),      # Turkish without diacritics
    ("hello, which gpu do I need?", "en"),
    ("7B QLoRA 4096", None),                      # no language signal
])
def test_normalizer_sets_detected_language(normalizer, text, language):
    assert _process(normalizer, text).get(DETECTED_LANGUAGE) == language


def test_normalizer_outputs_detected_language_in_parse_data(normalizer):
    message = _process(normalizer, "سلام")
    assert message.as_dict(only_output_properties=True).get(DETECTED_LANGUAGE) == "fa"


def test_normalizer_processes_training_data_so_tokens_match_at_inference(normalizer):
    examples = [Message({"text": "مدل ۱۳ ميليارد", "intent": "inform"})]
    normalizer.process_training_data(TrainingData(training_examples=examples))
    tokenizer = WhitespaceTokenizer(WhitespaceTokenizer.get_default_config())
    tokenizer.process_training_data(TrainingData(training_examples=examples))
    tokens = [t.text for t in examples[0].get("text_tokens")]
    assert "13" in tokens
    assert all("ي" not in t for t in tokens)


def test_normalizer_fingerprint_follows_the_normalisation_tables():
    # Rasa caches components by class source only; the addon makes edits in bot/text/normalize.py retrain it.
    fingerprint = LanguageNormalizer.fingerprint_addon({})
    assert fingerprint and fingerprint == LanguageNormalizer.fingerprint_addon({})


def test_router_routes_english_without_values(router):
    message = _process(router, "hello, how are you?", detected_language="en",
                       intent={"name": "greet", "confidence": 0.6})
    assert message.get("intent")["name"] == UNSUPPORTED_LANGUAGE_INTENT
    assert message.get("intent_ranking")[0]["name"] == UNSUPPORTED_LANGUAGE_INTENT


def test_router_keeps_english_messages_that_carry_values(router):
    message = _process(router, "llama 8b with qlora", detected_language="en",
                       intent={"name": "inform", "confidence": 0.8})
    assert message.get("intent")["name"] == "inform"


@pytest.mark.parametrize("text", ["😂😂", "???", "👍 !", "؟؟"])
def test_guard_sends_messages_without_words_to_the_fallback(router, text):
    message = _process(router, text, detected_language=None, intent={"name": "affirm", "confidence": 0.7})
    assert message.get("intent")["name"] == "nlu_fallback"


@pytest.mark.parametrize("language", ["fa", "tr", None])
def test_router_leaves_other_languages_alone(router, language):
    message = _process(router, "whatever", detected_language=language, intent={"name": "greet", "confidence": 0.9})
    assert message.get("intent")["name"] == "greet"


@pytest.mark.parametrize("text,language,intent", [
    ("salam, mikham llama 8b ro ba qlora train konam", "fa", "greet"),
    ("سلام، llama 8b با QLoRA و ۲۰۴۸ توکن", "fa", "greet"),
    ("merhaba, 7B modeli LoRA ile eğitmek istiyorum", "tr", "greet"),
    ("mrb llma 3 8b 2048 token butcem 30 $", "tr", "out_of_scope"),
    ("qwen 14b 4096 falan", "tr", "nlu_fallback"),
])
def test_guard_sends_job_values_in_a_greeting_or_fallback_to_the_form(router, text, language, intent):
    message = _process(router, text, detected_language=language, intent={"name": intent, "confidence": 0.5},
                       intent_ranking=[{"name": intent, "confidence": 0.5}])
    assert message.get("intent")["name"] == "inform"
    assert [r["name"] for r in message.get("intent_ranking")][:2] == ["inform", intent]


@pytest.mark.parametrize("text,intent", [
    ("سلام، خوبید؟", "greet"),
    ("salam", "greet"),
    ("hava nasıl bugün?", "out_of_scope"),
    ("2 sorum var", "out_of_scope"),             # a count alone is not a job
    ("llama 8b ile qlora nedir?", "faq_methods"),  # a question about methods keeps its answer
    ("selam, qlora ile", "greet"),                  # a method alone is not a job
])
def test_guard_leaves_messages_without_job_values_or_with_a_real_intent(router, text, intent):
    message = _process(router, text, detected_language="tr", intent={"name": intent, "confidence": 0.5})
    assert message.get("intent")["name"] == intent


@pytest.mark.parametrize("text,language,intent,expected", [
    ("Evde bir RTX 3090'ım var, Mistral 7B'yi QLoRA ile eğitmeye yeter mi?", "tr", "estimate", "own_card"),
    ("خودم یه ۴۰۹۰ دارم، Llama 3.1 8B با QLoRA روش جا میشه؟", "fa", "inform", "own_card"),
    ("bu iş için LoRA mı daha ucuz QLoRA mı, Llama 3.1 8B 2048 token", "tr", "estimate", "compare_options"),
    ("RTX 4090 ile Llama 3.1 8B QLoRA ne kadar sürer?", "tr", "estimate", "estimate"),   # a catalogue card
    ("H100 mü A100 mü daha iyi?", "tr", "faq_h100_vs_a100", "faq_h100_vs_a100"),     # the general question
    ("70B QLoRA ile H200'e sığar mı?", "tr", "own_card", "inform"),                   # a catalogue card and a job
    ("qwen2.5 7b mi llama 3.1 8b mi daha az bellek ister", "tr", "faq_13b_24gb", "compare_options"),
    ("evde bir 4090 var, sığar mı?", "tr", "own_card", "own_card"),
])
def test_guard_sends_an_own_card_or_a_comparison_to_its_answer(router, text, language, intent, expected):
    message = _process(router, text, detected_language=language, intent={"name": intent, "confidence": 0.7},
                       intent_ranking=[{"name": intent, "confidence": 0.7}])
    assert message.get("intent")["name"] == expected


def test_guard_answers_a_fallback_between_an_faq_and_an_estimate_with_the_better_ranked(router):
    """Both answers keep the values (the FAQ answer uses the job), so a close call is no misunderstanding."""
    ranking = [{"name": "nlu_fallback", "confidence": 0.3}, {"name": "faq_data_prep", "confidence": 0.49},
               {"name": "inform", "confidence": 0.46}]
    message = _process(router, "LoRA 8B için uygun veri formatı nedir?", detected_language="tr",
                       intent=ranking[0], intent_ranking=ranking)
    assert message.get("intent")["name"] == "faq_data_prep"


@pytest.mark.parametrize("first,second,expected", [
    ("thank", "goodbye", "thank"),                          # "thanks, that's all for now"
    ("request_quote", "order_multi_gpu", "order_multi_gpu"),  # the ordering answer offers the quote itself
    ("inform", "faq_methods", "inform"),                    # "with QLoRA, what then?" after an estimate
])
def test_guard_resolves_a_close_call_between_intents_whose_answers_cover_each_other(router, first, second,
                                                                                  expected):
    ranking = [{"name": "nlu_fallback", "confidence": 0.3}, {"name": first, "confidence": 0.36},
               {"name": second, "confidence": 0.35}]
    message = _process(router, "bir şey", detected_language="tr", intent=ranking[0], intent_ranking=ranking)
    assert message.get("intent")["name"] == expected


def test_guard_sends_a_fallback_between_the_comparison_and_an_faq_to_the_comparison(router):
    ranking = [{"name": "nlu_fallback", "confidence": 0.3}, {"name": "compare_options", "confidence": 0.38},
               {"name": "faq_lora_quality", "confidence": 0.36}]
    message = _process(router, "bu iş için LoRA ile QLoRA arasında ne fark var?", detected_language="tr",
                       intent=ranking[0], intent_ranking=ranking)
    assert message.get("intent")["name"] == "compare_options"


@pytest.mark.parametrize("first,second,top", [
    ("complaint", "faq_invoice", 0.4),   # a complaint is not covered by the invoice FAQ
    ("thank", "goodbye", 0.2),           # a weak guess is a misunderstanding
])
def test_guard_keeps_the_fallback_for_other_close_calls(router, first, second, top):
    ranking = [{"name": "nlu_fallback", "confidence": 0.3}, {"name": first, "confidence": top},
               {"name": second, "confidence": top - 0.01}]
    message = _process(router, "bir şey", detected_language="tr", intent=ranking[0], intent_ranking=ranking)
    assert message.get("intent")["name"] == "nlu_fallback"


@pytest.mark.parametrize("text,intent", [
    ("teşekkürler, qlora ile nasıl olur?", "thank"),
    ("نه نه، با lora حساب کن", "deny"),
    ("ممنون، با qlora چطور؟", "nlu_fallback"),
])
def test_guard_reads_a_changed_method_in_a_thanks_or_a_no_as_a_change_of_the_job(router, text, intent):
    ranking = [{"name": intent, "confidence": 0.6}, {"name": "thank", "confidence": 0.28}]
    message = _process(router, text, detected_language=None, intent=ranking[0], intent_ranking=ranking)
    assert message.get("intent")["name"] == "inform"


@pytest.mark.parametrize("text,mash", [
    ("asdf jkjk ççç", True), ("ثقفثقف ضصضص", True), ("qweqwe zxzx", True), ("asdkjh", True),
    ("hmm", False), ("dede", False), ("baba", False), ("teşekkürler", False), ("سلام", False), ("llama 8b", False),
    ("نه نه", False), ("haha", False),
])
def test_keyboard_mash_is_recognised_word_by_word(text, mash):
    from bot.assistant.components.keyboard_mash import is_keyboard_mash

    assert is_keyboard_mash(text) is mash


def _runs_by_definition(word: str) -> bool:
    """The definition, written as plainly as it reads (exponential, so only for short words): the word cuts into
    pieces of three or more letters, each a stretch of one keyboard row in either direction."""
    from bot.assistant.components.keyboard_mash import KEYBOARD_ROWS

    def on_a_row(piece: str) -> bool:
        return any(piece in row or piece in row[::-1] for row in KEYBOARD_ROWS)

    return word == "" or any(on_a_row(word[:cut]) and _runs_by_definition(word[cut:])
                             for cut in range(3, len(word) + 1))


_ROW_LETTERS = "".join(sorted(set("qwertyuıopğüasdfghjklşizxcvbnmöçضصثقفغعهخحجچشسیبلاتنمکگظطزرذدپو")))


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=_ROW_LETTERS, min_size=3, max_size=11))
def test_keyboard_runs_agree_with_the_plain_definition(word):
    from bot.assistant.components.keyboard_mash import _split_into_runs

    assert _split_into_runs(word) is _runs_by_definition(word)


@pytest.mark.parametrize("word", [
    "asdfghjkl" * 440 + "q",  # the red-team's freeze (issue 20): every prefix splits, the last letter does not
    "asd" * 1333 + "x", "dsa" * 1333 + "ضصث", "qwe" * 1000 + "qw" * 500, "ضصث" * 1333 + "ق" + "a",
])
def test_keyboard_mash_looks_at_each_letter_a_bounded_number_of_times(monkeypatch, word):
    """Linear, not exponential: the row look-ups grow with the length, at most one per letter and possible run
    length (a count, not a clock: the benchmark bench/bench_nlu_worst.py times it)."""
    from bot.assistant.components import keyboard_mash as guard

    looked_up = []
    real = guard._along_a_row
    monkeypatch.setattr(guard, "_along_a_row", lambda keys: looked_up.append(keys) or real(keys))
    guard.is_keyboard_mash(word + " " + word[:64])
    assert len(looked_up) <= 2 * guard.LONGEST_ROW * (len(word) + 64)


def test_guard_sends_keyboard_mash_to_the_fallback_whatever_the_classifier_guessed(router):
    message = _process(router, "asdf jkjk", detected_language="tr", intent={"name": "out_of_scope", "confidence": 0.5})
    assert message.get("intent")["name"] == "nlu_fallback"


def test_guard_answers_a_card_size_question_about_a_job_with_the_memory_faq(router):
    ranking = [{"name": "own_card", "confidence": 0.65}]
    message = _process(router, "Mistral 7B kullanıyoruz, 16 GB'lık kart yeter mi?", detected_language="tr",
                       intent=ranking[0], intent_ranking=ranking)
    assert message.get("intent")["name"] == "faq_vram"


def test_components_in_a_trained_pipeline(tmp_path):
    """Normaliser + tokenizer + featurizers + classifier + router, trained on a tiny set, as config.yml wires them."""
    import asyncio

    from rasa.model_training import train_nlu

    config = tmp_path / "config.yml"
    config.write_text(
        "recipe: default.v1\nlanguage: fa\npipeline:\n"
        "  - name: bot.assistant.components.LanguageNormalizer\n  - name: WhitespaceTokenizer\n"
        "  - name: CountVectorsFeaturizer\n  - name: LogisticRegressionClassifier\n"
        "  - name: bot.assistant.components.IntentGuard\n", encoding="utf-8")
    nlu = tmp_path / "nlu.yml"
    nlu.write_text(
        'version: "3.1"\nnlu:\n- intent: greet\n  examples: |\n    - سلام\n    - سلام خوبی\n    - merhaba\n'
        "    - selam\n- intent: inform\n  examples: |\n    - مدل ۱۳ میلیارد\n    - ۷ میلیارد\n    - 13 milyar\n"
        "    - 70 milyar\n", encoding="utf-8")
    model = train_nlu(str(config), str(nlu), str(tmp_path / "out"), fixed_model_name="nlu")
    from rasa.core.agent import Agent

    agent = Agent.load(model)
    result = asyncio.run(agent.parse_message("مدل ١٣ ميليارد"))
    assert result["intent"]["name"] == "inform"
    assert result["detected_language"] == "fa"
    assert result["text"] == "مدل 13 میلیارد"
    english = asyncio.run(agent.parse_message("hello there, who are you"))
    assert english["intent"]["name"] == UNSUPPORTED_LANGUAGE_INTENT
