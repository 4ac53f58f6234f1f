"""NLU components: length-preserving normalisation + language detection, and routing of unsupported languages.

``LanguageNormalizer`` runs first in the pipeline. It rewrites ``text`` with :func:`bot.text.normalize.normalize`
(same length, so entity offsets in training data stay valid) and stores :func:`bot.text.language.detect_language` of
the *original* text under the message key ``detected_language``. ``action_validate_slot_mappings`` turns that key
into the ``language`` slot (notes §0.10: emitting the language as an entity breaks ``rasa test``).

``IntentGuard`` runs after the classifiers and overrides two cases the classifier cannot know about: a message
without a single letter or digit (emoji, "???") becomes ``nlu_fallback`` (a bag of character n-grams would
otherwise pick whatever intent its bias favours), a message detected as English that carries no advisor value
(model, method, numbers) becomes ``unsupported_language``, which a rule answers in both languages, and a greeting,
out-of-scope or fallback message that carries job values ("salam, mikham llama 8b ro ba qlora train konam")
becomes ``inform``, so the estimate form reads the values instead of a greeting swallowing them.
"""
from __future__ import annotations

import hashlib
import inspect
from pathlib import Path
from typing import Any, Dict, List, Optional, Text

from rasa.engine.graph import ExecutionContext, GraphComponent
from rasa.engine.recipes.default_recipe import DefaultV1Recipe
from rasa.engine.storage.resource import Resource
from rasa.engine.storage.storage import ModelStorage
from rasa.shared.nlu.constants import INTENT, INTENT_RANKING_KEY, TEXT
from rasa.shared.nlu.training_data.message import Message
from rasa.shared.nlu.training_data.training_data import TrainingData

DETECTED_LANGUAGE = "detected_language"
UNSUPPORTED_LANGUAGE_INTENT = "unsupported_language"
NO_WORDS_INTENT = "nlu_fallback"  # Rasa's fallback intent: answered by action_default_fallback
JOB_VALUES_INTENT = "inform"
# Intents whose answer ignores the values of the message; with job values in it the customer is asking for an
# estimate, and the greeting or the "I did not understand" would lose them.
VALUE_BLIND_INTENTS = ("greet", "out_of_scope", NO_WORDS_INTENT)
# What the estimate form asks for. The volume values alone ("2 ta sual") are too weak to override the classifier,
# and so is a method alone: "LoRA için uygun veri formatı nedir?" is a question about LoRA, not a job (held-out).
JOB_VALUE_FIELDS = ("model_id", "model_size_b", "seq_len", "budget_usd")
# A message naming the job *and* the customer's own card ("Evde bir RTX 3090'ım var, Mistral 7B'yi QLoRA ile
# eğitmeye yeter mi?") or two options for it ("bu iş için LoRA mı QLoRA mı?") reads like an estimate request to a
# bag of n-grams; the parser knows better (bot.text.parse: own_gpu only for a card the customer has, compare for
# "X or Y"), so these go to their own answers (issue 13), which carry on with the estimate afterwards.
OWN_CARD_INTENT = "own_card"
COMPARE_INTENT = "compare_options"
OWN_CARD_MISTAKEN_FOR = ("estimate", "inform", "faq_13b_24gb", "faq_vram") + VALUE_BLIND_INTENTS
COMPARE_MISTAKEN_FOR = ("estimate", "inform")
ALL_VALUE_FIELDS = JOB_VALUE_FIELDS + ("budget_unlimited", "examples", "avg_tokens", "total_tokens", "epochs",
                                       "gpus")


def _source_fingerprint(*modules: Any) -> str:
    # Rasa fingerprints only the component class source (notes §0.12); the tables live in bot/ and knowledge/,
    # so hash those too, or an edited table would silently reuse the cached, differently normalised features.
    digest = hashlib.sha256()
    for module in modules:
        digest.update(inspect.getsource(module).encode())
    from bot.text.numbers import LEXICON_PATH

    digest.update(Path(LEXICON_PATH).read_bytes())
    return digest.hexdigest()


# Registered as a tokenizer-type component so the recipe also runs it over the training data
# (process_training_data is only wired for tokenizers/featurizers, notes §2.3).
@DefaultV1Recipe.register([DefaultV1Recipe.ComponentType.MESSAGE_TOKENIZER], is_trainable=False)
class LanguageNormalizer(GraphComponent):
    @classmethod
    def create(cls, config: Dict[Text, Any], model_storage: ModelStorage, resource: Resource,
               execution_context: ExecutionContext) -> "LanguageNormalizer":
        return cls()

    @classmethod
    def fingerprint_addon(cls, config: Dict[Text, Any]) -> Optional[str]:
        import bot.text.language
        import bot.text.normalize
        import bot.text.numbers

        return _source_fingerprint(bot.text.normalize, bot.text.language, bot.text.numbers)

    @staticmethod
    def _apply(message: Message) -> None:
        from bot.text.language import detect_language
        from bot.text.normalize import normalize

        text = message.get(TEXT)
        if not isinstance(text, str):
            return
        normalized = normalize(text)
        if len(normalized) != len(text):
            raise ValueError(f"bot.text.normalize.normalize changed the length of {text!r}")
        message.set(TEXT, normalized)
        message.set(DETECTED_LANGUAGE, detect_language(text), add_to_output=True)

    def process_training_data(self, training_data: TrainingData) -> TrainingData:
        for example in training_data.training_examples:
            self._apply(example)
        return training_data

    def process(self, messages: List[Message]) -> List[Message]:
        for message in messages:
            self._apply(message)
        return messages


@DefaultV1Recipe.register([DefaultV1Recipe.ComponentType.INTENT_CLASSIFIER], is_trainable=False)
class IntentGuard(GraphComponent):
    @classmethod
    def create(cls, config: Dict[Text, Any], model_storage: ModelStorage, resource: Resource,
               execution_context: ExecutionContext) -> "IntentGuard":
        return cls()

    @staticmethod
    def carries_values(text: str, fields: tuple = ALL_VALUE_FIELDS) -> bool:
        """True when the message holds something the estimate form can use ("7B QLoRA 4096", "llama 8b")."""
        from bot.text.parse import parse_values

        parsed = parse_values(text)
        return any(getattr(parsed, name, None) not in (None, False) for name in fields)

    @staticmethod
    def is_pasted_config(text: str) -> bool:
        """The message holds a Hugging Face config.json, readable or not (bot.text.parse.split_pasted_config)."""
        from bot.text.parse import split_pasted_config

        return "{" in text and split_pasted_config(text)[1] is not None

    @staticmethod
    def _override(message: Message, intent_name: Text) -> None:
        routed = {"name": intent_name, "confidence": 1.0}
        ranking = [routed] + [r for r in (message.get(INTENT_RANKING_KEY) or []) if r.get("name") != intent_name]
        message.set(INTENT, routed, add_to_output=True)
        message.set(INTENT_RANKING_KEY, ranking, add_to_output=True)

    @staticmethod
    def _values_lost(message: Message) -> bool:
        """The answer to this intent would ignore the message's values (a greeting, "I did not understand")."""
        intent = (message.get(INTENT) or {}).get("name")
        if intent not in VALUE_BLIND_INTENTS:
            return False
        if intent == NO_WORDS_INTENT:
            # A fallback torn between an FAQ and another intent is a question about the values, not a job.
            ranked = [r.get("name") for r in message.get(INTENT_RANKING_KEY) or [] if r.get("name") != intent]
            return not (ranked and str(ranked[0]).startswith("faq_"))
        return True

    @staticmethod
    def _own_card_or_comparison(message: Message) -> Optional[Text]:
        from bot.text.parse import parse_values

        intent = (message.get(INTENT) or {}).get("name")
        if intent not in OWN_CARD_MISTAKEN_FOR + COMPARE_MISTAKEN_FOR + (OWN_CARD_INTENT,):
            return None
        parsed = parse_values(message.get(TEXT) or "")
        if intent == OWN_CARD_INTENT:
            # "32B LoRA eğitimi RTX PRO 6000'e sığar mı?": a catalogue card, no card of the customer's own - with
            # job values it is an estimate request.
            job = any(getattr(parsed, name, None) not in (None, False) for name in JOB_VALUE_FIELDS)
            return JOB_VALUES_INTENT if job and not getattr(parsed, "own_gpu", None) else None
        if getattr(parsed, "own_gpu", None) and intent in OWN_CARD_MISTAKEN_FOR:
            return OWN_CARD_INTENT
        if getattr(parsed, "compare", None) and intent in COMPARE_MISTAKEN_FOR:
            return COMPARE_INTENT
        return None

    def process(self, messages: List[Message]) -> List[Message]:
        for message in messages:
            text = message.get(TEXT) or ""
            if not any(ch.isalnum() for ch in text):
                self._override(message, NO_WORDS_INTENT)
            elif self.is_pasted_config(text):
                # A config.json pasted into the chat (issue 9 #8) reads as English or anything: it gives the model
                self._override(message, JOB_VALUES_INTENT)
            elif message.get(DETECTED_LANGUAGE) == "en" and not self.carries_values(text):
                self._override(message, UNSUPPORTED_LANGUAGE_INTENT)
            elif self._own_card_or_comparison(message):
                self._override(message, self._own_card_or_comparison(message))
            elif self._values_lost(message) and self.carries_values(text, JOB_VALUE_FIELDS):
                self._override(message, JOB_VALUES_INTENT)
        return messages
