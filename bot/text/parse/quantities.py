"""Numbers in chat text: phrase tags (units, keywords, multipliers, counters), number words, and each quantity
with the unit after it and the keywords before it (QuantityReader, a part of the parser)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Tuple, cast

from bot.text.normalize import fold
from bot.text.numbers import Lexicon, parse_number, tokenize
from bot.text.parse.values import RANGE_DASHES
from bot.text.parse.state import ParserState


# A weak number word ("bir", «یک») with a card word is a GPU count only in a short answer ("یک کارت", "bir kart").
MAX_WORDS_OF_A_COUNT = 3
# "7000 ta nemune daram har kodoom 500 token": the words a count of examples and its length may have between them
MAX_WORDS_BETWEEN_COUNT_AND_LENGTH = 3
# punctuation inside one clause ("5000 örnek, 600 token"); a full stop, "?" or "!" ends it
CLAUSE_JOINING_MARKS = frozenset({",", ";", ":", "-", "(", ")", "/"})


@dataclass
class _Quantity:
    first: int  # index of its first token
    end: int  # index after its number and multiplier tokens
    value: float  # as written, thousands applied ("4 bin" -> 4000)
    raw: str
    kilo: bool = False  # a thousand multiplier was written ("4k", "4 bin")
    scale: Optional[str] = None  # "million" | "billion"
    weak: bool = False  # only weak number words ("bir", "یک"): needs a counter or a count unit
    counter: bool = False  # "۴ تا", "4 tane"
    unit: Optional[str] = None
    unit_end: Optional[int] = None
    keyword: Optional[str] = None
    per_example: bool = False
    # "2.048" / "2,048" / "۲٫۰۴۸" is read as thousands groups (2048: Turkish writes 2.048, English 2,048); this is
    # the decimal reading (2.048), taken when the grouped value cannot be meant for the slot ("7.615B" parameters,
    # "1.250 dolar" an hour, "1.500 epoch").
    decimal: Optional[float] = None

    @property
    def absolute(self) -> float:
        return self.value * {None: 1.0, "million": 1e6, "billion": 1e9}[self.scale]


@dataclass
class _Tag:
    category: str  # unlimited | method | gpu | keyword | unit | multiplier | counter
    label: str
    start: int
    end: int


_TABLE_ORDER = ("unlimited", "method", "gpu", "keyword", "unit", "multiplier", "counter")


def _tables(lexicon: Lexicon):
    return {
        "unlimited": lexicon.unlimited, "method": lexicon.methods, "gpu": lexicon.gpu_names,
        "keyword": lexicon.keywords, "unit": lexicon.units, "multiplier": lexicon.multipliers,
        "counter": lexicon.counters,
    }


def _is_power_of_two(value: float) -> bool:
    return value >= 1 and value == int(value) and (int(value) & (int(value) - 1)) == 0


def _decimal_reading(raw: str, grouped: float) -> Optional[float]:
    """The decimal value of a number with one separator and three digits after it, when it was read as groups."""
    if len([ch for ch in raw if ch in ".,"]) != 1:
        return None
    whole, fraction = re.split(r"[.,]", raw)
    if len(fraction) != 3 or float(whole + fraction) != grouped:
        return None
    return float(f"{whole}.{fraction}")


# Above these a value read from "1.250" is no value anyone means, and the decimal reading (1.25) is taken: the
# largest open-weight models have about 1,000B parameters (DeepSeek-V3 671B, Kimi K2 1T total; the largest preset
# in knowledge/models.yml has 400B); no hourly price we rent reaches $1,000 (knowledge/gpus.yml: the dearest card
# costs under $10 an hour, eight of them under $100).
MAX_PLAUSIBLE_MODEL_SIZE_B = 1100.0
MAX_PLAUSIBLE_HOURLY_CAP_USD = 1000.0


def _seq_len_value(q: _Quantity) -> int:
    if q.kilo and q.scale is None:
        thousands = q.value / 1000
        if thousands == int(thousands) and _is_power_of_two(thousands):
            return int(thousands) * 1024
    return int(round(q.absolute))


_COUNT_TIMES_NAME_RE = re.compile(r"(\d)\s*[x×](?=[a-z])")
# "۸ در ۷ بی", "8 x 7 milyar": a Mixture-of-Experts name (8x7b), written with "در" (by) or spaces
_EXPERTS_TIMES_SIZE_RE = re.compile(r"\b(\d{1,3})\s*(?:در|ضربدر|x|×)\s*(\d{1,3})\s*(?:b|بی|میلیارد|milyar|billion)\b")


# "30b a3b", "30b-a-3b", "30ba3b", «۳۰ بی ای ۳ بی», «۳۰بی-ای۳بی», «۳۰ میلیارد ا ۳ میلیارد»: the active parameters of a
# Mixture-of-Experts name (Qwen3-30B-A3B) written apart, glued or in Persian letters (round 7); "ای"/"آ" (folded to
# "ا") is the letter A. Only right after a size: "ای" is a Persian word too.
_ACTIVE_SIZE_RE = re.compile(
    r"(\d)\s*(?:b|بی|میلیارد)(?:(?![^\W\d_])[\s_-]*(?:a|ای|ا|اي)[\s_-]*|a)(\d{1,3}(?:[.,]\d)?)\s*(?:b|بی|میلیارد)"
    r"(?![^\W\d_])")


_APOSTROPHE_ENDING_RE = re.compile(r"([^\W\d_]+)['\u2019]([^\W\d_]+)")


def keep_attribute_endings(text: str, lexicon: Lexicon) -> str:
    """ "512 token'lık" -> "512 tokenlık": fold drops a suffix after an apostrophe, but on a token unit this one says
    the count is each example's length (round 7); any other suffix ("GPU'lu", "40 GB'lık") is left to fold."""
    def glue(match: re.Match) -> str:
        word, ending = match.group(1), match.group(2)
        if fold(ending) in lexicon.attribute_unit_endings:
            tokens = tokenize(fold(word))
            if len(tokens) == 1 and lexicon.units.longest_at(tokens, 0) == (1, "tokens"):
                return word + ending
        return match.group(0)

    return _APOSTROPHE_ENDING_RE.sub(glue, text) if "'" in text or "\u2019" in text else text


def _split_gpu_count(folded: str) -> str:
    """ "8xh100" -> "8 x h100": the letter run "xh" would otherwise hide both the counter and the GPU name. A MoE's
    size with its active parameters is written as the catalogue spells it ("30b a3b")."""
    folded = _EXPERTS_TIMES_SIZE_RE.sub(r"\1x\2b", folded)
    folded = _ACTIVE_SIZE_RE.sub(r"\1b a\2b", folded)
    return _COUNT_TIMES_NAME_RE.sub(r"\1 x ", folded)


class QuantityReader(ParserState):
    """Tags phrases and reads quantities; mixed into the parser (bot.text.parse.parser._Parser)."""

    def tag_phrases(self) -> None:
        tables = _tables(self.lexicon)
        i = 0
        while i < self.n:
            if self.consumed[i] or self.tokens[i].is_break:  # no phrase starts at punctuation or a line break
                i += 1
                continue
            best_len, best = 0, None
            for category in _TABLE_ORDER:
                if self.tokens[i].is_number and category not in ("method", "gpu"):
                    continue
                length, label = tables[category].longest_at(self.tokens, i)
                if category == "gpu" and not self._gpu_name_written_as_one(i, length):
                    continue
                if length > best_len and not any(self.consumed[i:i + length]):
                    best_len, best = length, _Tag(category, label, i, i + length)
            if best is None:
                i += 1
                continue
            for k in range(best.start, best.end):
                self.tags[k] = best
            i += best_len

    def _gpu_name_written_as_one(self, start: int, length: int) -> bool:
        """ "b200" / "l40s" are names, "7b 200 örnek" is not B200: a short letter and its digits must touch."""
        for k in range(start + 1, start + length):
            previous = self.tokens[k - 1]
            if self.tokens[k].is_number and not self.tokens[k].glued and len(previous.text) <= 2:
                return False
        return True

    def span_text(self, first: int, end: int) -> str:
        """The folded text from token ``first`` to the token before ``end``, as typed ("10k", "500 هزار")."""
        return self.folded[self.tokens[first].start:self.tokens[end - 1].end]

    def tag(self, index: int) -> Optional[_Tag]:
        return self.tags[index] if 0 <= index < self.n else None

    def is_tagged(self, index: int, category: str, label: Optional[str] = None) -> bool:
        tag = self.tag(index)
        return tag is not None and tag.category == category and (label is None or tag.label == label)

    # -- numbers ------------------------------------------------------------------------------------------

    def _number_word(self, index: int) -> Optional[float]:
        if self.tags[index] is not None or self.consumed[index]:
            return None
        text = self.tokens[index].text
        value = self.lexicon.number_words.get(text)
        return value if value is not None else self.lexicon.counted_number_words.get(text)

    def _compose_words(self, i: int) -> Tuple[float, int, bool, bool, bool]:
        """Value of the number words from ``i`` ("دو هزار و چهل و هشت", "yüz elli", "iki bin", "دوتا").

        Returns (value, end index, thousand written, only weak words, counter glued on)."""
        total, current, j = 0.0, 0.0, i
        kilo, weak_only, last_was_number = False, True, False
        while j < self.n:
            value = self._number_word(j)
            if value is not None:
                if value == 100 and 0 < current < 10:
                    current *= 100  # "iki yüz" = 200
                else:
                    current += value
                text = self.tokens[j].text
                weak_only = weak_only and text in self.lexicon.weak_number_words
                last_was_number, j = True, j + 1
                if text in self.lexicon.counted_number_words:
                    return total + current, j, kilo, False, True  # "دوتا": the counter ends the number
                continue
            text = self.tokens[j].text
            if (text in self.lexicon.connectors and last_was_number and j + 1 < self.n
                    and self._number_word(j + 1) is not None):
                last_was_number, j = False, j + 1
                continue
            if self.is_tagged(j, "multiplier", "thousand") and last_was_number and not kilo:
                total += max(current, 1) * 1000
                current, kilo, weak_only, last_was_number = 0.0, True, False, True
                j += 1
                continue
            break
        return total + current, j, kilo, weak_only, False

    def _starts_identifier(self, i: int) -> bool:
        """Digits glued to a Latin word are part of a name ("a100", "llama3", "nf4"), not a quantity."""
        token = self.tokens[i]
        if not token.glued or i == 0:
            return False
        previous = self.tokens[i - 1]
        return previous.is_latin_word and previous.text not in ("x",)

    def find_quantities(self) -> List[_Quantity]:
        quantities: List[_Quantity] = []
        i = 0
        while i < self.n:
            token = self.tokens[i]
            if self.consumed[i] or (self.tags[i] is not None and not self.is_tagged(i, "multiplier", "thousand")):
                i += 1
                continue
            if token.is_number:
                if self._starts_identifier(i):
                    i += 1
                    continue
                values = parse_number(token.text)
                if len(values) > 1:  # "8,16,32": a list nobody can map to one slot
                    self.ambiguous.append(token.text)
                    self.consumed[i] = True
                    i += 1
                    continue
                q = _Quantity(first=i, end=i + 1, value=values[0], raw=token.text,
                              decimal=_decimal_reading(token.text, values[0]))
            elif self._number_word(i) is not None:
                value, end, kilo, weak, counted = self._compose_words(i)
                q = _Quantity(first=i, end=end, value=value, kilo=kilo, weak=weak, counter=counted,
                              raw=self.span_text(i, end))
            elif self.is_tagged(i, "multiplier", "thousand") and (i == 0 or not self.tokens[i - 1].is_number):
                q = _Quantity(first=i, end=i, value=1.0, raw=token.text, weak=True)  # "bin örnek" = 1000
            else:
                i += 1
                continue
            self._read_multipliers(q)
            self._read_unit(q)
            if quantities and self._length_of_each_example(quantities[-1], q):
                q.per_example = True
            for k in range(q.first, q.unit_end if q.unit_end is not None else q.end):
                self.consumed[k] = True
            quantities.append(q)
            i = max(q.end, q.unit_end or 0, i + 1)
        self._lengths_before_counts(quantities)
        return quantities

    def _lengths_before_counts(self, quantities: List[_Quantity]) -> None:
        """A token count written before the count of examples is each example's length (round 7): "400 tokenlik 12
        bin örnek", "512 token'lık 3000 kayıt", «نمونه‌های ۶۰۰ توکنی دارم، ۸ هزار تا»; and a count with a counter but
        no unit after such a length counts the examples ("har nemune 300 token, 5000 ta"). The length is written as
        an attribute ("tokenlik", «توکنی»), or touches the count and is no power of two: "2048 token 12 bin örnek"
        and "2048 token, 5000 örnek" list a sequence length; a length with a sequence or total keyword, a limit or
        a scale is never each example's."""
        for previous, q in zip(quantities, quantities[1:]):
            if previous.unit != "tokens" or not self._clause_between(previous, q):
                continue
            each = previous.per_example or self._plain_length(previous) and (
                self._attribute_length(previous) or q.unit == "examples" and q.first == previous.unit_end
                and not _is_power_of_two(previous.value))  # "2048 token 12 bin örnek" names a sequence length
            if not each:
                continue
            if q.unit is None and q.counter:
                q.unit = "examples"
            if q.unit == "examples":
                previous.per_example = True

    def _clause_between(self, previous: _Quantity, q: _Quantity) -> bool:
        """At most MAX_WORDS_BETWEEN_COUNT_AND_LENGTH words, no number and no sentence end between two quantities."""
        gap_start = previous.unit_end if previous.unit_end is not None else previous.end
        if not 0 <= q.first - gap_start <= MAX_WORDS_BETWEEN_COUNT_AND_LENGTH:
            return False
        return not any(self.tokens[k].is_number or self.tokens[k].is_break
                       and self.tokens[k].text not in CLAUSE_JOINING_MARKS and not self._abbreviation_period(k)
                       for k in range(gap_start, q.first))

    def _plain_length(self, q: _Quantity) -> bool:
        """A token count with no keyword, scale or limit: it may be each example's length."""
        if q.keyword is not None or q.scale is not None or q.unit_end is None:
            return False
        limits = self.lexicon.length_limit_words
        if any(limits.any_at(self.tokens, k) for k in range(max(0, q.first - 2), q.first)) or (
                q.unit_end < self.n and limits.any_at(self.tokens, q.unit_end)):
            return False
        after = self.tag(q.unit_end)
        return not (after is not None and after.category == "keyword" and after.label in ("seq_len", "total_tokens"))

    def _attribute_length(self, q: _Quantity) -> bool:
        """The unit is written as an attribute of the examples ("600 tokenlik", «۶۰۰ توکنی»)."""
        unit_word = self.tokens[cast(int, q.unit_end) - 1].text
        return unit_word.endswith(self.lexicon.attribute_unit_endings)

    def _length_of_each_example(self, previous: _Quantity, q: _Quantity) -> bool:
        """A token count that follows a count of examples in the same clause is the length of each example (issue 21,
        rounds 3 and 4), with or without a word for "each" or "average" between them: "5000 örnek, 600 tokenlik",
        "7000 örnek, 450 token", "6000 örnek 800'er token", "9000 örnek 700 tokenla", «۸۰۰۰ تا نمونه ۷۰۰ توکنی»,
        "5000 examples of 600 tokens". Not when it carries a sequence-length or total keyword ("5000 örnek, 2048
        token context", "seq 2048") or a limit ("en fazla 2048 token"), a scale ("2 milyon token" is a total), or a
        sentence ends between them."""
        if q.unit != "tokens" or q.per_example or q.keyword is not None or previous.unit != "examples":
            return False
        if q.scale is not None:
            return False
        gap_start = previous.unit_end if previous.unit_end is not None else previous.end
        if not 0 <= q.first - gap_start <= MAX_WORDS_BETWEEN_COUNT_AND_LENGTH:
            return False
        for k in range(gap_start, q.first):
            token = self.tokens[k]
            if token.is_number or token.is_break and token.text not in CLAUSE_JOINING_MARKS \
                    and not self._abbreviation_period(k):
                return False
        limits = self.lexicon.length_limit_words
        if any(limits.any_at(self.tokens, k) for k in range(gap_start, q.first)) or (
                q.unit_end is not None and q.unit_end < self.n and limits.any_at(self.tokens, q.unit_end)):
            return False  # "5000 örnek, en fazla 2048 token", "2048 tokens max": the longest, not each one's
        after = self.tag(q.unit_end) if q.unit_end is not None and q.unit_end < self.n else None
        return not (after is not None and after.category == "keyword" and after.label in ("seq_len", "total_tokens"))

    def _read_multipliers(self, q: _Quantity) -> None:
        j = q.end
        while j < self.n and self.is_tagged(j, "multiplier"):
            label = cast(_Tag, self.tags[j]).label  # is_tagged: a multiplier tag stands at j
            if label == "thousand" and not q.kilo and q.scale is None:
                q.value *= 1000
                q.kilo = True
            elif label in ("million", "billion") and q.scale is None:
                q.scale = label
            else:
                break
            q.weak = False
            j += 1
        q.end = j
        q.raw = self.span_text(q.first, q.end) if q.end > q.first else q.raw

    def _is_range_low(self, q: _Quantity) -> bool:
        """ "50-100 dolar", "۵۰ تا ۱۰۰ دلار", "50 ile 100 dolar arası": the first number of a range."""
        j = q.end
        if j < self.n and self.tokens[j].text in self.lexicon.range_words:
            j += 1
        elif not (j < self.n and self.folded[self.tokens[j - 1].end:self.tokens[j].start].strip() in RANGE_DASHES):
            return False
        if not (j < self.n and self.tokens[j].is_number and self.tags[j] is None):
            return False  # not "دو تا ۴۰۹۰" (RTX 4090)
        if q.scale is not None:
            # "7-13B" is a range, "14B ile 4096 token" is a size and a length
            return j + 1 < self.n and self.is_tagged(j + 1, "multiplier") or not self._has_unit_after(j)
        return True

    def _has_unit_after(self, index: int) -> bool:
        k = index + 1
        while k < self.n and self.is_tagged(k, "multiplier"):
            k += 1
        return k < self.n and (tag := self.tags[k]) is not None and tag.category == "unit"

    def _read_unit(self, q: _Quantity) -> None:
        if self._is_range_low(q):
            q.unit = "range_low"  # the upper end, read next with its unit, is what counts
            return
        self._read_unit_after(q)
        if q.unit is None and q.first > 0:
            q.unit = self._unit_before(q)
        q.keyword = self._keyword_before(q.first)
        j = q.unit_end
        if q.unit == "usd" and j is not None and j + 1 < self.n and self.tokens[j].text in self.lexicon.connectors \
                and self.lexicon.number_words.get(self.tokens[j + 1].text) == 0.5:
            q.value += 0.5  # "یه دلار و نیم": a dollar and a half
            q.unit_end = j + 2
        if q.unit == "tokens":
            keywords = self._keywords_before(q.first)
            q.per_example = self._per_example_after(cast(int, q.unit_end)) or "avg_tokens" in keywords
            if "total_tokens" in keywords:
                q.keyword = "total_tokens"

    def _read_unit_after(self, q: _Quantity) -> None:
        j = q.end
        while j < self.n and (self.is_tagged(j, "counter") or self.tokens[j].text in self.lexicon.approximate_words):
            q.counter = q.counter or self.is_tagged(j, "counter")
            j += 1
        tag = self.tag(j)
        if tag is None:
            return
        if tag.category == "unit":
            q.unit, q.unit_end = tag.label, tag.end
            if tag.label == "gpus" and q.weak and not q.counter and self.content_count > MAX_WORDS_OF_A_COUNT:
                # "daha iyi bir kart önerir misin", «یه کارت بهتر داری؟»: "a card" in a sentence, not a count of
                # one ("یک کارت" alone, "bir tane kart" are)
                q.unit = "skip_weak"
        elif tag.category == "gpu":
            q.unit, q.unit_end = "gpus", tag.end
            if q.weak and not q.counter:
                q.unit = "skip_weak"  # "on A100" is English "on", "bir A100" just "an A100"
        elif tag.category == "keyword" and tag.label in ("seq_len", "active_params"):
            q.unit, q.unit_end = tag.label, tag.end  # "4096 context", "4k bağlam", "3B aktif"

    def _unit_before(self, q: _Quantity) -> Optional[str]:
        """A unit written before the number: "%20", "$50", "A100 x 2", "H100 2 tane"."""
        before = self.tag(q.first - 1)
        previous = self.tokens[q.first - 1].text
        if previous == "%":
            return "ignore"
        if before is None:
            return None
        if before.category == "unit" and before.label in ("usd", "try", "toman", "eur") and not previous.isalpha():
            return before.label
        if before.category == "counter" and previous in ("x", "×"):
            named = self.tag(before.start - 1)
            return "gpus" if named is not None and self._names_gpus(named) else None
        if q.counter and self._names_gpus(before):
            return "gpus"
        return None

    @staticmethod
    def _names_gpus(tag: _Tag) -> bool:
        return tag.category == "gpu" or tag.label == "gpus"

    def _per_example_after(self, index: int) -> bool:
        for k in range(index, min(index + 3, self.n)):
            tag = self.tags[k]
            if self.tokens[k].is_break or self.tokens[k].is_number:
                return False  # "4096 token 5000 örnek ortalama 700 token": "ortalama" is the next number's
            if tag is not None and tag.category == "keyword" and tag.label in ("per_example", "avg_tokens"):
                # "600 token ortalama" is this number's; "4096 توکن و میانگین طول نمونه‌ها ۶۰۰ توکن" the next one's
                return tag.label == "per_example" or not self._number_within(tag.end, 4)
        return False

    def _abbreviation_period(self, index: int) -> bool:
        """The period of an abbreviation ("ort.", "yakl."), which ends no sentence."""
        return self.tokens[index].text == "." and index > 0 \
            and self.tokens[index - 1].text in self.lexicon.abbreviations

    def _number_within(self, index: int, reach: int) -> bool:
        """A number in the next ``reach`` tokens before a punctuation break."""
        for k in range(index, min(index + reach, self.n)):
            if self.tokens[k].is_break:
                return False
            if self.tokens[k].is_number:
                return True
        return False

    # A unit word right before a number works as a keyword ("GPU: 4", "epoch 3", "ساعت ۳" is a time of day).
    _UNIT_AS_KEYWORD = {"examples": "examples", "epochs": "epochs", "gpus": "gpus", "usd": "budget_usd",
                        "ignore": "ignore"}

    def _keyword_before(self, first: int) -> Optional[str]:
        keywords = self._keywords_before(first)
        return keywords[0] if keywords else None

    def _keywords_before(self, first: int) -> List[str]:
        """Keywords up to three words before a number, closest first ("ortalama uzunluk 800 token")."""
        found: List[str] = []
        k = first - 1
        steps = 0
        if k >= 0 and self.tokens[k].text == ":":
            k -= 1  # "seq: 4096", «تعداد نمونه: ۱۵۰۰۰»: the colon of a "key: value" field ends no phrase
            first = k + 1  # "epoch: 3" is "epoch 3": the unit word stands right before the number
        while k >= 0 and steps < 3:
            token, tag = self.tokens[k], self.tags[k]
            if self._abbreviation_period(k):
                k -= 1  # "ort. 350 token": the abbreviation's period
                continue
            if token.is_break or token.is_number or self.consumed[k]:
                break
            if tag is not None:
                if tag.category == "keyword":
                    found.append(tag.label)
                elif tag.category == "unit" and tag.label in self._UNIT_AS_KEYWORD:
                    # only right before the number: "GPU 4", "saat 3"; not "GB VRAM gerekiyor 8b"
                    if tag.end == first:
                        found.append(self._UNIT_AS_KEYWORD[tag.label])
                    if tag.end == first or tag.label != "examples":
                        break
                    # an examples word inside the keyword's phrase ("ortalama örnek uzunluğu 700 token",
                    # «میانگین طول نمونه‌ها ۶۰۰ توکن»): the words before it still count
                k = tag.start - 1
            else:
                k -= 1
            steps += 1
        return found

