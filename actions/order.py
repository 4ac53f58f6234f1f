"""action_order_multi_gpu: the configuration asked about with its list price, then the order process (round 7).

"How do I order an 8x H100 node, is there a monthly price?": the configuration asked about named with its list price
per hour without and with KDV (and, when a monthly price is asked, what 30 days at that price come to, the exact
price being set in the quote), then the order process and the quote offer (utter_order_multi_gpu; a typed yes to it
is read through pending_offer, actions/language.py OFFERS).

Thin: the card and the count come from the message (bot.text.followups, the parser), prices from knowledge/gpus.yml,
the sentences from knowledge/dialogue.yml.
"""
from __future__ import annotations

from typing import Any, Dict, List, Text

from rasa_sdk import Action, Tracker
from rasa_sdk.executor import CollectingDispatcher

from actions.common import conversation_language
from actions.dialogue_text import text

# "Monthly" as a price period: 30 days of use around the clock.
MONTH_HOURS = 30 * 24


def order_lines(message: Text, lang: Text, kb: Any = None) -> List[Text]:
    """The configuration the message names (a catalogue card, a count) with its list price; [] without a card."""
    from bot.advisor.knowledge import load_knowledge
    from bot.advisor.vat import price_with_vat
    from bot.present.render import money, number
    from bot.text.followups import read_followup
    from bot.text.parsed import parsed_message
    from bot.text.topics import names_topic

    kb = kb or load_knowledge()
    cards = read_followup(message, kb).cards
    if not cards:
        return []
    card = kb.gpu(cards[0])
    gpus = parsed_message(message).gpus
    count = int(gpus or 1)
    hourly = card.price_usd_hour * count
    # Without a count the price is per GPU ("H100 node nasıl sipariş ederim?"), never "1 × H100".
    lines = [text("order_card_line" if gpus else "order_card_line_per_gpu", lang, count=number(count, lang, 0),
                  card=card.name, vram=number(card.vram_gb, lang, 0), price=money(hourly, lang),
                  price_vat=money(price_with_vat(hourly, kb.pricing.vat_rate, to_cent=True), lang))]
    if names_topic(message, "monthly"):
        month = hourly * MONTH_HOURS
        lines.append(text("order_card_month", lang, hours=number(MONTH_HOURS, lang, 0), month=money(month, lang),
                          month_vat=money(price_with_vat(month, kb.pricing.vat_rate, to_cent=True), lang)))
    return lines


class ActionOrderMultiGpu(Action):
    def name(self) -> Text:
        return "action_order_multi_gpu"

    async def run(self, dispatcher: CollectingDispatcher, tracker: Tracker,
                  domain: Dict[Text, Any]) -> List[Dict[Text, Any]]:
        from bot.present.formatting import _rtl_lines

        lang = conversation_language(tracker)
        lines = order_lines(tracker.latest_message.get("text") or "", lang)
        if lines:
            dispatcher.utter_message(text=_rtl_lines("\n".join(lines), lang))
        dispatcher.utter_message(response="utter_order_multi_gpu")
        return []
