"""action_answer_faq: any faq_<topic> intent, answered from knowledge/faq.yml in the user's language.

When the job is known well enough (a model, from this message or an earlier one) and the question is about
memory, the general answer is followed by the same question for this job: "Llama 3.1 8B with QLoRA and 2048 tokens
needs about 9 GB of GPU memory; so a 24 GB card is enough." (issue 13, language reviews fa §2.2, tr §2.2).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Text

from rasa_sdk import Action, Tracker
from rasa_sdk.executor import CollectingDispatcher

from actions.common import conversation_language, latest_intent
from bot.text.questions import card_size_gb

FAQ_PREFIX = "faq_"
# FAQ topics about memory or cards, where the customer's own job changes the answer.
JOB_TOPICS = ("vram", "13b_24gb", "methods", "lora_quality", "multi_gpu", "h100_vs_a100")
# FAQ topics that compare two options: with a job known and two options named, the comparison for the job follows.
COMPARISON_TOPICS = ("h100_vs_a100", "methods")
# The answer to "which length?" the seq_len question itself recommends (utter_ask_seq_len), and QLoRA, the method
# needing the least memory (faq_methods): the assumptions of the job line when the customer has not said them.
ASSUMED_SEQ_LEN = 2048
ASSUMED_METHOD = "qlora"


def faq_answer(topic: Text, lang: Text) -> Text | None:
    """The answer with its figures computed from the estimator and the price list (knowledge/faq_figures.yml) and
    the website's address for links (ADVISOR_PUBLIC_URL, as for the charts)."""
    import os

    from bot.present.render import faq_text

    return faq_text(topic, lang, public_url=os.environ.get("ADVISOR_PUBLIC_URL"))


def job_line(tracker: Tracker, lang: Text) -> Optional[Text]:
    """The FAQ's question answered for the customer's job, or None when no model is known."""
    from bot.advisor.advice import AdviceRequest, advise
    from bot.advisor.knowledge import load_knowledge
    from bot.advisor.recommend import classify
    from bot.present.render import gb, number

    from actions.dialogue_text import join, method_label, model_label, text

    slots = tracker.slots
    if not _job_known(tracker):
        return None
    method = slots.get("method") or ASSUMED_METHOD
    seq_len = int(slots.get("seq_len") or ASSUMED_SEQ_LEN)
    try:
        advice = advise(AdviceRequest(model=slots.get("model_id"),
                                      size_b=None if slots.get("model_id") else slots.get("model_size_b"),
                                      method=method, seq_len=seq_len, budget_unlimited=True))
    except Exception:  # an unusual size or value: the general answer stands alone
        return None
    estimate = advice.estimate
    line = text("job_memory", lang, model=model_label(slots, lang), method=method_label(method, lang),
                seq_len=number(seq_len, lang, 0), gib=gb(estimate.per_gpu_gib, lang))
    card_gb = card_size_gb(tracker.latest_message.get("text") or "")
    catalogue = [card for card in load_knowledge().gpus if card_gb and abs(card.vram_gb - card_gb) < 0.5]
    if catalogue:
        # Cards of the same marketed size differ in usable memory: judge on the smallest (the cautious answer),
        # on the upper bound of the estimate's range (recommend.classify).
        usable = min(card.usable_gib for card in catalogue)
        status = classify(estimate.per_gpu_gib, usable, estimate.high_gib)
        key = {"fits": "job_card_fits", "tight": "job_card_tight"}.get(status, "job_card_too_small")
        line += text(key, lang, card_gb=number(card_gb, lang, 0))
    elif advice.best is not None:
        line += text("job_best_card", lang, card=load_knowledge().gpu(advice.best.card_id).name)
    else:
        line += text("job_no_single_card", lang)
    assumed = []
    if not slots.get("method"):
        assumed.append(method_label(method, lang))
    if not slots.get("seq_len"):
        assumed.append(text("value_seq_len", lang, n=number(seq_len, lang, 0)))
    if assumed:
        line += " " + text("job_assumed", lang, assumed=join(assumed, lang))
    return line


def _job_known(tracker: Tracker) -> bool:
    return bool(tracker.get_slot("model_id") or tracker.get_slot("model_size_b"))


# FAQ topics that a stack named in the question does not turn into a what-if on the estimate.
NOT_STACK_TOPICS = ("kvkk", "invoice", "support_languages", "data_prep", "checkpoints", "platform")
# FAQ topics about prices: a card named in the question gets its own price line.
PRICE_TOPICS = ("prices_vat", "invoice", "cost_control")


class ActionAnswerFaq(Action):
    def name(self) -> Text:
        return "action_answer_faq"

    @staticmethod
    def _compares(tracker: Tracker) -> bool:
        from actions.compare import requested_comparison

        return requested_comparison(tracker) is not None

    @staticmethod
    def _named_card_prices(dispatcher: CollectingDispatcher, tracker: Tracker, lang: Text) -> None:
        """The price question names cards ("what does an H200 cost an hour?"): their memory and price without and
        with VAT after the general answer (blind set of 2026-12-03: the card asked about was never named)."""
        from actions.compare import card_facts
        from bot.advisor.knowledge import load_knowledge
        from bot.text.followups import read_followup

        kb = load_knowledge()
        lines = card_facts(list(read_followup(tracker.latest_message.get("text") or "", kb).cards), lang, kb)
        if not lines:
            lines = ActionAnswerFaq._card_asked_before(tracker, lang, kb)
        if lines:
            dispatcher.utter_message(text="\n".join(lines))

    @staticmethod
    def _card_asked_before(tracker: Tracker, lang: Text, kb: Any) -> List[Text]:
        """ "And with KDV?" right after a card's price (action_card_facts): that card's price again, with and
        without VAT, under the general answer (issue 21, round 2)."""
        from actions.common import event_intent, previous_user_event
        from actions.compare import card_price_lines
        from bot.text.followups import read_followup

        previous = previous_user_event(tracker)
        if previous is None or event_intent(previous) != "card_facts":
            return []
        return card_price_lines(list(read_followup(previous.get("text") or "", kb).cards), lang, kb)

    @staticmethod
    def _stack_what_if(tracker: Tracker) -> bool:
        """A stack named after an estimate, outside any form, with the job known."""
        from bot.text.stack_names import read_stack

        from actions.answer_first import job_known

        if (tracker.active_loop or {}).get("name") or tracker.get_slot("estimate_summary") is None:
            return False
        return job_known(tracker.slots) and bool(read_stack(tracker.latest_message.get("text") or ""))

    @staticmethod
    def _stack_first_answer(dispatcher: CollectingDispatcher, tracker: Tracker, lang: Text) -> bool:
        """ "Which stack are these figures for? I use Unsloth" while the estimate form is open on a known job (the
        first answer given, a question pending): the first answer again with that stack (round 8), then the form
        carries on; False when there is no such answer to give."""
        from bot.text.stack_names import read_stack

        from actions.answer_first import first_answer, job_known

        message = tracker.latest_message.get("text") or ""
        if (tracker.active_loop or {}).get("name") != "estimate_form" or not read_stack(message):
            return False
        slots = tracker.current_slot_values()
        answer = first_answer(slots, lang, message) if job_known(slots) else None
        if answer:
            dispatcher.utter_message(text=answer)
        return bool(answer)

    @staticmethod
    def _named_stack(dispatcher: CollectingDispatcher, tracker: Tracker, lang: Text) -> None:
        """The stacks FAQ names the stack the question named ("I use Axolotl"): its figures on request (round 8)."""
        from bot.advisor.knowledge import load_knowledge
        from bot.advisor.stacks import stack
        from bot.text.stack_names import read_stack

        named = read_stack(tracker.latest_message.get("text") or "")
        if named:
            dispatcher.utter_message(text=load_knowledge().text("faq_stack_named", lang, stack=stack(named).name))

    async def run(self, dispatcher: CollectingDispatcher, tracker: Tracker,
                  domain: Dict[Text, Any]) -> List[Dict[Text, Any]]:
        intent = latest_intent(tracker) or ""
        lang = conversation_language(tracker)
        topic = intent[len(FAQ_PREFIX):] if intent.startswith(FAQ_PREFIX) else ""
        if topic not in NOT_STACK_TOPICS and self._stack_what_if(tracker):
            # "and torchtune? I heard it needs less memory" after an estimate: the estimate again with that stack
            # (what it changes is said first), not the general memory answer (issue 21, round 4).
            from actions.estimate import ActionEstimate

            return await ActionEstimate().run(dispatcher, tracker, domain)
        if topic == "stacks" and self._stack_first_answer(dispatcher, tracker, lang):
            return []
        from actions.compare import card_whatif_reply

        whatif = card_whatif_reply(tracker, lang)
        if whatif:
            # A bare card name after an answer that reads like a card FAQ («اگه H100 بگیرم؟»): that card for the
            # job (issue 21, round 4), not the general answer.
            dispatcher.utter_message(text=whatif)
            return []
        from actions.faq_followups import card_price_reply, followup_topic, pasted_data_reply

        card_price = card_price_reply(tracker, topic, lang)
        if card_price:
            # "So which card now, and per hour?" after an estimate: the job's card and price first, not the price
            # list (issue 21, round 5); the job's total with and without KDV when it is asked (round 7).
            dispatcher.utter_message(text=card_price)
            return []
        # Training records pasted with "is this format fine?": their format first, then the general answer.
        for line in filter(None, [pasted_data_reply(tracker, topic, lang)]):
            dispatcher.utter_message(text=line)
        answer = faq_answer(topic, lang) if topic else None
        later = followup_topic(tracker, topic, lang, answer)
        if later != topic:
            # The same topic again right after its answer ("straight to S3?"): its follow-up, never a repeat.
            topic, answer = later, faq_answer(later, lang)
        if answer:
            dispatcher.utter_message(text=answer)
            if topic in COMPARISON_TOPICS and _job_known(tracker) and self._compares(tracker):
                # "H100 mü A100 mü, bu iş için?" with a job known: the general answer, then the two options side
                # by side for this job (actions/compare.py) instead of the one-line memory note.
                from actions.compare import ActionCompareOptions

                await ActionCompareOptions().run(dispatcher, tracker, domain)
                return []
            line = job_line(tracker, lang) if topic in JOB_TOPICS else None
            if line:
                dispatcher.utter_message(text=line)
            elif topic in PRICE_TOPICS:
                self._named_card_prices(dispatcher, tracker, lang)
            elif topic == "stacks":
                self._named_stack(dispatcher, tracker, lang)
        else:
            dispatcher.utter_message(response="utter_faq_missing")
        return []
