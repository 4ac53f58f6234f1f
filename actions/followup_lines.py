"""The lines of three follow-ups about the answer (issue 21; found by blind set 4), from the current plan:

* a training stack named after an estimate ("peki Unsloth?", «همون مدل ولی با Axolotl»): the re-estimate says what
  the stack changes against the previous answer - memory, speed and cost per token on the recommended card;
* a bare card name after an answer ("L40S nasıl?", «و H200؟»): that card for the current job - whether it holds
  it, its price with and without KDV, hours and cost when the data volume is known;
* "is it enough?" («کافیه؟», "yeter mi?"): the plan's memory verdict and budget, or, with no job yet, what is
  needed to say.

Every sentence lives in knowledge/dialogue.yml; the figures come from the same advice as the estimate
(actions/followup.py: same slots, same defaults), so nothing here contradicts the answer it follows.
"""
from __future__ import annotations

from typing import Any, Iterable, List, Mapping, Optional, Text

from actions.dialogue_text import join, text
from actions.followup import plan_advice, verdict_key

# A bare card follow-up is short: the card's name and a word or two ("A100 peki?", "و H200؟", "L40S nasıl?").
BARE_CARD_MAX_WORDS = 4
# Speed ratios within this factor of 1 are "about the same speed".
SAME_SPEED = 0.05


def _speed_text(ratio: float, lang: Text) -> Text:
    from bot.present.formatting import number

    if abs(ratio - 1) < SAME_SPEED:
        return text("stack_speed_same", lang)
    if ratio > 1:
        return text("stack_speed_faster", lang, ratio=number(ratio, lang, 1))
    return text("stack_speed_slower", lang, ratio=number(1 / max(ratio, 1e-9), lang, 1))


def stack_change_line(slots: Mapping[Text, Any], previous_stack: Optional[Text], lang: Text) -> Optional[Text]:
    """What the stack of ``slots`` changes against ``previous_stack`` (None: the default stack) for the current
    job, on the card the new answer recommends; None when the job or a card is not known."""
    from bot.advisor.stacks import load_stacks
    from bot.present.formatting import gb, money

    stacks = load_stacks()
    new_id, old_id = slots.get("stack") or stacks.default, previous_stack or stacks.default
    if new_id == old_id:
        return text("stack_same", lang, stack=stacks.get(new_id).name)
    try:
        new = plan_advice(slots)
        old = plan_advice({**slots, "stack": old_id})
    except ValueError:
        return None
    card = new.recommendation.card if new.recommendation is not None else None
    old_card = next((c for c in old.cards if card is not None and c.card_id == card.card_id), None)
    if card is None or old_card is None or not card.tokens_per_second or not old_card.tokens_per_second:
        return None
    return text("stack_change", lang, stack=stacks.get(new_id).name, previous=stacks.get(old_id).name,
                before=gb(old.estimate.per_gpu_gib, lang), after=gb(new.estimate.per_gpu_gib, lang), card=card.name,
                speed=_speed_text(card.tokens_per_second / old_card.tokens_per_second, lang),
                pm_before=money(old_card.cost_per_million_tokens_usd or 0, lang),
                pm_after=money(card.cost_per_million_tokens_usd or 0, lang))


def bare_card_ids(message: Text) -> List[Text]:
    """The catalogue cards of a short message that names cards and asks nothing else ("A100 peki?")."""
    from bot.advisor.knowledge import load_knowledge
    from bot.text.followups import read_followup

    if not message or message.startswith("/") or len(message.split()) > BARE_CARD_MAX_WORDS:
        return []
    asked = read_followup(message, load_knowledge())
    return list(asked.cards) if asked.kind is None else []


def _job_words(advice: Any, lang: Text, kb: Any) -> dict:
    from bot.present.formatting import gb

    return {"model": advice.preset.display, "method": kb.text(f"method_{advice.plan.method}", lang),
            "need": gb(advice.estimate.per_gpu_gib, lang), "high": gb(advice.estimate.high_gib, lang)}


def card_whatif_lines(slots: Mapping[Text, Any], card_ids: List[Text], lang: Text) -> List[Text]:
    """Each named card for the current job: fits or not, price with and without KDV, hours and cost when the
    volume is known (else how to get them), and the verdict against the recommended card."""
    from bot.advisor.knowledge import load_knowledge
    from bot.present.formatting import duration, money, number

    kb = load_knowledge()
    advice = plan_advice(slots)
    fits = {card.card_id: card for card in advice.cards}
    recommended = advice.recommendation.card if advice.recommendation is not None else None
    job = _job_words(advice, lang, kb)
    lines: List[Text] = []
    for card_id in card_ids[:2]:
        fit = fits.get(card_id)
        if fit is None:
            continue
        key = {"fits": "card_whatif_fits", "tight": "card_whatif_tight"}.get(fit.status, "card_whatif_no_fit")
        lines.append(text(key, lang, card=fit.name, vram=number(kb.gpu(card_id).vram_gb, lang, 0),
                          price=money(fit.price_usd_hour, lang), price_vat=money(fit.price_usd_hour_with_vat, lang),
                          per_million=money(fit.cost_per_million_tokens_usd or 0, lang), **job))
        if fit.status == "no_fit":
            continue
        if fit.hours is not None and fit.cost_usd_with_vat is not None:
            lines.append(text("card_whatif_total", lang, card=fit.name, duration=duration(fit.hours, lang, kb),
                              cost=money(fit.cost_usd_with_vat, lang)))
        else:
            lines.append(text("card_whatif_volume_hint", lang, card=fit.name))
        lines += _against_recommended(fit, recommended, lang)
    return lines


def _against_recommended(fit: Any, recommended: Any, lang: Text) -> List[Text]:
    if recommended is None:
        return []
    if recommended.card_id == fit.card_id:
        return [text("followup_card_is_recommended", lang, other=fit.name)]
    return [text(verdict_key(fit, recommended), lang, other=fit.name, card=recommended.name)]


def enough_lines(slots: Mapping[Text, Any], lang: Text) -> List[Text]:
    """ "Is it enough?": the plan's memory verdict and its budget lines (or how to get them); with no job yet,
    what is needed to say, naming what was noted (a budget, an own card)."""
    from actions.answer_first import job_known

    if not job_known(slots):
        noted = _noted_without_job(slots, lang)
        return [text("enough_needs_job_noted", lang, values=join(noted, lang)) if noted
                else text("enough_needs_job", lang)]
    from bot.advisor.knowledge import load_knowledge
    from bot.present.advice_text import budget_lines
    from bot.present.formatting import number

    kb = load_knowledge()
    try:
        advice = plan_advice(slots)
    except ValueError:
        return [text("enough_needs_job", lang)]
    card = advice.recommendation.card if advice.recommendation is not None else None
    if card is None:
        from actions.followup import _Answer

        return _Answer(advice, lang, kb).count(None)
    key = "enough_card_tight" if card.status == "tight" else "enough_card_memory"
    lines = [text(key, lang, card=card.name, vram=number(kb.gpu(card.card_id).vram_gb, lang, 0),
                  **_job_words(advice, lang, kb))]
    verdict = budget_lines(advice, lang, kb) if budget_known(slots) else []
    return verdict + lines  # the budget's verdict first: what "is it enough?" most often asks


def budget_known(slots: Mapping[Text, Any]) -> bool:
    return slots.get("budget_usd") is not None and not slots.get("budget_unlimited")


def _noted_without_job(slots: Mapping[Text, Any], lang: Text) -> List[Text]:
    from actions.dialogue_text import noted_values

    values = noted_values(slots, lang)
    own = slots.get("own_gpu")
    if own:
        from bot.advisor.own_gpus import own_gpu

        try:
            values.append(own_gpu(str(own)).name)
        except ValueError:  # InputError: a card no longer in the list is named as it was kept
            values.append(str(own))
    return values


def not_repeated(reply: Text, recent: Iterable[Text], lang: Text) -> Text:
    """``reply``, led by a short "the same answer again" when it would repeat a message just sent word for word."""
    return text("said_again", lang) + "\n" + reply if reply.strip() in {r.strip() for r in recent} else reply
