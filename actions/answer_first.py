"""Answer first (issue 21 #1): a card as soon as the model and the method are known, then only the questions that
would change the advice, each asked once.

Customers asked "which GPU?" and got "only the budget is missing" up to three times: the estimator needs neither a
budget nor (with a stated default) a sequence length to recommend a card. So the estimate form, when model and
method are known and the length or the budget is still open, first sends the card computed with the defaults and
says what it assumed; then it asks its question once. A question the customer leaves unanswered (a follow-up, an
FAQ in between, anything that is not the value) is not asked again: the defaults are taken, said, and the full
estimate follows.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Text

from actions.dialogue_text import join, text

# The starting length the seq_len question itself recommends (domain/responses_estimate.yml, utter_ask_seq_len;
# actions/forms.py DONT_KNOW_VALUES uses the same).
DEFAULT_SEQ_LEN = 2048
# The form questions a first answer can do without: each changes the advice but none is needed for a card.
REFINING_SLOTS = ("seq_len", "budget")
# The budget slot's value when the customer did not give one (neither an amount nor "no limit"): the estimate is
# computed without a budget and says what a budget would buy.
BUDGET_NOT_GIVEN = "not_given"
ANSWERED_FIRST_SLOT = "answered_first"
# The training stack the first answer's figures assume (named, or chosen for the job: Unsloth for a MoE QLoRA): a
# stack named next is compared with it, as after a full estimate with estimate_summary["stack"] (round 7).
FIRST_ANSWER_STACK_SLOT = "first_answer_stack"


class _Slots:
    """The tracker's get_slot over a plain mapping (the form's slots with this turn's updates)."""

    def __init__(self, slots: Mapping[Text, Any]) -> None:
        self._slots = slots

    def get_slot(self, name: Text) -> Any:
        return self._slots.get(name)


def job_known(slots: Mapping[Text, Any]) -> bool:
    return bool(slots.get("model")) and slots.get("method") in ("full", "lora", "qlora")


def assumed_values(slots: Mapping[Text, Any]) -> Dict[Text, Any]:
    """The defaults for the refining values still open."""
    values: Dict[Text, Any] = {}
    if slots.get("seq_len") is None:
        values["seq_len"] = float(DEFAULT_SEQ_LEN)
    if slots.get("budget") is None:
        values["budget"] = BUDGET_NOT_GIVEN
    return values


def assumed_labels(slots: Mapping[Text, Any], lang: Text) -> List[Text]:
    from bot.present.render import number

    labels = []
    if slots.get("seq_len") is None:
        labels.append(text("value_seq_len", lang, n=number(DEFAULT_SEQ_LEN, lang, 0)))
    if slots.get("budget") is None:
        labels.append(text("assumed_budget_not_given", lang))
    return labels


def first_advice(slots: Mapping[Text, Any]) -> Any:
    """The advice for the job with the defaults taken; None when it cannot be computed."""
    from actions.estimate import advice_request_fields
    from bot.advisor.advice import AdviceRequest, advise

    filled = {**slots, **assumed_values(slots)}
    fields = advice_request_fields(_Slots(filled))
    try:
        return advise(AdviceRequest(**fields))
    except ValueError:  # InputError too: the full estimate says what is wrong with the value
        return None


def needs_quote(slots: Mapping[Text, Any], advice: Any = None) -> bool:
    """The job needs several GPUs (no single card holds it): the first answer offers a quote or a person at once,
    as the full estimate does (a cluster is confirmed in a quote). ``advice``: first_advice(slots), when known."""
    advice = advice if advice is not None else first_advice(slots)
    return bool(advice is not None and advice.needs_quote)


def quote_offer_response(message: Text) -> Text:
    """The offer that follows an answer needing several GPUs: the order process with the quote offer when the
    message asks how to order ("4 A100s for this job, how do I order?", round 7), else the quote-or-person offer.
    Both end in the quote offer that a typed yes accepts (actions/language.py OFFERS)."""
    from bot.text.topics import names_topic

    return "utter_order_multi_gpu" if names_topic(message, "order") else "utter_estimate_offer_quote"


def first_answer(slots: Mapping[Text, Any], lang: Text, message: Text = "", advice: Any = None) -> Optional[Text]:
    """The card for the job with the defaults taken, and what was assumed, and a word on each card ``message``
    names (actions/named_cards.py); None when it cannot be computed. ``advice``: first_advice(slots), when known."""
    from bot.present.advice_text import render_first_answer

    advice = advice if advice is not None else first_advice(slots)
    if advice is None:
        return None
    from actions.dialogue_text import noted_values

    intro = text("answer_first_intro", lang, values=join(noted_values(slots, lang), lang),
                 assumed=join(assumed_labels(slots, lang), lang))
    from actions.named_cards import named_card_lines

    from bot.present.stack_lines import named_stack_lines

    stack = named_stack_lines(advice, lang) if slots.get("stack") else []
    return "\n".join([intro, render_first_answer(advice, lang)] + stack + named_card_lines(advice, message, lang))


def defaults_line(slots: Mapping[Text, Any], lang: Text) -> Text:
    return text("answer_first_defaults_taken", lang, assumed=join(assumed_labels(slots, lang), lang))
