"""A card the customer names in a request ("does Llama 3.1 8B LoRA fit on an RTX 4090?", "tek H200'e sığar mı?"):
the answer says whether that card holds the job, whatever card it recommends.

The blind conversations of 2026-12-03 asked about a card by name in the request itself, and the answer recommended
another card without a word on the one asked about. The cards are read as the follow-up questions read them
(bot.text.followups); the memory and the fit come from the advice just computed (its ranked cards).
"""
from __future__ import annotations

from typing import Any, List, Text

from actions.dialogue_text import text

FIT_TEXT_KEYS = {"fits": "named_card_fits", "tight": "named_card_tight", "no_fit": "named_card_too_small"}


def named_card_lines(advice: Any, message: Text, lang: Text) -> List[Text]:
    """One line per catalogue card named in ``message`` other than the recommended one."""
    from bot.advisor.knowledge import load_knowledge
    from bot.present.formatting import gb
    from bot.text.followups import read_followup

    if not message:
        return []
    recommended = getattr(getattr(advice, "recommendation", None), "card", None)
    fits = {card.card_id: card for card in getattr(advice, "cards", None) or []}
    lines = []
    for card_id in read_followup(message, load_knowledge()).cards:
        fit = fits.get(card_id)
        if fit is None or (recommended is not None and recommended.card_id == card_id):
            continue
        lines.append(text(FIT_TEXT_KEYS.get(fit.status, "named_card_too_small"), lang, card=fit.name,
                          usable=gb(fit.usable_gib, lang), need=gb(fit.need_gib, lang)))
    return lines
