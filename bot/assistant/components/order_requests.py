"""An order or a quote request that carries a whole job: the estimate answers it, with the order or quote (round 7).

"4 A100s for a full fine-tune of a 32B model, how do I order?", "a price quote for the full fine-tune of a 70B model":
the estimate answers it (the GB figure, the card plan, the model) and offers the quote or tells the order process
with it (actions/estimate.py, actions/forms.py), instead of the order process alone or a bare hand-over.

Pure: the parser's reading of the message in, a yes or no out; the estimator only for a quote request, which keeps
its hand-over unless no single card holds the job (a quote for a one-card job asks for a person, not a plan).
"""
from __future__ import annotations

from typing import Any

ORDER_INTENT = "order_multi_gpu"
QUOTE_INTENT = "request_quote"
ORDER_INTENTS = (ORDER_INTENT, QUOTE_INTENT)


def names_whole_job(parsed: Any) -> bool:
    """The model (or its size) and the method, and no two options to choose between."""
    return bool(parsed.model_id or parsed.model_size_b) and bool(parsed.method) and parsed.compare is None


def needs_several_cards(parsed: Any) -> bool:
    """No single card holds the job as the message describes it, or it names several GPUs."""
    from bot.advisor.advice import AdviceRequest, advise
    from bot.advisor.compare import DEFAULT_SEQ_LEN  # the length the first answer assumes when none was said

    try:
        advice = advise(AdviceRequest.from_values(
            model=parsed.model_id, size_b=None if parsed.model_id else parsed.model_size_b, method=parsed.method,
            seq_len=int(parsed.seq_len or DEFAULT_SEQ_LEN), gpus=parsed.gpus, budget_unlimited=True))
    except (ValueError, TypeError):  # InputError too: a value the estimator refuses keeps the hand-over
        return False
    return bool(advice.needs_quote)


def order_with_job(intent: str, parsed: Any) -> bool:
    """An order or quote request that the estimate answers, with its offer, instead of the process alone."""
    if intent not in ORDER_INTENTS or not names_whole_job(parsed):
        return False
    return intent == ORDER_INTENT or needs_several_cards(parsed)


BUY_INTENT = "buy_hardware"
# What a purchase with "price quote" words is classified as (round 9): a quote, a person, an order.
BUY_MISTAKEN_FOR = (QUOTE_INTENT, ORDER_INTENT, "request_human")


def buys_hardware(intent: str, text: str, parsed: Any, cards: tuple) -> bool:
    """ "2 adet L40S satın almak istiyoruz, fiyat teklifi verir misiniz?", «دو تا A100 بخریم، پیش‌فاکتور میدید؟»:
    buying cards or servers, whatever quote or order words come with it - we rent, we do not sell (utter_rent_only);
    a later explicit request for a person starts the hand-over. Not when renting is named too, nor with a whole
    job (the estimate answers that, with its quote offer)."""
    from bot.text.topics import names_topic

    if intent not in BUY_MISTAKEN_FOR or not names_topic(text, "buy") or names_topic(text, "rent"):
        return False
    if names_whole_job(parsed):
        return False
    return bool(cards) or names_topic(text, "hardware")
