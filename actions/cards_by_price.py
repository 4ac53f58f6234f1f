"""action_cards_by_price: "which cards do you have under $0.8 an hour?" (round 8).

The cards whose hourly price is at or under the amount (without KDV, or with it when the customer said "KDV dahil"),
each with its memory and price with and without KDV (actions/compare.py card_facts), then the question for the model;
with a job known, only those of them that hold it on one GPU (bot/advisor/compare.py cards_within_price). The amount
is kept as the hourly cap, so the estimate that follows respects it.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Text

from rasa_sdk import Action, Tracker
from rasa_sdk.events import SlotSet
from rasa_sdk.executor import CollectingDispatcher

from actions.common import conversation_language



def _job(tracker: Tracker) -> Optional[Dict[Text, Any]]:
    from actions.estimate import advice_request_fields
    from bot.advisor.compare import DEFAULT_METHOD, DEFAULT_SEQ_LEN

    fields = advice_request_fields(tracker)
    if not (fields.get("model") or fields.get("size_b")):
        return None
    job = {key: value for key, value in fields.items()
           if value is not None and key not in ("hourly_cap_usd", "hourly_cap_includes_vat", "budget_usd")}
    job["budget_unlimited"] = True
    # the assumptions of a job without them, as the comparison and the first answer make
    job.setdefault("method", DEFAULT_METHOD)
    job.setdefault("seq_len", DEFAULT_SEQ_LEN)
    return job


class ActionCardsByPrice(Action):
    def name(self) -> Text:
        return "action_cards_by_price"

    async def run(self, dispatcher: CollectingDispatcher, tracker: Tracker,
                  domain: Dict[Text, Any]) -> List[Dict[Text, Any]]:
        from actions.compare import card_facts
        from actions.dialogue_text import method_label, model_label
        from bot.advisor.compare import cards_within_price
        from bot.advisor.knowledge import load_knowledge
        from bot.present.formatting import money
        from bot.text.parsed import parsed_message

        kb = load_knowledge()
        lang = conversation_language(tracker)
        parsed = parsed_message(tracker.latest_message.get("text") or "")
        cap = parsed.hourly_cap if parsed.hourly_cap is not None else tracker.get_slot("hourly_cap")
        if cap is None:
            dispatcher.utter_message(text=kb.text("cards_under_price_amount", lang))
            return []
        vat = bool(parsed.hourly_cap_vat)
        amount = money(float(cap), lang, whole_if_round=True)
        cheap = cards_within_price(kb, float(cap), includes_vat=vat)
        intro = "cards_under_price_intro_vat" if vat else "cards_under_price_intro"
        if not cheap:
            cheapest = min(kb.gpus, key=lambda card: card.price_usd_hour)
            dispatcher.utter_message(text=kb.text("cards_under_price_none", lang, amount=amount))
            dispatcher.utter_message(text="\n".join(card_facts([cheapest.id], lang, kb)))
        job = _job(tracker)
        if cheap and job is None:
            dispatcher.utter_message(text=kb.text(intro, lang, amount=amount) + "\n"
                                     + "\n".join(card_facts(cheap, lang, kb)))
            dispatcher.utter_message(text=kb.text("cards_under_price_ask_model", lang))
        elif cheap and job is not None:
            holding = cards_within_price(kb, float(cap), includes_vat=vat, job=job)
            labels = {"model": model_label(tracker.slots, lang), "method": method_label(job["method"], lang)}
            if holding:
                dispatcher.utter_message(text=kb.text("cards_under_price_job", lang, amount=amount, **labels)
                                         + "\n" + "\n".join(card_facts(holding, lang, kb)))
            else:
                dispatcher.utter_message(text=kb.text("cards_under_price_job_none", lang, amount=amount, **labels)
                                         + "\n" + "\n".join(card_facts(cheap, lang, kb)))
        return [SlotSet("hourly_cap", float(cap)), SlotSet("hourly_cap_vat", vat)]
