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

from bot.assistant.components.keyboard_mash import is_keyboard_mash
from bot.assistant.components.latin_mash import is_latin_mash, known_latin

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
# A count of examples *with* their length ("12 bin örnek, ortalama 350 token", «۱۵ هزار جفت، میانگین ۴۰۰ توکن»)
# describes the customer's data: strong enough to be the job's volume, whatever the classifier made of "elimizde ...
# var" (own card) or of no known word (blind sets 3 and 7 of the studied sets: "GPU not found", "did not understand").
DATA_COUNT_FIELDS = ("examples",)
DATA_LENGTH_FIELDS = ("avg_tokens", "total_tokens")
# A message naming the job *and* the customer's own card ("Evde bir RTX 3090'ım var, Mistral 7B'yi QLoRA ile
# eğitmeye yeter mi?") or two options for it ("bu iş için LoRA mı QLoRA mı?") reads like an estimate request to a
# bag of n-grams; the parser knows better (bot.text.parse: own_gpu only for a card the customer has, compare for
# "X or Y"), so these go to their own answers (issue 13), which carry on with the estimate afterwards.
OWN_CARD_INTENT = "own_card"
COMPARE_INTENT = "compare_options"
OWN_CARD_MISTAKEN_FOR = ("estimate", "inform", "faq_13b_24gb", "faq_vram") + VALUE_BLIND_INTENTS
# An FAQ about memory ("13B on 24 GB?", "how much VRAM?") is what a bag of n-grams sees in "qwen2.5 7b mi llama 3.1
# 8b mi daha az bellek ister?"; two options named by the parser make it a comparison for the job.
COMPARE_MISTAKEN_FOR = ("estimate", "inform", "faq_13b_24gb", "faq_vram")
# The FAQ that compares two cards in general (knowledge/faq.yml faq_h100_vs_a100) answers only that pair.
CARD_FAQ_INTENT = "faq_h100_vs_a100"
CARD_FAQ_OPTIONS = {"a100", "h100"}
# Social answers that ignore the values of the message: "thanks, and with QLoRA?", "no no, compute it with LoRA" are
# changes of the job (held-out change_of_mind, language_switch), not a thank-you or a bare "no". With these intents
# a method alone is a value too (it is not a question about the method, which the classifier gives to an FAQ).
# So is "too expensive, and with QLoRA?": a price complaint that changes the method asks for the new estimate.
SOCIAL_VALUE_BLIND_INTENTS = ("thank", "deny", "complaint_price")
# A fallback torn between two intents whose answers cover each other (both keep the values, both answer the
# customer) is no misunderstanding: the better-ranked one answers. An FAQ and an estimate (the FAQ answer uses the
# job; the estimate re-computes it), thanks and goodbye (a closing "thanks, that's all for now"), the two
# complaints (both apologise and offer a person: "the exchange rate doubles your bill"). Ordering several
# GPUs and asking for a quote: the ordering answer explains the quote and offers it, so it answers both.
COVERING_PAIRS = ({"thank", "goodbye"}, {"complaint", "complaint_price"})
# A memory FAQ for a message that names the model and the method ("we plan to fine-tune Qwen2.5 14B with LoRA at
# 2048 tokens, 300 dollars, which GPU?") is a complete request: the estimate answers it with the card (issue 21 #4).
# A question about a card size ("is a 24 GB card enough?") stays the memory FAQ.
MEMORY_FAQS = ("faq_13b_24gb", "faq_vram")
# FAQs whose answer the estimate gives for the customer's own job: a whole request that also asks for the price
# with KDV or says an hourly limit ("Mistral 7B QLoRA, saatlik en fazla 1 dolar") wants the card and its price
# (blind set of 2026-12-03: such requests got the general price answer and no card).
JOB_ANSWERED_FAQS = MEMORY_FAQS + ("faq_prices_vat", "faq_cost_control")
COVERING_WINNER = {frozenset({"order_multi_gpu", "request_quote"}): "order_multi_gpu"}
# Without a job value, "what else can you do besides suggesting a card?" torn between the abilities and an estimate
# is the abilities question: that answer says how to get an estimate too (issue 21 #4).
COVERING_WITHOUT_VALUES = {frozenset({"capabilities", "estimate"}): "capabilities"}
JOB_INTENTS = ("estimate", "inform")
DATA_PREP_INTENT = "faq_data_prep"
OTHER_WORKLOAD_INTENT = "other_workload"
# An image or video model named with its memory or price asked ("DreamBooth on SDXL, how much memory?") reads like
# the memory FAQ, the own-card question or nothing (round 8): the other-workload answer all the same.
OTHER_WORKLOAD_MISTAKEN_FOR = JOB_INTENTS + JOB_ANSWERED_FAQS + ("own_card", NO_WORDS_INTENT, "out_of_scope",
                                                                 "faq_methods", "faq_lora_quality")
# A formal request that names the model and the method ("this unit plans the full training of Llama 3.1 8B on our
# internal documents; please state the configuration and cost") reads like the other-workload answer's letters to a
# bag of n-grams: with both values and no image work it is an estimate request (issue 21, round 5).
COMPLETE_REQUEST_MISTAKEN_FOR = JOB_ANSWERED_FAQS + (OTHER_WORKLOAD_INTENT,)
# Round 9: "Qwen'i Türkçe verimizle QLoRA'lasak ne kadar bellek?" names the data's language, not a question about the
# languages the bot speaks: with a model or a method in it, the job's values answer it (the estimate form).
SUPPORT_LANGUAGES_FAQ = "faq_support_languages"
# A question about the answer that names a card ("why not the 4090?", "how many hours on an A40?", "how many H100s
# do I need?") reads like a card FAQ or a new estimate to a bag of n-grams; with no job value in it, it asks about
# the current plan (issue 21 #3, bot/text/followups.py, actions/followup.py).
FOLLOWUP_INTENT = "ask_about_answer"
FOLLOWUP_MISTAKEN_FOR = ("estimate", "inform", "out_of_scope", NO_WORDS_INTENT, "own_card", "order_multi_gpu")
ALL_VALUE_FIELDS = JOB_VALUE_FIELDS + ("budget_unlimited", "examples", "avg_tokens", "total_tokens", "epochs",
                                       "gpus")
# Issue 21, round 2 (blind set): a question about one card with no job in it ("B200 kiralıyor musunuz, belleği ne
# kadar?", "hourly price of the L40S?") reads like the price, memory or multi-GPU FAQ; it gets that card's facts
# (action_card_facts), not the general answer or an estimate block.
CARD_FACTS_INTENT = "card_facts"
BUY_HARDWARE_INTENT = "buy_hardware"  # round 9: buying cards, also with "price quote" words (order_requests.py)
CARD_FACTS_MISTAKEN_FOR = ("faq_prices_vat", "faq_vram", "faq_invoice", "faq_platform", "out_of_scope",
                           NO_WORDS_INTENT)
# These only when the card's memory is asked ("B200 da var mı, belleği ne kadar?"): "4 A100'ü birlikte nasıl
# alırım?" stays the ordering answer, "why not the A40?" the follow-up (held-out split).
CARD_FACTS_IF_MEMORY_ASKED = ("faq_multi_gpu", "order_multi_gpu", FOLLOWUP_INTENT)
# "Can you compare it with the A40 too?" after an estimate: one card and a compare word; the comparison pairs it
# with the recommended card (actions/compare.py), not the A100-vs-H100 FAQ or a fallback.
ONE_CARD_COMPARE_MISTAKEN_FOR = (COMPARE_INTENT, CARD_FAQ_INTENT, NO_WORDS_INTENT, FOLLOWUP_INTENT, "faq_prices_vat",
                                 "capabilities", "bot_challenge", "out_of_scope", "estimate", "inform")
# A whole request that also asks about serving the model afterwards: the estimate, then what the servers offer for
# inference (rules in data/rules/dialogue.yml), not a comparison or the other-workload answer alone.
ESTIMATE_AND_SERVING_INTENT = "estimate_and_serving"
SERVING_MISTAKEN_FOR = JOB_INTENTS + (COMPARE_INTENT, OTHER_WORKLOAD_INTENT, NO_WORDS_INTENT, "faq_13b_24gb",
                                      "faq_vram", "faq_platform", "faq_checkpoints", "faq_prices_vat",
                                      "faq_cost_control")


# Below this confidence the top intent is a weak guess (config.yml, FallbackClassifier threshold 0.3).
AMBIGUITY_FLOOR = 0.3
MEMORY_FAQ_INTENT = "faq_vram"
def looks_like_data(text: str) -> bool:
    """The message is a JSON object or array (or looks like one): data pasted or sent by a script, not words."""
    stripped = text.strip()
    return len(stripped) >= 2 and stripped[0] + stripped[-1] in ("{}", "[]")


def pastes_training_records(text: str) -> bool:
    """The message holds records in a training format (prompt/completion, instruction/output, messages ...)."""
    from bot.dataset.formats import pasted_records

    return bool(pasted_records(text))


def asks_if_enough(text: str, values: Optional["MessageValues"] = None) -> bool:
    """ "So is it enough or not?", «پس کافیه یا نه؟» (bot/text/enough.py; issue 21, round 3), reading the message's
    values once for all of the guard's checks."""
    from bot.text.enough import asks_if_enough as bare_enough_question

    return bare_enough_question(text, (lambda _text: values.parsed) if values is not None else None)


class MessageValues:
    """The parser's reading of one message, done once however many of the guard's checks ask for it: a parse of a
    4,000-character message costs tens of milliseconds, and the guard used to parse the same text up to four times
    (issue 20)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._parsed: Any = None

    @property
    def parsed(self) -> Any:
        if self._parsed is None:
            from bot.text.parsed import parsed_message

            self._parsed = parsed_message(self.text)
        return self._parsed

    def carries(self, fields: tuple) -> bool:
        """The message gives at least one of ``fields`` (bot.text.parse.ParsedValues names)."""
        return any(getattr(self.parsed, name, None) not in (None, False) for name in fields)


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


def describes_data(values: "MessageValues") -> bool:
    """The message gives a count of examples and their length: the customer's data volume."""
    return values.carries(DATA_COUNT_FIELDS) and values.carries(DATA_LENGTH_FIELDS)


@DefaultV1Recipe.register([DefaultV1Recipe.ComponentType.INTENT_CLASSIFIER], is_trainable=False)
class IntentGuard(GraphComponent):
    @classmethod
    def create(cls, config: Dict[Text, Any], model_storage: ModelStorage, resource: Resource,
               execution_context: ExecutionContext) -> "IntentGuard":
        known_latin()  # read once here, not on the first message
        return cls()

    @staticmethod
    def carries_values(text: str, fields: tuple = ALL_VALUE_FIELDS) -> bool:
        """True when the message holds something the estimate form can use ("7B QLoRA 4096", "llama 8b")."""
        return MessageValues(text).carries(fields)

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
    def _ambiguity_resolved(message: Message) -> Optional[Text]:
        """The intent that answers a fallback caused only by two close intents whose answers cover each other."""
        if (message.get(INTENT) or {}).get("name") != NO_WORDS_INTENT:
            return None
        ranked = [r for r in message.get(INTENT_RANKING_KEY) or [] if r.get("name") != NO_WORDS_INTENT][:2]
        if len(ranked) < 2 or float(ranked[0].get("confidence") or 0) < AMBIGUITY_FLOOR:
            return None  # a weak guess, not two strong ones
        first, second = str(ranked[0].get("name")), str(ranked[1].get("name"))
        return IntentGuard._covering(frozenset({first, second}), first, message)

    @staticmethod
    def _covering(pair: frozenset, first: Text, message: Message) -> Optional[Text]:
        """The intent whose answer covers both of two close ones, or None."""
        if pair in COVERING_WINNER:
            return COVERING_WINNER[pair]
        if pair in COVERING_WITHOUT_VALUES and not IntentGuard.carries_values(message.get(TEXT) or ""):
            return COVERING_WITHOUT_VALUES[pair]
        faq_and_job = any(name.startswith("faq_") for name in pair) and any(name in JOB_INTENTS for name in pair)
        if faq_and_job and IntentGuard._card_size_question(message):
            # "is a 24 GB card enough for this job?": the memory FAQ with the job's line, whichever ranked first
            return next(name for name in sorted(pair) if name.startswith("faq_"))
        if faq_and_job or set(pair) in COVERING_PAIRS:
            return first
        return None

    @staticmethod
    def _contenders(message: Message) -> List[Text]:
        """The two best-ranked intents behind a fallback."""
        return [str(r.get("name")) for r in message.get(INTENT_RANKING_KEY) or []
                if r.get("name") != NO_WORDS_INTENT][:2]

    @staticmethod
    def _card_size_question(message: Message) -> bool:
        """ "We use Llama 3.1 8B, is a 24 GB card enough?": a question about a card size, answered by the memory
        FAQ with the job's line (the method assumed and said), not the method question of the form."""
        from bot.text.questions import card_size_gb, is_question

        text = message.get(TEXT) or ""
        return bool(card_size_gb(text)) and is_question(text)

    @staticmethod
    def _values_lost(message: Message) -> bool:
        """The answer to this intent would ignore the message's values (a greeting, "I did not understand")."""
        intent = (message.get(INTENT) or {}).get("name")
        if intent in SOCIAL_VALUE_BLIND_INTENTS:
            return True
        if intent not in VALUE_BLIND_INTENTS:
            return False
        if intent == NO_WORDS_INTENT:
            # A fallback torn between an FAQ and another intent is a question about the values, not a job.
            ranked = [r.get("name") for r in message.get(INTENT_RANKING_KEY) or [] if r.get("name") != intent]
            return not (ranked and str(ranked[0]).startswith("faq_"))
        return True

    @staticmethod
    def _own_card_or_comparison(message: Message, values: "MessageValues") -> Optional[Text]:
        intent = (message.get(INTENT) or {}).get("name")
        if intent not in OWN_CARD_MISTAKEN_FOR + COMPARE_MISTAKEN_FOR + (OWN_CARD_INTENT, NO_WORDS_INTENT,
                                                                        CARD_FAQ_INTENT):
            return None
        parsed = values.parsed
        if intent == OWN_CARD_INTENT:
            # "32B LoRA eğitimi RTX PRO 6000'e sığar mı?": a catalogue card, no card of the customer's own - with
            # job values it is an estimate request.
            if not (values.carries(JOB_VALUE_FIELDS) or describes_data(values)) or getattr(parsed, "own_gpu", None):
                return None
            return MEMORY_FAQ_INTENT if IntentGuard._card_size_question(message) else JOB_VALUES_INTENT
        if getattr(parsed, "own_gpu", None) and intent in OWN_CARD_MISTAKEN_FOR:
            return OWN_CARD_INTENT
        if intent in JOB_INTENTS and IntentGuard._card_size_question(message):
            return MEMORY_FAQ_INTENT  # "is a 24 GB card enough for Llama 8B QLoRA?": the FAQ with the job's line
        return IntentGuard._comparison(message, intent, getattr(parsed, "compare", None))

    @staticmethod
    def _comparison(message: Message, intent: Optional[Text], compare: Optional[dict]) -> Optional[Text]:
        if not compare:
            return None
        if intent == CARD_FAQ_INTENT and set(compare.get("options") or []) != CARD_FAQ_OPTIONS:
            return COMPARE_INTENT  # "A40 or H100?" is not the A100-vs-H100 FAQ: the two cards for the job
        if intent in COMPARE_MISTAKEN_FOR or (intent == NO_WORDS_INTENT and (
                compare.get("kind") == "gpu" or COMPARE_INTENT in IntentGuard._contenders(message))):
            # A fallback between the comparison and an FAQ on the same options, or any fallback on two catalogue
            # cards joined by "or" ("L4 mü A40 mı, model henüz yok"): the parser found the two options.
            return COMPARE_INTENT
        return None

    @staticmethod
    def _question_about_a_card(message: Message, values: "MessageValues") -> bool:
        from bot.advisor.knowledge import load_knowledge
        from bot.text.followups import read_followup

        intent = str((message.get(INTENT) or {}).get("name"))
        if not (intent in FOLLOWUP_MISTAKEN_FOR or intent.startswith("faq_")):
            return False
        text = message.get(TEXT) or ""
        asked = read_followup(text, load_knowledge())
        if not asked.cards or asked.kind is None:
            return False
        parsed = values.parsed
        return parsed.compare is None and not parsed.own_gpu and not values.carries(JOB_VALUE_FIELDS + ("method",))

    @staticmethod
    def _other_workload(message: Message, values: "MessageValues") -> bool:
        """A request to train an image or vision model, with no language model named: what the servers offer
        (utter_other_workload), not the estimate form asking which LLM (blind set of 2026-12-03)."""
        from bot.text.followups import names_other_workload

        if (message.get(INTENT) or {}).get("name") not in OTHER_WORKLOAD_MISTAKEN_FOR or values.carries(
                ("model_id", "model_size_b")):
            return False
        return names_other_workload(message.get(TEXT) or "")

    @staticmethod
    def _intent(message: Message) -> Text:
        return str((message.get(INTENT) or {}).get("name"))

    @staticmethod
    def _estimate_and_serving(message: Message, values: "MessageValues") -> bool:
        from bot.text.topics import names_topic

        if IntentGuard._intent(message) not in SERVING_MISTAKEN_FOR:
            return False
        text = message.get(TEXT) or ""
        return bool(values.carries(("model_id", "model_size_b"))) and names_topic(text, "serving") \
            and (values.carries(("method",)) or names_topic(text, "training"))

    @staticmethod
    def _serving(message: Message, values: "MessageValues") -> Optional[Text]:
        """Serving a named model: with training it, the estimate and the serving answer; without, serving only."""
        if IntentGuard._estimate_and_serving(message, values):
            return ESTIMATE_AND_SERVING_INTENT
        return OTHER_WORKLOAD_INTENT if IntentGuard._serving_only(message, values) else None

    @staticmethod
    def _serving_only(message: Message, values: "MessageValues") -> bool:
        """ "We want to host Llama 3.1 8B for our users, do you offer inference?": a model to serve and no word of
        training it - the other-workload answer, not the fine-tuning form (issue 21, round 7)."""
        from bot.text.topics import names_topic

        text = message.get(TEXT) or ""
        return IntentGuard._intent(message) in SERVING_MISTAKEN_FOR and names_topic(text, "serving") \
            and values.carries(("model_id", "model_size_b")) \
            and not (values.carries(("method",)) or names_topic(text, "training"))

    @staticmethod
    def _named_cards(message: Message) -> tuple:
        from bot.advisor.knowledge import load_knowledge
        from bot.text.followups import read_followup

        asked = read_followup(message.get(TEXT) or "", load_knowledge())
        return asked.cards if asked.kind is None else ()

    @staticmethod
    def _about_cards_alone(message: Message, values: "MessageValues", intents: tuple) -> tuple:
        """The catalogue cards a message without any job value asks about, when its intent is one of ``intents``."""
        if IntentGuard._intent(message) not in intents or values.carries(JOB_VALUE_FIELDS + ("method", "gpus")):
            return ()
        parsed = values.parsed
        two_options = len((parsed.compare or {}).get("options") or []) == 2
        if two_options or parsed.own_gpu or IntentGuard._card_size_question(message):
            return ()
        return IntentGuard._named_cards(message)

    @staticmethod
    def _one_card_comparison(message: Message, values: "MessageValues") -> bool:
        from bot.text.topics import names_topic

        cards = IntentGuard._about_cards_alone(message, values, ONE_CARD_COMPARE_MISTAKEN_FOR)
        return len(cards) == 1 and names_topic(message.get(TEXT) or "", "compare_card")

    @staticmethod
    def _price_question(message: Message, values: "MessageValues") -> Optional[Text]:
        """A quoted price with "so expensive!", or "which cards under $X an hour?" (round 8, price_questions.py)."""
        from bot.assistant.components import price_questions as prices

        text = message.get(TEXT) or ""
        if prices.cards_under_price(text, values.parsed):
            return prices.CARDS_UNDER_PRICE_INTENT
        if prices.price_complaint(text, IntentGuard._intent(message) or "", values.parsed):
            return prices.PRICE_COMPLAINT_INTENT
        return None

    @staticmethod
    def _card_facts(message: Message, values: "MessageValues") -> bool:
        from bot.text.topics import names_topic

        if IntentGuard._about_cards_alone(message, values, CARD_FACTS_MISTAKEN_FOR):
            return True
        # "H200 رو هم دارید؟ رمش چند گیگه؟" reads like a question about the answer or an order; with no kind of
        # follow-up in it (why, hours, cheaper...) and the card's memory asked, it is about the card itself.
        return bool(IntentGuard._about_cards_alone(message, values, CARD_FACTS_IF_MEMORY_ASKED)) and names_topic(
            message.get(TEXT) or "", "memory")

    @staticmethod
    def _buys_hardware(message: Message, values: "MessageValues") -> bool:
        """Buying cards with "price quote" words: we rent, we do not sell (round 9, order_requests.py)."""
        from bot.assistant.components.order_requests import BUY_MISTAKEN_FOR, buys_hardware

        intent = IntentGuard._intent(message)
        if intent not in BUY_MISTAKEN_FOR:
            return False
        return buys_hardware(intent, message.get(TEXT) or "", values.parsed, IntentGuard._named_cards(message))

    @staticmethod
    def _complete_request(message: Message, values: "MessageValues") -> bool:
        from bot.text.followups import names_other_workload

        from bot.assistant.components.order_requests import ORDER_INTENTS, order_with_job

        intent = IntentGuard._intent(message)
        if intent == SUPPORT_LANGUAGES_FAQ:
            return values.carries(("model_id", "model_size_b", "method"))
        if intent in ORDER_INTENTS:  # round 7: an order or a quote with the whole job gets the estimate first
            return order_with_job(intent, values.parsed)
        if intent == OTHER_WORKLOAD_INTENT and names_other_workload(message.get(TEXT) or ""):
            return False  # image or vision work keeps its answer; serving a named model was routed before
        if intent not in COMPLETE_REQUEST_MISTAKEN_FOR or IntentGuard._card_size_question(message):
            return False
        parsed = values.parsed
        return bool(parsed.model_id or parsed.model_size_b) and bool(parsed.method) and parsed.compare is None

    @staticmethod
    def _value_fields(message: Message) -> tuple:
        intent = (message.get(INTENT) or {}).get("name")
        ranked = [r.get("name") for r in message.get(INTENT_RANKING_KEY) or [] if r.get("name") != NO_WORDS_INTENT]
        social = intent in SOCIAL_VALUE_BLIND_INTENTS or (
            intent == NO_WORDS_INTENT and bool(ranked) and ranked[0] in SOCIAL_VALUE_BLIND_INTENTS + JOB_INTENTS)
        return JOB_VALUE_FIELDS + ("method",) if social else JOB_VALUE_FIELDS

    @staticmethod
    def _route_by_shape(text: str) -> Optional[Text]:
        """The intent a message gets from its shape alone: no words, a config.json, records, other JSON."""
        if not any(ch.isalnum() for ch in text) or is_keyboard_mash(text) or is_latin_mash(text):
            return NO_WORDS_INTENT
        if IntentGuard.is_pasted_config(text):
            # A config.json pasted into the chat (issue 9 #8) reads as English or anything: it gives the model
            return JOB_VALUES_INTENT
        if pastes_training_records(text):
            # A few lines of the customer's training data pasted with "is this format fine?" (round 7): a question
            # about their data, answered with the records' format and the data-preparation answer (actions/faq.py).
            return DATA_PREP_INTENT
        if looks_like_data(text):
            # JSON or a list that is no config.json: its keys read as English, but it is not the customer writing
            # English, so the answer is the "please say it in words" of the conversation's language, not the
            # bilingual "I speak only Persian and Turkish" (issue 20, finding 9).
            return NO_WORDS_INTENT
        return None

    def _route(self, message: Message) -> Optional[Text]:
        """The intent this message must have whatever the classifier said, or None to keep the classifier's."""
        text = message.get(TEXT) or ""
        by_shape = self._route_by_shape(text)
        if by_shape:
            return by_shape
        values = MessageValues(text)
        if message.get(DETECTED_LANGUAGE) == "en" and not values.carries(ALL_VALUE_FIELDS):
            return UNSUPPORTED_LANGUAGE_INTENT
        if asks_if_enough(text, values):
            # "So is it enough or not?": the budget's verdict for the plan on the table, which only the
            # conversation knows (action_default_fallback answers it), not the cost FAQ or "anything else?".
            return NO_WORDS_INTENT
        routed = self._serving(message, values)
        if routed:
            return routed
        routed = self._price_question(message, values)
        if routed:
            return routed
        if self._buys_hardware(message, values):
            return BUY_HARDWARE_INTENT
        if self._other_workload(message, values):  # before the own card: "FLUX on a 4090?" is image work
            return OTHER_WORKLOAD_INTENT
        if self._one_card_comparison(message, values):
            return COMPARE_INTENT
        routed = self._own_card_or_comparison(message, values)
        if routed:
            return routed
        if self._card_facts(message, values):
            return CARD_FACTS_INTENT
        if self._question_about_a_card(message, values):
            return FOLLOWUP_INTENT
        if self._complete_request(message, values):
            return JOB_VALUES_INTENT
        routed = self._ambiguity_resolved(message)
        if routed:
            return routed
        if self._values_lost(message) and (values.carries(self._value_fields(message)) or describes_data(values)):
            return self._values_answer(message)
        return None

    @staticmethod
    def _values_answer(message: Message) -> Text:
        """Where a message whose values the classifier's answer would lose goes: the job's values, or, for "is a 24 GB
        card enough for this job?" that fell between a job and the own-card question, the memory FAQ with the job."""
        if IntentGuard._intent(message) == NO_WORDS_INTENT and IntentGuard._card_size_question(message):
            return MEMORY_FAQ_INTENT
        return JOB_VALUES_INTENT

    def process(self, messages: List[Message]) -> List[Message]:
        for message in messages:
            routed = self._route(message)
            if routed:
                self._override(message, routed)
        return messages
