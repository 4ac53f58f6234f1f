"""What one quantity means (a slot and a value): its unit first, then a keyword before it, then the slot the bot
asked for, then the one safe guess (a power-of-two sequence length)."""
from __future__ import annotations

import math
from typing import Dict, Optional, Tuple

from bot.text.parse.quantities import (MAX_PLAUSIBLE_HOURLY_CAP_USD, MAX_PLAUSIBLE_MODEL_SIZE_B, _is_power_of_two,
                                       _Quantity, _seq_len_value)
from bot.text.parse.values import (MAX_EPOCHS, MAX_GPUS, MAX_MODEL_SIZE_B, MAX_PLAUSIBLE_SEQ_LEN, MAX_READABLE_NUMBER,
                                   MAX_SEQ_LEN, MAX_UNMARKED_BUDGET_USD, MIN_SEQ_LEN, NUMERIC_ANSWERS,
                                   POWER_OF_TWO_SEQ_RANGE, _short_number)
from bot.text.parse.state import ParserState


# Slots a number with a counter word and no unit ("4 ta", «۴ تا», "4 tane") never answers, whatever was asked: a
# counter counts things (cards, examples), and dollars, billions of parameters or a length are no things (round 7).
COUNTED_NEVER = ("budget_usd", "model_size_b", "seq_len")


class QuantityMeaning(ParserState):
    """Classifies quantities; mixed into the parser (bot.text.parse.parser._Parser)."""

    def classify(self, q: _Quantity, expected: Optional[str]) -> Tuple[str, object]:
        """(slot, value) of one quantity: the unit after it decides first, then its scale, then a keyword before it,
        then the slot the bot asked for, then the one safe guess; ("skip", None) or ("ambiguous", text) else."""
        for reader in (self._unreadable_or_weak, self._by_unit, self._by_scale, self._by_keyword):
            found = reader(q, expected)
            if found is not None:
                return found
        return self._by_question_or_shape(q, expected)

    def _unreadable_or_weak(self, q: _Quantity, expected: Optional[str]) -> Optional[Tuple[str, object]]:
        unit, value = q.unit, q.absolute
        if unit in ("skip_weak", "range_low"):
            return "skip", None
        if not math.isfinite(value) or value > MAX_READABLE_NUMBER:
            # 5,000 digits is no value anyone means: asked about like any unclear number, never computed with
            return "ambiguous", _short_number(q.raw)
        if q.weak and not q.counter and unit in (None, "examples", "params", "ignore"):
            if not (unit is None and expected is not None and self._is_whole_answer(q)):
                return "skip", None  # "bir örnek" is "an example", "یک مدل" "a model", "نه" is "no"
        if unit == "active_params" or q.keyword == "active_params":
            return "skip", None  # "Qwen3-30B-A3B, active 3B": the MoE's active parameters, not a new size
        if unit == "ignore" or q.keyword == "ignore" and q.scale is None and unit is None:
            return "skip", None
        return None

    # A unit that alone says the slot: (slot, how the value is written there).
    _UNIT_SLOTS: Dict[Optional[str], str] = {"seq_len": "seq_len", "examples": "examples", "epochs": "epochs",
                                              "gpus": "gpus"}

    def _by_unit(self, q: _Quantity, expected: Optional[str]) -> Optional[Tuple[str, object]]:
        unit, value = q.unit, q.absolute
        if unit in ("try", "toman", "eur"):
            return "currency_note", unit
        if unit == "usd":
            return ("hourly_cap", value) if self._hourly_near(q) else ("budget_usd", value)
        if unit == "tokens":
            return self._tokens_slot(q)
        slot = self._UNIT_SLOTS.get(unit)
        if slot == "seq_len":
            return slot, _seq_len_value(q)
        if slot == "epochs":
            return slot, q.value
        if slot is not None:
            return slot, int(round(value))
        return None

    @staticmethod
    def _tokens_slot(q: _Quantity) -> Tuple[str, object]:
        value = q.absolute
        if q.keyword in ("avg_tokens", "per_example") or q.per_example:
            return "avg_tokens", int(round(value))
        if q.keyword == "total_tokens" or q.scale is not None or value > MAX_PLAUSIBLE_SEQ_LEN:
            return "total_tokens", int(round(value))
        return "seq_len", _seq_len_value(q)

    def _by_scale(self, q: _Quantity, expected: Optional[str]) -> Optional[Tuple[str, object]]:
        if q.scale == "billion":
            return "model_size_b", q.value
        if q.scale == "million" and (q.unit == "params" or q.unit is None and self._model_word_near(q)):
            return "model_size_b", q.value / 1000  # "500M parameters", "مدل ۵۰۰ میلیونی" = 0.5B
        if q.unit == "params":
            return ("model_size_b", q.absolute / 1e9) if q.absolute >= 1e8 else ("ambiguous", q.raw)
        return None

    def _by_keyword(self, q: _Quantity, expected: Optional[str]) -> Optional[Tuple[str, object]]:
        keyword, value = q.keyword, q.absolute
        if keyword == "seq_len":
            return keyword, _seq_len_value(q)
        if keyword in ("examples", "epochs", "gpus", "avg_tokens", "total_tokens"):
            return keyword, value
        if keyword == "budget_usd":
            return ("budget_usd", value) if value < MAX_UNMARKED_BUDGET_USD else ("ambiguous", q.raw)
        if keyword == "per_example":
            return "avg_tokens", value
        return None

    def _by_question_or_shape(self, q: _Quantity, expected: Optional[str]) -> Tuple[str, object]:
        value = q.absolute
        typical_length = q.scale is None and not (q.counter and q.kilo) and (  # "۸ هزار تا" counts things
            _is_power_of_two(value) and POWER_OF_TWO_SEQ_RANGE[0] <= value <= POWER_OF_TWO_SEQ_RANGE[1]
            or q.kilo and _seq_len_value(q) != int(value))
        # The asked slot decides a bare number only when a number can answer it: after the method question
        # "qlora, 2048" is the method and a sequence length; nor is 2048 a model size (none is near 512B-131072B
        # and a power of two) when the model was asked.
        if q.counter and expected in COUNTED_NEVER:
            return "ambiguous", q.raw  # "4 ta", «۴ تا», "4 tane": a count of things, never dollars or a size
        if expected in NUMERIC_ANSWERS and not (expected == "model_size_b" and typical_length and value >= 512):
            return self._as_expected(q, expected)
        if typical_length:
            return "seq_len", _seq_len_value(q)
        return "ambiguous", q.raw

    def _hourly_near(self, q: _Quantity) -> bool:
        """ "saatlik 2 dolar", "۲ دلار در ساعت": a price per hour, not a budget. Only a marker right next to the
        amount counts: "با ۱۰۰ دلار چند ساعت میشه" asks how many hours $100 buys."""
        after = q.unit_end if q.unit_end is not None else q.end
        if after < self.n and self.lexicon.hourly.any_at(self.tokens, after):
            return True
        # Before the amount: the marker right before it, or up to four words before with only ceiling words
        # between ("saatte en fazla 2 dolar", "ساعتی حداکثر ۲ دلار", "saatlik ücret 1.5$").
        for start in range(q.first - 1, max(-1, q.first - 6), -1):
            token = self.tokens[start]
            if token.is_break or token.is_number:
                break
            length, _ = self.lexicon.hourly.longest_at(self.tokens, start)
            if length and start + length <= q.first and not self._duration_at(start) and all(
                    self.lexicon.hourly_reach_words.any_at(self.tokens, k) for k in range(start + length, q.first)):
                return True
        return False

    def _duration_at(self, start: int) -> bool:
        """The hourly word at ``start`` follows a count of hours ("40 saat bütçem 90 dolar", «۴۰ ساعت بودجه‌ام ۹۰
        دلاره»): a duration, not a price per hour. One hour ("1 saati en fazla 2 dolar") is the hourly price."""
        if start == 0:
            return False
        before = self.tokens[start - 1]
        return before.is_number and before.text != "1" and not self._in_gpu_name(start - 1)

    def _in_gpu_name(self, index: int) -> bool:
        """The token is part of a card's name: "H100 saatlik 5 dolar" is the H100's price per hour, not 100 hours."""
        return any(tag is not None and tag.category == "gpu" and k <= index < tag.end
                   for k, tag in enumerate(self.tags[:index + 1]))

    def _is_whole_answer(self, q: _Quantity) -> bool:
        """The message is just this number ("yüz", "bir", "هشت"), so it answers the question the bot asked."""
        words = {t.text for t in self.tokens[q.first:q.end]}
        return self.content_count == q.end - q.first and not words & self.lexicon.never_alone_numbers

    def _model_word_near(self, q: _Quantity) -> bool:
        window = self.tokens[max(0, q.first - 2):q.first] + self.tokens[q.end:q.end + 2]
        return any(t.text.startswith(self.lexicon.model_words) for t in window)

    def _as_expected(self, q: _Quantity, expected: str) -> Tuple[str, object]:
        value = q.absolute
        if expected == "model_size_b":
            if q.scale == "million":
                return "model_size_b", q.value / 1000
            return ("model_size_b", q.value) if not q.kilo else ("ambiguous", q.raw)
        if expected == "seq_len":
            return "seq_len", _seq_len_value(q)
        if expected == "budget_usd":
            return ("budget_usd", value) if value < MAX_UNMARKED_BUDGET_USD else ("ambiguous", q.raw)
        if expected in ("examples", "avg_tokens", "total_tokens", "epochs", "gpus"):
            return expected, value
        return "ambiguous", q.raw

    # -- whole message -------------------------------------------------------------------------------------

    @staticmethod
    def _typed(slot: str, value):
        if slot in ("seq_len", "examples", "avg_tokens", "total_tokens", "gpus"):
            return int(round(value))
        if slot in ("model_size_b", "budget_usd", "epochs", "hourly_cap"):
            return float(value)
        return value

    @staticmethod
    def _plausible(slot: str, value) -> bool:
        if slot == "model_size_b":
            return value <= MAX_PLAUSIBLE_MODEL_SIZE_B
        if slot == "hourly_cap":
            return value <= MAX_PLAUSIBLE_HOURLY_CAP_USD
        return True

    @staticmethod
    def _valid(slot: str, value) -> bool:
        if slot == "currency_note":
            return True
        if not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            return False
        limits = {"seq_len": (MIN_SEQ_LEN, MAX_SEQ_LEN), "model_size_b": (0.01, MAX_MODEL_SIZE_B),
                  "gpus": (1, MAX_GPUS), "epochs": (0.01, MAX_EPOCHS)}
        if slot in limits:
            low, high = limits[slot]
            if not low <= value <= high:
                return False
        if slot in ("gpus", "examples", "seq_len", "avg_tokens", "total_tokens") and value != int(value):
            return False
        return True
