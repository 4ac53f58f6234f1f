"""FAQ answers that depend on the conversation (issue 21; found by blind set 5): thin glue over the plan and the
knowledge texts, called by actions/faq.py.

* "Which card now, and what per hour?" after an estimate (and a change of method): the current plan's card with its
  price without and with KDV, answer first, instead of the general price list.
* "Can I write them straight to S3?" right after the checkpoints answer: its short follow-up (knowledge/faq.yml
  checkpoints_s3), never the same answer again.
"""
from __future__ import annotations

from typing import Any, List, Mapping, Optional, Text

from rasa_sdk import Tracker

from actions.common import recent_bot_texts
from actions.dialogue_text import text

# An FAQ topic whose answer, asked about again right after it was given, gets its follow-up answer instead.
FOLLOWUP_TOPICS = {"checkpoints": "checkpoints_s3"}
# Round 7: the checkpoints question that asks to download the model or the adapter to one's own computer.
DOWNLOAD_TOPICS = {"checkpoints": "checkpoints_download"}
# The price question that, with a job on the table, is answered with the job's card first.
CARD_PRICE_TOPICS = ("prices_vat",)


def current_card_price(slots: Mapping[Text, Any], lang: Text, kb: Any = None, message: Text = "") -> Optional[Text]:
    """The job as planned now and its card with the hourly price without and with VAT, and the job's total without
    and with VAT when the volume is known (or, when the total is asked without one, the question for the volume);
    None without a card."""
    from actions.followup import _Answer, plan_advice
    from bot.advisor.knowledge import load_knowledge
    from bot.advisor.vat import price_with_vat
    from bot.present.formatting import _rtl_lines

    kb = kb or load_knowledge()
    try:
        advice = plan_advice(slots)
    except ValueError:  # a value the estimator rejects: the general answer stands
        return None
    answer = _Answer(advice, lang, kb)
    card = _shown_card(answer, slots.get("estimate_summary"))
    if card is None:
        return None
    line = text("current_card_price", lang, card=card.name, vram=answer.vram(card.card_id),
                price=answer.money(card.price_usd_hour),
                price_vat=answer.money(price_with_vat(card.price_usd_hour, kb.pricing.vat_rate, to_cent=True)))
    return _rtl_lines("\n".join([line] + _total_lines(answer, card, kb, message) + [answer.job()]), lang)


def _total_lines(answer: Any, card: Any, kb: Any, message: Text) -> List[Text]:
    """Round 7: "and the total with KDV?" - the job's cost on ``card`` without and with VAT for the known volume;
    without a volume, the question for it when the total is asked."""
    from bot.text.topics import names_topic

    if card.hours is not None and card.cost_usd_with_vat is not None:
        without = card.cost_usd_with_vat / (1 + kb.pricing.vat_rate)
        return [text("current_card_total", answer.lang, card=card.name,
                     duration=answer.fmt.duration(card.hours, answer.lang, answer.kb), cost=answer.money(without),
                     cost_vat=answer.money(card.cost_usd_with_vat))]
    return [text("current_card_total_needs_volume", answer.lang)] if names_topic(message, "total_cost") else []


def _shown_card(answer: Any, summary: Any) -> Any:
    """The card the last estimate recommended (kept by actions/consistency.py when another won by a small margin)
    while it still holds the job, else the plan's recommendation; None when no single card holds it."""
    shown = summary.get("best_card") if isinstance(summary, dict) else None
    fit = answer.fits.get(shown) if shown else None
    if fit is not None and fit.status != "no_fit":
        return fit
    return answer.choice.card if answer.choice is not None else None


def card_price_reply(tracker: Tracker, topic: Text, lang: Text) -> Optional[Text]:
    """Class 1: a price question with a job already answered and no card named in it."""
    from actions.answer_first import job_known
    from actions.compare import named_cards

    if topic not in CARD_PRICE_TOPICS or not job_known(tracker.slots):
        return None
    if tracker.get_slot("estimate_summary") is None and not tracker.get_slot("answered_first"):
        return None
    if named_cards(tracker) or _previous_message_names_cards(tracker):
        # the cards asked about get their own price lines, "and with KDV?" after one too (actions/faq.py)
        return None
    return current_card_price(tracker.slots, lang, message=tracker.latest_message.get("text") or "")


def _previous_message_names_cards(tracker: Tracker) -> bool:
    from actions.common import previous_user_event
    from bot.advisor.knowledge import load_knowledge
    from bot.text.followups import read_followup

    previous = previous_user_event(tracker)
    return previous is not None and bool(read_followup(previous.get("text") or "", load_knowledge()).cards)


def followup_topic(tracker: Tracker, topic: Text, lang: Text, general: Optional[Text]) -> Text:
    """Class 2: the follow-up topic when the general answer was the bot's previous message, else ``topic``."""
    if topic in FOLLOWUP_TOPICS and general and general.strip() in recent_bot_texts(tracker):
        return FOLLOWUP_TOPICS[topic]
    if topic in DOWNLOAD_TOPICS:
        from bot.text.topics import names_topic

        if names_topic(tracker.latest_message.get("text") or "", "download"):
            return DOWNLOAD_TOPICS[topic]
    return topic


def pasted_data_reply(tracker: Tracker, topic: Text, lang: Text) -> Optional[Text]:
    """Round 7: training records pasted with "is this format fine?": their format as the data check reads it (and
    the problems of the ones it cannot use), then how to send the whole file; None when no record is pasted."""
    from bot.dataset.formats import Problem, pasted_records
    from bot.dataset.texts import load_dataset_knowledge
    from bot.present.render import number

    if topic != "data_prep":
        return None
    records = pasted_records(tracker.latest_message.get("text") or "")
    if not records:
        return None
    kb = load_dataset_knowledge()
    formats = list(dict.fromkeys(f"format_{fmt}" for fmt, _ in records if fmt)) or ["kind_json"]
    names = kb.text("list_separator", lang).join(kb.text(key, lang) if key in kb.texts else key for key in formats)
    problems = [record.code for _, record in records if isinstance(record, Problem)]
    count = number(len(records), lang, 0)
    if problems:
        described = kb.text("list_separator", lang).join(dict.fromkeys(
            kb.text(f"problem_{code}", lang) if f"problem_{code}" in kb.texts else code for code in problems))
        line = kb.text("pasted_format_problems", lang, count=count, format=names, bad=number(len(problems), lang, 0),
                       problems=described)
    else:
        line = kb.text("pasted_format_ok", lang, count=count, format=names)
    return "\n".join([line, kb.text("pasted_send_file", lang)])
