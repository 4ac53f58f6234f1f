"""The parser's result (ParsedValues) and the bounds every value read from chat text is checked against."""
from __future__ import annotations

from typing import Dict, List, Literal, Optional

from pydantic import BaseModel

MAX_SEQ_LEN = 1_000_000  # bot.advisor.schema.TrainingPlan.seq_len bound
MIN_SEQ_LEN = 16
MAX_MODEL_SIZE_B = 5000.0  # bot.advisor.schema.ModelArch.params < 5e12
MAX_GPUS = 4096  # bot.advisor.schema.TrainingPlan.gpus bound
MAX_EPOCHS = 1000
# A budget given without a currency but this large is almost certainly toman or lira, not dollars.
MAX_UNMARKED_BUDGET_USD = 100_000
# Above this a token count cannot be a sequence length people fine-tune with (Llama 3.1: 131072): it is a total.
MAX_PLAUSIBLE_SEQ_LEN = 262_144
POWER_OF_TWO_SEQ_RANGE = (512, 131_072)
RANGE_DASHES = {"-", "–", "—", "~", "/"}
# After a family word a bare number below this is a version ("llama 3", "qwen 2.5", "gemma 2", "phi 3"), from it
# on a size ("llama 8", "qwen 14"): no family in knowledge/models.yml has a version of 5 or more.
MIN_BARE_FAMILY_SIZE_B = 5

# Above this no value of the form means anything (total tokens stop well below 10^15); larger numbers, of any
# length, are reported as unclear (shortened) instead of being computed with.
MAX_READABLE_NUMBER = 1e15
SHORT_NUMBER_DIGITS = 12


def _short_number(raw: str) -> str:
    """A number as typed, shortened when it is very long, so a reply quoting it stays readable. A number that is
    personal data is quoted as its placeholder: the shortened form would keep nine of its digits where the masking
    of the stores and logs can no longer recognise them (issue 20)."""
    from bot.privacy import mask_pii

    masked = mask_pii(raw)
    if masked != raw:
        return masked
    return raw if len(raw) <= SHORT_NUMBER_DIGITS else f"{raw[:6]}…{raw[-3:]}"


# The slots a bare number can answer when the bot has just asked for one of them.
NUMERIC_ANSWERS = ("model_size_b", "seq_len", "budget_usd", "examples", "avg_tokens", "total_tokens", "epochs", "gpus")

SLOT_ALIASES = {
    "model": "model_size_b", "model_id": "model_size_b", "size": "model_size_b", "model_size": "model_size_b",
    "budget": "budget_usd", "seq": "seq_len", "sequence_length": "seq_len", "volume": "total_tokens",
}


class ParsedValues(BaseModel):
    """What one message says; every field is None (``ambiguous`` empty) when the message does not say it."""

    model_id: Optional[str] = None
    model_size_b: Optional[float] = None
    method: Optional[Literal["full", "lora", "qlora"]] = None
    seq_len: Optional[int] = None
    budget_usd: Optional[float] = None
    budget_unlimited: Optional[bool] = None
    currency_note: Optional[Literal["try", "toman", "eur"]] = None
    examples: Optional[int] = None
    avg_tokens: Optional[int] = None
    total_tokens: Optional[int] = None
    epochs: Optional[float] = None
    gpus: Optional[int] = None
    # A cap on the hourly price in USD ("saatte en fazla 2 dolar", "ساعتی حداکثر ۲ دلار"), and whether the customer
    # said it includes KDV/VAT (True), excludes it (False) or did not say (None: the answer assumes without VAT).
    hourly_cap: Optional[float] = None
    hourly_cap_vat: Optional[bool] = None
    # "KDV dahil" / "بدون مالیات" said anywhere in the message, with or without an amount: a qualifier the dialogue
    # state applies to the price just given ("with tax, I mean" after an hourly cap), never a value on its own.
    vat_said: Optional[bool] = None
    budget_period: Optional[Literal["total", "month", "run"]] = None
    own_gpu: Optional[str] = None  # id of a card in knowledge/own_gpus.yml the customer says they have
    compare: Optional[Dict[str, object]] = None  # {"kind": "method"|"model"|"gpu", "options": [a, b]}
    # A pasted Hugging Face config.json read by bot.advisor.hf_config.read_hf_config (ModelArch as a dict).
    custom_arch: Optional[Dict[str, object]] = None
    custom_arch_label: Optional[str] = None
    config_error: Optional[str] = None  # a pasted config that could not be read: the missing key (or "json")
    stack: Optional[str] = None  # the training stack named (knowledge/stacks.yml id), read by bot/text/stack_names.py
    # A model name we do not know, as typed ("qwen4 8b", "olmo 7b"), and its family word when it has a known one:
    # never replaced silently by a preset (the form asks resolve_model for a same-family stand-in and says so).
    model_query: Optional[str] = None
    model_family: Optional[str] = None
    # A family and a size without a version ("qwen 14b"): model_id is the newest release of that family in that
    # size and several releases match, so the answer says which version it assumed (None otherwise).
    model_version_assumed: Optional[bool] = None
    ambiguous: List[str] = []

    def found(self) -> Dict[str, object]:
        """The values the message gave (no Nones, no ``ambiguous``), e.g. to fill slots."""
        return {k: v for k, v in self.dict().items() if v is not None and k not in ("ambiguous", "vat_said")}


