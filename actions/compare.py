"""action_compare_options: "LoRA or QLoRA?", "8B or 14B?", "H100 or A100?" answered side by side for the current job
(bot.advisor.compare), then the conversation carries on where it was (H3's rules trigger it on compare_options)."""
from __future__ import annotations

import logging
from typing import Any, Dict, List, Optional, Text

from rasa_sdk import Action, Tracker
from rasa_sdk.executor import CollectingDispatcher

from actions.common import conversation_language
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
        compare = requested_comparison(tracker)
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
