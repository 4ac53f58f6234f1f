"""Two questions about prices that the intent guard routes by what they say, not by the classifier (round 8).

* "A100 saati 2 dolar? kheili geroone", "H100 saati 5 dolar mi, cok pahali": a card's price quoted in a complaint is
  the price complaint (utter_complaint_price), not the card's facts nor a question about the answer;
* "saatlik 1 doların altında hangi kartlar var?", «زیر ساعتی ۰.۸ دلار چه کارت‌هایی دارید؟»: an hourly price cap and
  "which cards" with no model in the message lists the cards at or under it (actions/cards_by_price.py).

Pure: the message and the parser's reading in, a yes or no out. The word lists are knowledge/lexicon.yml topics
``price_complaint`` and ``card_list``.
"""
from __future__ import annotations

from typing import Any

PRICE_COMPLAINT_INTENT = "complaint_price"
CARDS_UNDER_PRICE_INTENT = "cards_under_price"
# The intents a quoted price with "so expensive!" is read as: a card's facts or price, a question about the answer,
# the price list, the cost FAQ, a plain complaint or nothing.
PRICE_COMPLAINT_MISTAKEN_FOR = ("card_facts", "faq_prices_vat", "faq_cost_control", "faq_vram", "faq_invoice",
                                "faq_platform", "ask_about_answer", "out_of_scope", "nlu_fallback", "estimate",
                                "inform", "complaint", "compare_options", PRICE_COMPLAINT_INTENT)
# A job in the message keeps its estimate: "Llama 8B QLoRA, A100 saati 2 dolar pahali mi?" is about the job.
JOB_FIELDS = ("model_id", "model_size_b", "method", "custom_arch", "budget_usd", "gpus")


def _job_in(parsed: Any) -> bool:
    return any(getattr(parsed, name, None) not in (None, False) for name in JOB_FIELDS)


def price_complaint(text: str, intent: str, parsed: Any) -> bool:
    """A price complaint, whatever card or price it quotes."""
    from bot.text.topics import names_topic

    return intent in PRICE_COMPLAINT_MISTAKEN_FOR and not _job_in(parsed) and names_topic(text, "price_complaint")


def cards_under_price(text: str, parsed: Any) -> bool:
    """ "Which cards under $X an hour?": an hourly cap, "which cards", and no model in the message."""
    from bot.text.topics import names_topic

    if getattr(parsed, "hourly_cap", None) is None or parsed.model_id or parsed.model_size_b:
        return False
    return names_topic(text, "card_list") and not names_topic(text, "price_complaint")
