"""ValidateEstimateForm: every value of the estimate form is read and checked here, in one place.

Values come from the raw text through bot.text.parse.parse_values (told which slot was asked, so a bare "4096" after
the sequence-length question is a sequence length), or from button payload entities. A message may carry several
values at once, or change values of a finished estimate ("LoRA olursa?"): the form is then re-activated with all
slots filled and completes at once, so action_estimate answers with the new figures without starting over.

Rejecting the form turn (returning no value) hands the turn to the rules: FAQ and chit-chat are answered there and
the form resumes. An answer that is neither a value nor one of those intents gets a hint and the same question.
"""
from __future__ import annotations

import math
import re
from typing import Any, Dict, List, Optional, Sequence, Text

from rasa_sdk import Tracker
from rasa_sdk.events import ActionExecutionRejected, EventType, SlotSet
from rasa_sdk.executor import CollectingDispatcher
from rasa_sdk.forms import REQUESTED_SLOT, FormValidationAction
from rasa_sdk.types import DomainDict

from bot.text.questions import is_question
from actions.common import (FORM_SLOTS, NOTED_SLOTS, QUESTION_REPEAT,
                            VOLUME_SLOTS, actions_before_form_run, conversation_language, is_interruption,
                            latest_intent, payload_entities, recent_bot_texts)
from actions.dialogue_text import text as dialogue_text
from actions.fallback import FAILED_TURNS_BEFORE_HANDOFF_OFFER, count_failed_turn

from actions.form_values import contract_values, refuse_out_of_range  # noqa: F401 (used by actions.language)

METHODS = ("full", "lora", "qlora")
# "I don't know" to a form question takes a value the customer can change later, and says so:
# 2048 tokens is the starting length the seq_len question itself recommends (domain/responses_estimate.yml,
# utter_ask_seq_len); QLoRA needs the least memory of the three methods (knowledge/faq.yml, faq_methods), so it is
# the cheapest start; an unknown budget is no limit (the "no limit" button). The model has no default: re-asked.
DONT_KNOW_INTENT = "dont_know"
DONT_KNOW_VALUES: Dict[Text, Dict[Text, Any]] = {
    "seq_len": {"seq_len": 2048.0},
    "method": {"method": "qlora"},
    "budget": {"budget": "unlimited", "budget_unlimited": True, "budget_usd": None},
}
DONT_KNOW_RESPONSES = {"seq_len": "utter_assumed_seq_len", "method": "utter_assumed_qlora",
                       "budget": "utter_assumed_no_budget", "model": "utter_model_dont_know"}
# The method picked by what matters (round 9): said as an assumption the customer can change.
PREFERENCE_RESPONSES = {"qlora": "utter_assumed_qlora", "lora": "utter_assumed_lora_quality"}
# Interruptions answered in a line ("thanks", "hello"; a language switch says what is noted itself): the form's
# question follows without a "Noted: ..." summary unless the message brought new values.
SHORT_INTERRUPTIONS = ("greet", "start", "set_language", "thank", "switch_language")
# Telegram callback_data holds at most 64 bytes (notes §0.6).
MAX_PAYLOAD_BYTES = 64


def _number(value: Any) -> Optional[float]:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    # "1e999" in a payload is infinity: float(int(inf)) raised and the turn got no answer (issue 20, finding 7).
    return number if math.isfinite(number) and number > 0 else None


# The model slots a message about the model replaces together (a new name clears a stand-in note and a config).
MODEL_SLOTS = ("model", "model_id", "model_size_b", "model_unrecognised", "custom_arch", "custom_arch_label",
               "model_version_assumed")


def _model_from_text(dispatcher: CollectingDispatcher, parsed: Any, text: Text, lang: Text) -> Dict[Text, Any]:
    """The model of one message: a known preset by name, a pasted config.json (its values said back), a name we do
    not know (computed with the resolver's stand-in, said with the estimate: actions/model_notes.py), or a size.

    Never "you gave only the size" for a named model: the name is kept in ``model_unrecognised``.
    """
    from actions.model_notes import config_error_message, config_read_note, stand_in

    cleared = {name: None for name in MODEL_SLOTS}
    if parsed.custom_arch:
        label = parsed.custom_arch_label or "config.json"
        note = config_read_note(parsed.custom_arch, lang)
        if note:
            dispatcher.utter_message(text=note)
        return {**cleared, "model": label, "custom_arch": parsed.custom_arch, "custom_arch_label": label,
                "model_size_b": _number(parsed.model_size_b)}
    if parsed.config_error:
        # The customer is told which key is missing; the question stays open (no second hint).
        dispatcher.utter_message(text=config_error_message(text, lang))
        return {"failed_turns": 0.0}
    if parsed.model_id:
        return {**cleared, "model": parsed.model_id, "model_id": parsed.model_id,
                "model_size_b": _number(parsed.model_size_b),
                "model_version_assumed": True if parsed.model_version_assumed else None}
    if parsed.model_query:
        values = stand_in(parsed.model_query, _number(parsed.model_size_b))
        if values:
            return {**cleared, **values}
        if not _number(parsed.model_size_b):
            # a variant we do not know and no size to go by ("gemma 4 e2b"): say so and offer the closest presets
            ValidateEstimateForm._suggest_models(dispatcher, parsed.model_query)
    if _number(parsed.model_size_b):
        size = _number(parsed.model_size_b)
        return {**cleared, "model": f"{size:g}b", "model_size_b": size}
    return {}


def _with_earlier_family(parsed: Any, text: Text, earlier: Sequence[Text]) -> Any:
    """A bare size ("the 8-billion one, version 3.1") after a message that named only the family ("Llama"): the
    family's preset of that size (actions/model_context.py)."""
    if parsed.model_id or parsed.model_query or parsed.custom_arch or not _number(parsed.model_size_b) or not earlier:
        return parsed
    from actions.model_context import model_with_earlier_family

    named = model_with_earlier_family(text, float(parsed.model_size_b), earlier)
    if named is None:
        return parsed
    return parsed.copy(update={name: getattr(named, name) for name in
                               ("model_id", "model_size_b", "model_query", "model_family", "model_version_assumed")})


def earlier_user_texts(tracker: Tracker) -> List[Text]:
    """The customer's earlier messages, newest first (the latest one left out)."""
    from actions.model_context import EARLIER_MESSAGES

    texts = [event.get("text") or "" for event in tracker.events if event.get("event") == "user"]
    return list(reversed(texts[:-1]))[:EARLIER_MESSAGES]


# The parser's fields that answer each form question.
ANSWER_FIELDS = {"model": ("model_id", "model_size_b"), "method": ("method",), "seq_len": ("seq_len",),
                 "budget": ("budget_usd", "budget_unlimited", "hourly_cap")}
def answers_requested_slot(text: Text, requested: Optional[Text]) -> bool:
    """The message gives the value the form asked for (parsed with that expectation)."""
    from bot.text.parsed import parsed_message

    if requested not in ANSWER_FIELDS or not text.strip() or text.startswith("/"):
        return False
    parsed = parsed_message(text, expected=requested)
    return any(getattr(parsed, name, None) not in (None, False) for name in ANSWER_FIELDS[requested])


def _first_ambiguous(ambiguous: Any) -> Optional[str]:
    if not ambiguous:
        return None
    if isinstance(ambiguous, (list, tuple, set)):
        item = next(iter(ambiguous))
        return str(getattr(item, "text", None) or item)
    return str(ambiguous)


def _asks_if_enough(tracker: Tracker) -> bool:
    from bot.text.enough import asks_if_enough

    return latest_intent(tracker) == "nlu_fallback" and asks_if_enough(tracker.latest_message.get("text") or "")


class ValidateEstimateForm(FormValidationAction):
    def name(self) -> Text:
        return "validate_estimate_form"

    async def run(self, dispatcher: CollectingDispatcher, tracker: Tracker,
                  domain: DomainDict) -> List[EventType]:
        updates: Dict[Text, Any] = {}
        answers = self._answers_the_form(tracker)
        self._say_declined(dispatcher, tracker)
        if answers and (preferred := self._method_by_preference(tracker)):
            # "hangisi ucuzsa o", «هر کدوم ارزون‌تره» to the method question (round 9): QLoRA (LoRA for quality),
            # said as an assumption; the estimate follows as for any method given.
            dispatcher.utter_message(response=PREFERENCE_RESPONSES[preferred])
            updates = {"method": preferred, "failed_turns": 0.0}
        elif answers and self._left_to_rules(tracker):
            # The rules answer this message (an FAQ, thanks, a comparison ...). Its values were already kept by
            # action_validate_slot_mappings, and a filled form slot would stop Rasa from rejecting the form turn
            # on its own, so the turn is handed over explicitly; the form resumes after the answer.
            return [ActionExecutionRejected(self.form_name())]
        elif answers and self._budget_fit_without_budget(tracker):
            # "Does it fit my budget?" and no amount known: the budget is asked for, never assumed.
            dispatcher.utter_message(text=dialogue_text("budget_fit_needs_budget", conversation_language(tracker)))
            return [SlotSet("budget", None), SlotSet("budget_unlimited", None), SlotSet(REQUESTED_SLOT, "budget")]
        elif answers and _asks_if_enough(tracker):
            # "yeter mi?" while the form waits for a value: answered from what is known (actions/fallback.py),
            # then the same question again in its other wording (issue 21, round 4: it was read as a model name).
            from actions.fallback import answer_if_enough

            answer_if_enough(dispatcher, tracker, ask_budget=False)
            next_slot = next((name for name in FORM_SLOTS if tracker.get_slot(name) is None), None)
            return [SlotSet(REQUESTED_SLOT, next_slot)] + self._question_variant(tracker, next_slot)
        elif answers:
            updates = self.read_values(dispatcher, tracker)
        slots = {**tracker.slots, **updates}
        next_slot = self._budget_first(tracker, slots, next((name for name in FORM_SLOTS if slots.get(name) is None),
                                                             None))
        # After a greeting or a thank-you the form's question simply follows (in its other wording).
        social = not answers and latest_intent(tracker) in SHORT_INTERRUPTIONS
        # An FAQ answered while the first answer's question is open, and no value given with it: that question once
        # more in its short wording, never the defaults taken and the whole estimate sent again (issue 21, round 5).
        faq_pause = not answers and self._faq_after_first_answer(tracker) \
            and not self._new_values_this_turn(tracker, updates)
        answered_first = None if social or faq_pause else self._answer_first(dispatcher, tracker, slots, next_slot,
                                                                             updates)
        if answered_first is not None:
            return answered_first
        if next_slot and not faq_pause and self._where_it_stands_is_news(tracker, updates, answers, social):
            self._say_where_it_stands(dispatcher, tracker, slots)
        self._note_use_case(dispatcher, tracker, next_slot)
        events = [SlotSet(name, value) for name, value in updates.items()] + [SlotSet(REQUESTED_SLOT, next_slot)]
        return events + self._question_variant(tracker, next_slot)

    def _where_it_stands_is_news(self, tracker: Tracker, updates: Dict[Text, Any], answers: bool,
                                 social: bool) -> bool:
        """New values this turn, or the form resuming after an answered question (not after thanks)."""
        if not answers and not social:
            return True
        return bool(updates or not answers) and self._new_values_this_turn(tracker, updates)

    @staticmethod
    def _say_where_it_stands(dispatcher: CollectingDispatcher, tracker: Tracker, slots: Dict[Text, Any]) -> None:
        """ "Noted: Llama 3.1 8B, QLoRA, 25 dollars budget. Only the sequence length is missing." - the values given
        in this message (or during the interruption just answered) are confirmed before the question; after an
        answered question (an FAQ, a comparison) the form says where it stands before asking again."""
        from actions.dialogue_text import noted_message

        message = noted_message(slots, conversation_language(tracker))
        # Said only when it tells something the customer has not just read: the same line right after the
        # previous turn's would be a repeat (the question's own second wording follows instead).
        if message and message.strip() not in recent_bot_texts(tracker):
            dispatcher.utter_message(text=message)

    @staticmethod
    def _note_use_case(dispatcher: CollectingDispatcher, tracker: Tracker, next_slot: Optional[Text]) -> None:
        """Round 9: "a law firm, we want a model that summarises contracts" and no model yet: a short line that the
        use case is noted before the model question (knowledge/lexicon.yml topics use_case)."""
        from bot.text.topics import names_topic

        if next_slot != "model" or not names_topic(tracker.latest_message.get("text") or "", "use_case"):
            return
        line = dialogue_text("use_case_noted", conversation_language(tracker))
        if line not in recent_bot_texts(tracker):
            dispatcher.utter_message(text=line)

    def _answer_first(self, dispatcher: CollectingDispatcher, tracker: Tracker, slots: Dict[Text, Any],
                      next_slot: Optional[Text], updates: Dict[Text, Any]) -> Optional[List[EventType]]:
        """Answer first (actions/answer_first.py): the form's events when it gives the first card or takes the
        defaults of a question asked once already; None when neither applies."""
        from actions.answer_first import (ANSWERED_FIRST_SLOT, FIRST_ANSWER_STACK_SLOT, assumed_values, defaults_line,
                                          first_advice, first_answer)

        lang = conversation_language(tracker)
        # A note instead of the value (an unclear number, a currency we do not convert) asks again: the customer
        # tried to answer.
        noted_only = set(updates) == {"failed_turns"}
        if not noted_only and self._asked_once_already(tracker, slots, next_slot):
            # The card was given and this question asked once; left unanswered, it is not asked again: the
            # defaults are taken, said, and the full estimate follows.
            dispatcher.utter_message(text=defaults_line(slots, lang))
            updates.update(assumed_values(slots))
            return [SlotSet(name, value) for name, value in updates.items()] + [SlotSet(REQUESTED_SLOT, None)]
        message = tracker.latest_message.get("text") or ""
        again = self._answer_again(slots, next_slot, updates)
        advice = first_advice(slots) if again or self._answer_first_now(slots, next_slot) else None
        answer = first_answer(slots, lang, message, advice=advice) if advice is not None else None
        if not answer:
            return None
        from actions.own_card import own_card_verdict

        verdict = own_card_verdict(tracker, slots, lang)
        if verdict:  # round 8: the own card was named, the model asked; its verdict first, then the cloud card
            dispatcher.utter_message(text=verdict)
        dispatcher.utter_message(text=answer)
        from actions.answer_first import needs_quote, quote_offer_response

        if needs_quote(slots, advice) and tracker.get_slot("pending_offer") != "quote":
            # Several GPUs or a cluster: the quote or a person is offered with the first answer (its buttons; a
            # typed yes is read through pending_offer, actions/language.py OFFERS), how to order when asked; not
            # again right after the previous turn offered it (the first answer given again with a value: round 7,
            # "4 ta gpu" then "don't know" repeated the offer word for word).
            dispatcher.utter_message(response=quote_offer_response(message))
        updates[ANSWERED_FIRST_SLOT] = True
        updates[FIRST_ANSWER_STACK_SLOT] = advice.plan.stack  # what a stack named next is compared with
        events = [SlotSet(name, value) for name, value in updates.items()]
        return events + [SlotSet(REQUESTED_SLOT, next_slot)] + self._question_variant(tracker, next_slot)

    @staticmethod
    def _faq_after_first_answer(tracker: Tracker) -> bool:
        from actions.answer_first import ANSWERED_FIRST_SLOT

        return bool(tracker.get_slot(ANSWERED_FIRST_SLOT)) and (latest_intent(tracker) or "").startswith("faq_")

    @staticmethod
    def _answer_first_now(slots: Dict[Text, Any], next_slot: Optional[Text]) -> bool:
        """Model and method known, a refining value open, and no first answer given yet in this conversation."""
        from actions.answer_first import ANSWERED_FIRST_SLOT, REFINING_SLOTS, job_known

        return next_slot in REFINING_SLOTS and job_known(slots) and not slots.get(ANSWERED_FIRST_SLOT) \
            and slots.get("estimate_summary") is None

    @staticmethod
    def _method_by_preference(tracker: Tracker) -> Optional[Text]:
        from bot.text.enough import method_by_preference
        from bot.text.parsed import parsed_message

        text = tracker.latest_message.get("text") or ""
        if tracker.get_slot(REQUESTED_SLOT) != "method" or parsed_message(text, expected="method").method:
            return None
        return method_by_preference(text)

    @staticmethod
    def _budget_first(tracker: Tracker, slots: Dict[Text, Any], next_slot: Optional[Text]) -> Optional[Text]:
        """ "Will my money be enough?" with the job and no amount (round 9): the budget is the question that follows
        the first answer, before the sequence length."""
        from bot.text.enough import asks_money_enough

        if next_slot == "seq_len" and slots.get("budget") is None \
                and asks_money_enough(tracker.latest_message.get("text") or ""):
            return "budget"
        return next_slot

    @staticmethod
    def _say_declined(dispatcher: CollectingDispatcher, tracker: Tracker) -> None:
        """ "No thanks, but what does Mistral 7B QLoRA need?" after a quote or person was offered (round 9): one line
        that nothing was passed on, then the form goes on with the job."""
        from actions.declined_offer import LINE_KEY, declines_the_handoff

        if declines_the_handoff(tracker):
            dispatcher.utter_message(text=dialogue_text(LINE_KEY, conversation_language(tracker)))

    @staticmethod
    def _budget_fit_without_budget(tracker: Tracker) -> bool:
        from actions.what_if import asks_budget_fit

        return tracker.get_slot("budget_usd") is None and tracker.get_slot("hourly_cap") is None \
            and asks_budget_fit(tracker.latest_message.get("text") or "")

    @staticmethod
    def _answer_again(slots: Dict[Text, Any], next_slot: Optional[Text], updates: Dict[Text, Any]) -> bool:
        """The first answer was given and this message completes or changes a value of the job while a refining
        question is still open: the card for the new values comes before that question ("only the budget is
        missing" and no card, blind round 2)."""
        from actions.answer_first import ANSWERED_FIRST_SLOT, REFINING_SLOTS, job_known

        changed = any(name in NOTED_SLOTS and value is not None for name, value in updates.items())
        return changed and next_slot in REFINING_SLOTS and job_known(slots) and bool(slots.get(ANSWERED_FIRST_SLOT)) \
            and slots.get("estimate_summary") is None

    @staticmethod
    def _asked_once_already(tracker: Tracker, slots: Dict[Text, Any], next_slot: Optional[Text]) -> bool:
        """The first answer was given and the form asked for ``next_slot`` in its last turn; this message (or the
        interruption just answered) did not give it."""
        from actions.answer_first import ANSWERED_FIRST_SLOT, REFINING_SLOTS, job_known

        if next_slot not in REFINING_SLOTS or not slots.get(ANSWERED_FIRST_SLOT) or not job_known(slots):
            return False
        return tracker.get_slot(REQUESTED_SLOT) == next_slot and (
            tracker.active_loop or {}).get("name") == "estimate_form"

    @staticmethod
    def _question_variant(tracker: Tracker, next_slot: Optional[Text]) -> List[EventType]:
        """The same question as in the form's previous turn comes in the other wording (question_repeat).

        Toggling (not just "repeat = true") means a third ask differs from the second as well: never the same
        question twice in a row word for word.
        """
        asked_before = tracker.get_slot(REQUESTED_SLOT)
        same = bool(next_slot) and next_slot == asked_before \
            and (tracker.active_loop or {}).get("name") == "estimate_form"
        variant = (not tracker.get_slot(QUESTION_REPEAT)) if same else False
        return [SlotSet(QUESTION_REPEAT, variant)] if variant != bool(tracker.get_slot(QUESTION_REPEAT)) else []

    @staticmethod
    def _new_values_this_turn(tracker: Tracker, updates: Dict[Text, Any]) -> bool:
        if any(name in NOTED_SLOTS and value is not None for name, value in updates.items()):
            return True
        for event in reversed(tracker.events):
            if event.get("event") == "user":
                return False
            if event.get("event") == "slot" and event.get("name") in NOTED_SLOTS and event.get("value") is not None:
                return True
        return False

    @staticmethod
    def _left_to_rules(tracker: Tracker) -> bool:
        """The latest message is answered by a rule (FAQ, chit-chat, a yes/no to an offer), not read by the form."""
        intent = latest_intent(tracker)
        requested = tracker.get_slot(REQUESTED_SLOT)
        if intent == "deny" and requested == "budget":
            return False  # "no" to the budget question: no limit
        if is_interruption(intent):
            # "saatte en fazla 2 dolar" after the budget question reads like the prices FAQ to the classifier: a
            # reply that fills the asked value and asks nothing is the answer (language reviews fa/tr §2.2).
            # So is one the classifier calls out of scope ("بودجه باز است، شرکت پرداخت می‌کند" after the budget
            # question): the out-of-scope answer would only come before the form reads it anyway.
            text = tracker.latest_message.get("text") or ""
            return not ((intent.startswith("faq_") or intent == "out_of_scope")
                        and answers_requested_slot(text, requested) and not is_question(text))
        return intent in ("affirm", "deny") and bool(tracker.get_slot("pending_offer"))

    def _answers_the_form(self, tracker: Tracker) -> bool:
        """True when the form runs straight after a user message (activation or an answer).

        After an interruption (an FAQ answered mid-form) the form runs again on the same user message, which must
        not be read twice. Rasa hands the validation action a copy of the tracker that ends with an extra
        ActionExecuted(<form>), so the action that ran before that one tells who spoke last.
        """
        actions = actions_before_form_run(tracker, self.form_name())
        if actions and actions[-1] == "action_deactivate_loop":
            # Values typed while the handoff form waited for consent leave it for this form on the same message
            # (data/rules/handoff.yml): that message has not been read yet.
            actions.pop()
        return not actions or actions[-1] == "action_listen"

    def read_values(self, dispatcher: CollectingDispatcher, tracker: Tracker) -> Dict[Text, Any]:
        """Slot updates from the latest message; utters notes and hints as a side effect."""
        intent = latest_intent(tracker)
        requested = tracker.get_slot(REQUESTED_SLOT)
        if self._left_to_rules(tracker):
            return {}  # the rules answer it (FAQ, a yes/no to an offer), then the form asks its question again

        text = tracker.latest_message.get("text") or ""
        updates = self._from_payload(payload_entities(tracker))
        if not updates and not text.startswith("/"):
            updates = self._from_text(dispatcher, text, requested, conversation_language(tracker),
                                      slots=tracker.slots, earlier=earlier_user_texts(tracker))
            updates.update(contract_values(text, {**tracker.slots, **updates}, updates, tracker.slots))
        if updates:
            updates = refuse_out_of_range(dispatcher, updates, conversation_language(tracker))
        if intent == "deny" and requested == "budget" and not updates:
            updates = {"budget": "unlimited", "budget_unlimited": True, "budget_usd": None}
        if intent == DONT_KNOW_INTENT and requested in FORM_SLOTS and requested not in updates:
            return self._dont_know(dispatcher, tracker, requested, updates)

        if updates:
            updates["failed_turns"] = 0.0
            return updates
        # Answer first: a question asked once already is not hinted at; run() takes its default.
        if requested in FORM_SLOTS and not self._asked_once_already(tracker, dict(tracker.slots), requested):
            return self._not_understood(dispatcher, tracker, requested, text)
        return updates

    def _not_understood(self, dispatcher: CollectingDispatcher, tracker: Tracker, requested: Text,
                        text: Text) -> Dict[Text, Any]:
        """A hint and the same question; at the second turn without progress the offer of a person ("I find it
        hard to understand you") replaces the hint, so the same hint is never sent twice in a row."""
        updates: Dict[Text, Any] = {}
        offer_now = int(tracker.get_slot("failed_turns") or 0) + 1 >= FAILED_TURNS_BEFORE_HANDOFF_OFFER
        if not (requested == "model" and self._suggest_models(dispatcher, text)) and not offer_now:
            dispatcher.utter_message(response=f"utter_{requested}_not_understood")
        for event in count_failed_turn(dispatcher, tracker):
            updates[event["name"]] = event["value"]
        # Setting the asked slot (to empty) keeps the form from rejecting the turn, so it asks again.
        updates[requested] = None
        return updates

    @staticmethod
    def _dont_know(dispatcher: CollectingDispatcher, tracker: Tracker, requested: Text,
                   updates: Dict[Text, Any]) -> Dict[Text, Any]:
        """A default for the asked value, said aloud; for the model, examples and the same question again."""
        dispatcher.utter_message(response=DONT_KNOW_RESPONSES[requested])
        if requested in DONT_KNOW_VALUES:
            return {**updates, **DONT_KNOW_VALUES[requested], "failed_turns": 0.0}
        # The model has no default: no progress, so it counts towards the offer of a person (issue 13: two turns
        # without progress). Setting the asked slot to empty keeps the form from rejecting the turn: it asks again.
        for event in count_failed_turn(dispatcher, tracker):
            updates[event["name"]] = event["value"]
        return {**updates, requested: None}

    # ------------------------------------------------------------------------------------------ sources

    @staticmethod
    def _from_payload(entities: Dict[Text, Any]) -> Dict[Text, Any]:
        updates: Dict[Text, Any] = {}
        if entities.get("model_id"):
            from bot.advisor.knowledge import UnknownModel, resolve_model

            try:
                preset = resolve_model(str(entities["model_id"])).preset
            except UnknownModel:
                preset = None
            if preset is not None:
                updates.update(model=preset.id, model_id=preset.id, model_size_b=preset.size_b,
                               model_version_assumed=None)
        elif _number(entities.get("model_size_b")):
            size = _number(entities["model_size_b"])
            updates.update(model=f"{size:g}b", model_id=None, model_size_b=size)
        if str(entities.get("method", "")).lower() in METHODS:
            updates["method"] = str(entities["method"]).lower()
        if _number(entities.get("seq_len")):
            updates["seq_len"] = float(int(_number(entities["seq_len"])))
        if entities.get("budget_unlimited") in (True, "true", "True"):
            updates.update(budget="unlimited", budget_unlimited=True, budget_usd=None)
        elif _number(entities.get("budget_usd")):
            updates.update(budget="usd", budget_unlimited=False, budget_usd=_number(entities["budget_usd"]))
        return updates

    @staticmethod
    def _from_text(dispatcher: CollectingDispatcher, text: Text, requested: Optional[Text],
                   lang: Text = "fa", slots: Optional[Dict[Text, Any]] = None,
                   earlier: Sequence[Text] = ()) -> Dict[Text, Any]:
        """Slot updates from the text; ``slots`` (the conversation's) lets the plan's state decide what a bare
        number means after an estimate (actions/what_if.py)."""
        from actions.what_if import reread_expected
        from bot.text.parsed import parsed_message

        parsed = parsed_message(text, expected=reread_expected(text, requested, slots,
                                                               earlier[0] if earlier else None))
        parsed = _with_earlier_family(parsed, text, earlier)
        updates: Dict[Text, Any] = _model_from_text(dispatcher, parsed, text, lang)
        if parsed.method in METHODS:
            updates["method"] = parsed.method
        if _number(parsed.seq_len):
            updates["seq_len"] = float(int(_number(parsed.seq_len)))
        if parsed.budget_unlimited:
            updates.update(budget="unlimited", budget_unlimited=True, budget_usd=None)
        elif _number(parsed.budget_usd):
            updates.update(budget="usd", budget_unlimited=False, budget_usd=_number(parsed.budget_usd))
        elif parsed.currency_note:
            # TL or toman: we do not convert; say prices are in USD and ask for dollars. The note is the answer,
            # so the turn is not counted as failed and no second hint is added.
            dispatcher.utter_message(response="utter_currency_note")
            updates.setdefault("failed_turns", 0.0)
        for name in VOLUME_SLOTS:
            value = _number(getattr(parsed, name, None))
            if value is not None:
                updates[name] = value
        ambiguous = _first_ambiguous(parsed.ambiguous)
        if ambiguous:
            dispatcher.utter_message(response="utter_ambiguous_number", number=ambiguous)
            # Asked about, not guessed: count it as handled so the form does not add a second hint.
            updates.setdefault("failed_turns", 0.0)
        return updates

    @staticmethod
    def _suggest_models(dispatcher: CollectingDispatcher, text: Text) -> bool:
        """For a model name we do not know, offer the closest presets as buttons."""
        from bot.advisor.knowledge import UnknownModel, load_knowledge, resolve_model

        query = text.strip()
        if not re.search(r"[A-Za-z]", query):
            return False
        try:
            resolve_model(query)
            return False
        except UnknownModel as unknown:
            suggestions = unknown.suggestions
        if not suggestions:
            return False
        kb = load_knowledge()
        buttons = []
        for preset_id in suggestions[:4]:
            payload = '/inform{"model_id":"%s"}' % preset_id
            if len(payload.encode()) <= MAX_PAYLOAD_BYTES:
                buttons.append({"title": kb.model(preset_id).display, "payload": payload})
        dispatcher.utter_message(response="utter_unknown_model", model_query=query, buttons=buttons)
        return True
