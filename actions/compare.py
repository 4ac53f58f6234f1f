"""action_compare_options: "LoRA or QLoRA?", "8B or 14B?", "H100 or A100?" answered side by side for the current job
(bot.advisor.compare), then the conversation carries on where it was (H3's rules trigger it on compare_options).
"Compare it with the A40 too?" after an estimate pairs the one card named with the card the estimate recommended.

action_card_facts: a question about catalogue cards with no job in it ("hourly price of the L40S?", "do you rent
the B200, how much memory?"): each card's price without and with VAT, and its memory only when asked about
(issue 21, round 2)."""
from __future__ import annotations

import logging
from typing import Any, Dict, List, Optional, Text

from rasa_sdk import Action, Tracker
from rasa_sdk.executor import CollectingDispatcher

from actions.common import conversation_language, recent_bot_texts
from actions.estimate import advice_request_fields

logger = logging.getLogger(__name__)


def requested_comparison(tracker: Tracker) -> Optional[Dict[str, Any]]:
    """The {"kind", "options"} the latest message asks for (bot.text.parse), or None."""
    from bot.text.parse import parse_values

    text = tracker.latest_message.get("text") or ""
    try:
        compare = parse_values(text).compare
    except Exception:  # a message the reader cannot take apart is a message with no comparison in it
        logger.exception("parse_values failed on a comparison message")
        return None
    if not isinstance(compare, dict) or len(compare.get("options") or []) != 2:
        return method_what_if(tracker)
    return compare


def method_what_if(tracker: Tracker) -> Optional[Dict[str, Any]]:
    """"Would QLoRA be even cheaper?" after an estimate names one option: the job's method until now and the
    one named, side by side (blind round 2: it was answered "which two options?")."""
    from bot.text.parsed import parsed_message

    named = parsed_message(tracker.latest_message.get("text") or "").method
    summary = tracker.get_slot("estimate_summary")
    current = summary.get("method") if isinstance(summary, dict) else None  # the method of the last estimate
    if named is None or current is None or named == current or not tracker.get_slot("model"):
        return None
    return {"kind": "method", "options": [current, named]}


def card_facts(card_ids: List[str], lang: Text, kb: Any) -> List[Text]:
    """One line per catalogue card: memory, hourly price without and with VAT, and what it is typically used for."""
    from bot.advisor.vat import price_with_vat
    from bot.present.formatting import money

    cards = {card.id: card for card in kb.gpus}
    return [kb.text("compare_card_facts", lang, card=card.name, vram=money(card.vram_gb, lang, whole_if_round=True),
                    price=money(card.price_usd_hour, lang),
                    price_vat=money(price_with_vat(card.price_usd_hour, kb.pricing.vat_rate, to_cent=True), lang),
                    use=getattr(card.typical_use, lang, card.typical_use.fa))
            for card in (cards.get(card_id) for card_id in card_ids) if card is not None]


def named_cards(tracker: Tracker) -> List[str]:
    """The catalogue cards the latest message names, in order (bot.text.followups)."""
    from bot.advisor.knowledge import load_knowledge
    from bot.text.followups import read_followup

    return list(read_followup(tracker.latest_message.get("text") or "", load_knowledge()).cards)


def recommended_card(tracker: Tracker) -> Optional[str]:
    """The card the estimate recommended, or the one the advice recommends now for the job the slots hold (the
    first answer gives a card before the form has finished), with the comparison's defaults; None without a job."""
    from bot.advisor.advice import AdviceRequest, advise
    from bot.advisor.compare import DEFAULT_METHOD, DEFAULT_SEQ_LEN
    from bot.advisor.knowledge import InputError

    summary = tracker.get_slot("estimate_summary")
    if isinstance(summary, dict) and summary.get("best_card"):
        return str(summary["best_card"])
    job = {key: value for key, value in advice_request_fields(tracker).items() if value is not None}
    if not (job.get("model") or job.get("size_b") or job.get("custom_arch")):
        return None
    job.setdefault("method", DEFAULT_METHOD)
    job.setdefault("seq_len", DEFAULT_SEQ_LEN)
    try:
        advice = advise(AdviceRequest.from_values(**job))
    except (InputError, ValueError):
        return None
    best = advice.recommendation.card if advice.recommendation is not None else advice.best
    return best.card_id if best is not None else None


def one_card_comparison(tracker: Tracker) -> Optional[Dict[str, Any]]:
    """{"kind": "gpu", "options": [recommended, named]} for "compare it with the A40 too?" after an estimate."""
    recommended = recommended_card(tracker)
    cards = [card for card in named_cards(tracker) if card != recommended]
    if not recommended or len(cards) != 1:
        return None
    return {"kind": "gpu", "options": [recommended, cards[0]]}


def card_price_lines(card_ids: List[str], lang: Text, kb: Any) -> List[Text]:
    """One line per catalogue card: its hourly price without and with VAT, and nothing else."""
    from bot.advisor.vat import price_with_vat
    from bot.present.formatting import money

    cards = {card.id: card for card in kb.gpus}
    return [kb.text("card_price_line", lang, card=card.name, price=money(card.price_usd_hour, lang),
                    price_vat=money(price_with_vat(card.price_usd_hour, kb.pricing.vat_rate, to_cent=True), lang))
            for card in (cards.get(card_id) for card_id in card_ids) if card is not None]


def card_whatif_reply(tracker: Tracker, lang: Text) -> Optional[Text]:
    """A bare card name after an answer ("A100 peki?", «و H200؟»): that card for the current job (fits, price with
    and without KDV, hours and cost; actions/followup_lines.py), never repeated word for word; None otherwise."""
    from actions.answer_first import job_known
    from actions.followup_lines import bare_card_ids, card_whatif_lines, not_repeated

    if tracker.get_slot("estimate_summary") is None and not tracker.get_slot("answered_first"):
        return None
    cards = bare_card_ids(tracker.latest_message.get("text") or "")
    if not cards or not job_known(tracker.slots):
        return None
    try:
        lines = card_whatif_lines(tracker.slots, cards, lang)
    except ValueError:  # a plan the estimator rejects: the card's own facts instead
        logger.exception("card what-if failed for %s", cards)
        return None
    if not lines:
        return None
    from bot.present.formatting import _rtl_lines

    return not_repeated(_rtl_lines("\n".join(lines), lang), recent_bot_texts(tracker), lang)


class ActionCardFacts(Action):
    def name(self) -> Text:
        return "action_card_facts"

    async def run(self, dispatcher: CollectingDispatcher, tracker: Tracker,
                  domain: Dict[Text, Any]) -> List[Dict[Text, Any]]:
        from bot.advisor.knowledge import load_knowledge
        from bot.text.topics import names_topic

        kb = load_knowledge()
        lang = conversation_language(tracker)
        whatif = card_whatif_reply(tracker, lang)
        if whatif:
            dispatcher.utter_message(text=whatif)
            return []
        cards = named_cards(tracker)
        memory = names_topic(tracker.latest_message.get("text") or "", "memory")
        lines = (card_facts if memory else card_price_lines)(cards, lang, kb)
        dispatcher.utter_message(text="\n".join(lines) if lines else kb.text("compare_not_understood", lang))
        return []


def _one_card_alone(dispatcher: CollectingDispatcher, card_id: str, recommended: Optional[str], lang: Text,
                    kb: Any) -> None:
    """One card and nothing to pair it with: "that is the card I recommended" when it is, what the card is, and the
    model question when no job is known yet."""
    from actions.dialogue_text import text

    if recommended == card_id:
        dispatcher.utter_message(text=text("followup_card_is_recommended", lang, other=kb.gpu(card_id).name))
    dispatcher.utter_message(text="\n".join(card_facts([card_id], lang, kb)))
    if recommended is None:
        dispatcher.utter_message(text=kb.text("compare_needs_model", lang))


class ActionCompareOptions(Action):
    def name(self) -> Text:
        return "action_compare_options"

    async def run(self, dispatcher: CollectingDispatcher, tracker: Tracker,
                  domain: Dict[Text, Any]) -> List[Dict[Text, Any]]:
        from bot.advisor.compare import compare_options
        from bot.advisor.knowledge import InputError, load_knowledge
        from bot.present.render import render_comparison, render_error

        kb = load_knowledge()
        lang = conversation_language(tracker)
        compare = requested_comparison(tracker) or one_card_comparison(tracker)
        cards = named_cards(tracker)
        if compare is None and cards:
            _one_card_alone(dispatcher, cards[0], recommended_card(tracker), lang, kb)
            return []
        if compare is None:
            dispatcher.utter_message(text=kb.text("compare_not_understood", lang))
            return []
        try:
            comparison = compare_options(advice_request_fields(tracker), compare["kind"], compare["options"], kb)
        except InputError as error:
            key = "compare_needs_model" if error.key == "missing_model" else None
            if key and compare["kind"] == "gpu":
                # Two cards and no model yet ("L4 or A40?"): what each card is, then the question for the model
                # (blind set of 2026-12-03: the cards were not even named).
                dispatcher.utter_message(text="\n".join(card_facts(compare["options"], lang, kb)))
            dispatcher.utter_message(text=kb.text(key, lang) if key else render_error(error, lang))
            return []
        except ValueError:
            logger.exception("comparison failed for %s", compare)
            dispatcher.utter_message(text=kb.text("error_internal", lang))
            return []
        dispatcher.utter_message(text=render_comparison(comparison, lang, kb))
        return []
