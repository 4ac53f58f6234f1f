"""action_answer_followup: questions about the answer just given (issue 21 #3) - why this card, why not another,
hours on a named card, how many GPUs, a cheaper or a faster option - answered from the current plan and its numbers.

The plan is the one the estimate used (the same slots, the same defaults as actions/answer_first.py), so the answer
never contradicts the recommendation: the card changes only when the job or the customer's priority changes.
"""
from __future__ import annotations

import logging
from typing import Any, Dict, List, Mapping, Optional, Text

from rasa_sdk import Action, Tracker
from rasa_sdk.executor import CollectingDispatcher

from actions.answer_first import _Slots, assumed_values, job_known
from actions.common import conversation_language
from actions.dialogue_text import text

logger = logging.getLogger(__name__)
# Hourly prices closer than this are "the same price" (the catalogue's cents: knowledge/gpus.yml).
SAME_PRICE_USD = 0.05


def verdict_key(other: Any, card: Any) -> Text:
    """The text that judges card `other` against the answer's `card`: same price, faster, or worse."""
    if abs(other.price_usd_hour - card.price_usd_hour) < SAME_PRICE_USD:
        return "followup_verdict_same"
    if (other.tokens_per_second or 0) > (card.tokens_per_second or 0):
        return "followup_verdict_faster"
    return "followup_verdict_worse"


def plan_advice(slots: Mapping[Text, Any]):
    """The advice for the plan the slots describe, with the same assumed values as the answer shown."""
    from actions.estimate import advice_request_fields
    from bot.advisor.advice import AdviceRequest, advise

    filled = {**slots, **assumed_values(slots)}
    return advise(AdviceRequest(**advice_request_fields(_Slots(filled))))


class _Answer:
    """The numbers of one plan, formatted for one language."""

    def __init__(self, advice, lang: Text, kb) -> None:
        from bot.present import render

        self.advice, self.lang, self.kb, self.fmt = advice, lang, kb, render
        self.fits = {card.card_id: card for card in advice.cards}
        self.choice = advice.recommendation

    def money(self, value: float) -> Text:
        return self.fmt.money(value, self.lang)

    def gb(self, value: float) -> Text:
        return self.fmt.gb(value, self.lang)

    def vram(self, card_id: Text) -> Text:
        return self.fmt.number(self.kb.gpu(card_id).vram_gb, self.lang, 0)

    def job(self) -> Text:
        advice = self.advice
        return text("followup_job", self.lang, model=advice.preset.display,
                    method=self.kb.text(f"method_{advice.plan.method}", self.lang),
                    seq_len=self.fmt.number(advice.plan.seq_len, self.lang, 0),
                    need=self.gb(advice.estimate.per_gpu_gib), high=self.gb(advice.estimate.high_gib))

    def why(self) -> List[Text]:
        card = self.choice.card
        key = {"lowest_per_token": "followup_why_per_token", "lowest_total_cost": "followup_why_total",
               "fastest_under_cap": "followup_why_cap", "tight_under_cap": "followup_why_cap"
               }.get(self.choice.reason, "followup_why_cheapest")
        lines = [text(key, self.lang, card=card.name, vram=self.vram(card.card_id),
                      price=self.money(card.price_usd_hour),
                      per_million=self.money(card.cost_per_million_tokens_usd or 0),
                      cost=self.money(card.cost_usd_with_vat or 0))]
        cheaper = [c.name for c in self.advice.cards if c.status == "no_fit" and c.price_usd_hour < card.price_usd_hour]
        if cheaper:
            lines.append(text("followup_too_small_cheaper", self.lang, names=self.fmt.names_list(cheaper, self.lang,
                                                                                                 self.kb)))
        return lines

    def versus(self, other_id: Text) -> List[Text]:
        card, other = self.choice.card, self.fits[other_id]
        if other.card_id == card.card_id:
            return [text("followup_card_is_recommended", self.lang, other=other.name)] + self.why()
        if other.status == "no_fit":
            return [text("followup_card_too_small", self.lang, other=other.name, vram=self.vram(other.card_id),
                         need=self.gb(self.advice.estimate.per_gpu_gib), high=self.gb(self.advice.estimate.high_gib))]
        lines = [text("followup_card_versus", self.lang, other=other.name, card=card.name,
                      other_price=self.money(other.price_usd_hour), price=self.money(card.price_usd_hour),
                      speed=self.speed(other,
                                       card), other_per_million=self.money(other.cost_per_million_tokens_usd or 0),
                      per_million=self.money(card.cost_per_million_tokens_usd or 0))]
        return lines + [text(verdict_key(other, card), self.lang, other=other.name, card=card.name)]

    def speed(self, fast, slow) -> Text:
        ratio = (fast.tokens_per_second or 0) / max(slow.tokens_per_second or 1e-9, 1e-9)
        return self.fmt.number(ratio, self.lang, 0 if ratio >= 3 else 1)

    def hours(self, card_id: Text) -> List[Text]:
        card = self.fits[card_id]
        if card.status == "no_fit":
            return [text("followup_hours_no_fit", self.lang, card=card.name)]
        if card.hours is not None and card.cost_usd_with_vat is not None:
            return [text("followup_hours_total", self.lang, card=card.name,
                         duration=self.fmt.duration(card.hours, self.lang, self.kb),
                         cost=self.money(card.cost_usd_with_vat))]
        per_million_hours = 1e6 / max(card.tokens_per_second or 1e-9, 1e-9) / 3600
        return [text("followup_hours_rate", self.lang, card=card.name,
                     duration=self.fmt.duration(per_million_hours, self.lang, self.kb),
                     per_million=self.money(card.cost_per_million_tokens_usd or 0))]

    def count(self, card_id: Optional[Text]) -> List[Text]:
        card = self.fits.get(card_id) if card_id else (self.choice.card if self.choice else None)
        if card is not None and card.status != "no_fit":
            return [text("followup_count_one", self.lang, card=card.name, vram=self.vram(card.card_id),
                         need=self.gb(self.advice.estimate.per_gpu_gib))]
        multi = self.advice.multi_gpu
        if multi is not None:
            return [text("followup_count_multi", self.lang, count=multi.count, card=multi.name,
                         need=self.gb(multi.per_gpu_gib))]
        return [text("followup_count_none", self.lang)]

    def cheaper(self) -> List[Text]:
        card = self.choice.card
        fitting = [c for c in self.advice.cards if c.status != "no_fit" and c.price_usd_hour < card.price_usd_hour]
        if fitting:
            return self.versus(min(fitting, key=lambda c: c.price_usd_hour).card_id)
        lines = [text("followup_cheapest_already", self.lang, card=card.name, price=self.money(card.price_usd_hour))]
        cheaper_variants = [alt for alt in self.advice.alternatives
                            if alt.kind != "multi_gpu" and alt.price_usd_hour < card.price_usd_hour]
        if cheaper_variants:
            alt = min(cheaper_variants, key=lambda a: a.price_usd_hour)
            lines.append(text("followup_cheaper_variant", self.lang,
                              variant=self.fmt.variant_name(alt, self.lang, self.kb), alt_card=alt.card_name,
                              alt_price=self.money(alt.price_usd_hour)))
        return lines

    def faster(self) -> List[Text]:
        card = self.choice.card
        pool = [c for c in self.advice.cards if c.status != "no_fit"]
        fastest = max(pool, key=lambda c: (c.tokens_per_second or 0, -c.price_usd_hour))
        # "I'm in a hurry": the fastest card with its hours and cost for this job (round 7), not only its speed.
        if fastest.card_id == card.card_id:
            return [text("followup_fastest_already", self.lang, card=card.name)] + self.hours(fastest.card_id)
        return [text("followup_faster", self.lang, other=fastest.name, card=card.name, speed=self.speed(fastest, card),
                     other_price=self.money(fastest.price_usd_hour),
                     other_per_million=self.money(fastest.cost_per_million_tokens_usd or 0),
                     per_million=self.money(card.cost_per_million_tokens_usd or 0))] + self.hours(fastest.card_id)


def followup_answer(message: Text, slots: Mapping[Text, Any], lang: Text, kb=None) -> Text:
    """The answer to a question about the current plan, in ``lang``."""
    from actions.followup_lines import bare_card_ids, card_whatif_lines
    from bot.advisor.knowledge import load_knowledge
    from bot.text.followups import read_followup

    kb = kb or load_knowledge()
    if not job_known(slots):
        from actions.compare import card_facts

        # the cards asked about are described (memory, price) before the question for the job
        return "\n".join(card_facts(list(read_followup(message, kb).cards), lang, kb)
                         + [text("followup_needs_job", lang)])
    advice = plan_advice(slots)
    answer = _Answer(advice, lang, kb)
    asked = read_followup(message, kb)
    lines = [answer.job()]
    if asked.kind == "gpu_count" or answer.choice is None:
        lines += answer.count(asked.cards[0] if asked.cards else None)
    elif asked.kind == "hours":
        lines += answer.hours(asked.cards[0] if asked.cards else answer.choice.card.card_id)
    elif asked.kind is None and bare_card_ids(message):
        # "A100 peki?" after the answer: that card for this job, what-if style (actions/followup_lines.py)
        lines += card_whatif_lines(slots, list(asked.cards), lang)
    elif asked.cards:
        for card_id in asked.cards[:2]:
            lines += answer.versus(card_id) if card_id in answer.fits else []
    elif asked.kind == "cheaper":
        lines += answer.cheaper()
    elif asked.kind == "faster":
        lines += answer.faster()
    else:
        lines += answer.why()
    from bot.present.formatting import _rtl_lines

    return _rtl_lines("\n".join(dict.fromkeys(lines)), lang)


class ActionAnswerFollowup(Action):
    def name(self) -> Text:
        return "action_answer_followup"

    async def run(self, dispatcher: CollectingDispatcher, tracker: Tracker,
                  domain: Dict[Text, Any]) -> List[Dict[Text, Any]]:
        lang = conversation_language(tracker)
        try:
            reply = followup_answer(tracker.latest_message.get("text") or "", tracker.slots, lang)
        except ValueError:  # InputError too: a value the estimate rejects is explained by the estimate itself
            logger.exception("follow-up failed")
            reply = text("followup_needs_job", lang)
        from actions.common import recent_bot_texts
        from actions.followup_lines import not_repeated

        dispatcher.utter_message(text=not_repeated(reply, recent_bot_texts(tracker), lang))
        return []
