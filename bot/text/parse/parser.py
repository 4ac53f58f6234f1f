"""The parser: one message's tokens, read for model names, quantities and phrases, into ParsedValues."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Dict, List, Optional, Tuple, cast

from bot.text.normalize import fold
from bot.text.numbers import Lexicon, Token, apply_rewrites, load_lexicon, read_part, tokenize
from bot.text.parse.meaning import QuantityMeaning
from bot.text.parse.model_names import _default_kb, _kb_family_words, _name_words, _strip_name_suffixes
from bot.text.parse.model_reader import ModelReader
from bot.text.parse.pasted_config import read_pasted_config, split_pasted_config
from bot.text.parse.phrases import PhraseReader
from bot.text.parse.quantities import QuantityReader, _Quantity, _split_gpu_count, _Tag, keep_attribute_endings
from bot.text.parse.values import SLOT_ALIASES, ParsedValues


class _Parser(ModelReader, QuantityReader, QuantityMeaning, PhraseReader):
    def __init__(self, text: str, kb, expected: Optional[str], lexicon: Lexicon):
        self.lexicon = lexicon
        self.kb = kb
        self.expected = SLOT_ALIASES.get(expected, expected) if expected else None
        self.folded = _split_gpu_count(fold(keep_attribute_endings(text, lexicon)))
        # parse_values has already cut the message to its first READ_TOKENS tokens (read_part): no second bound.
        read = apply_rewrites(tokenize(self.folded), lexicon)
        tokens = _strip_name_suffixes(read, lexicon, _name_words(kb))
        families = {**_kb_family_words(kb), **lexicon.model_families}
        self.tokens: List[Token] = [replace(t, text=families.get(t.text, t.text)) for t in tokens]
        self.n = len(self.tokens)
        self.content_count = sum(1 for t in self.tokens if not t.is_break)  # words and numbers, not punctuation
        self.names_resolved = 0  # names this message sent to the shared resolver (not in its cache)
        self.consumed = [False] * self.n  # part of a model name or a quantity (number, multiplier, unit)
        self.tags: List[Optional[_Tag]] = [None] * self.n
        self.result: Dict[str, object] = {}
        self.ambiguous: List[str] = []
        self.model_at: Optional[int] = None
        self.families: List[Tuple[str, Optional[str]]] = []  # (family word, version) not part of a full name
        self.family_at: Dict[str, int] = {}  # where each such family word stands
        self.name_hits: List[Tuple[int, int, str]] = []  # (first, end token, preset id) of every model name found
        self.sizes: List[Tuple[int, int, float]] = []  # (first, end token, billions) of every explicit size
        self.version_assumed: Dict[str, bool] = {}  # preset id -> chosen as the newest release without a version
        self.versionless: set = set()  # preset ids named by a family and a size only ("llama 8b", "qwen 7b")
        self.method_measured = False  # a method chosen and compared with another ("LoRA ile ... tam eğitime göre")

    def run(self) -> ParsedValues:
        self.find_model()
        self.tag_phrases()
        self._find_own_gpu()
        self._assign_quantities(self.find_quantities())
        explicit_size = (self.sizes[-1][0], self.sizes[-1][2]) if self.sizes else None
        self._settle_model(explicit_size)
        self._find_method()
        if any(tag is not None and tag.category == "unlimited" for tag in self.tags) or (
                self.expected == "budget_usd" and self._whole_message_is(self.lexicon.unlimited_answers)):
            self.result["budget_unlimited"] = True
        self._read_vat_and_period()
        self._find_comparison()
        if self.version_assumed.get(cast(str, self.result.get("model_id"))):  # no model: get(None) is None
            self.result["model_version_assumed"] = True
        values = {k: self._typed(k, v) for k, v in self.result.items()}
        return ParsedValues(ambiguous=self.ambiguous, **values)

    def _assign_quantities(self, quantities: List[_Quantity]) -> None:
        expected_left = self.expected
        for q in quantities:
            slot, value = self._meaning_of(q, expected_left)
            if slot == "skip":
                continue
            if slot == "ambiguous" or not self._valid(slot, value):
                self.ambiguous.append(str(value) if slot == "ambiguous" else q.raw)
                continue
            if slot == expected_left:
                expected_left = None  # only one bare number answers the question
            self.result[slot] = value
            if slot == "model_size_b":
                self.sizes.append((q.first, q.end, float(cast(float, value))))
            if slot in ("budget_usd", "hourly_cap"):
                self.money_at = q

    def _meaning_of(self, q: _Quantity, expected: Optional[str]) -> Tuple[str, object]:
        """classify, with "1.250" read as 1.25 when 1250 cannot be meant for the slot."""
        slot, value = self.classify(q, expected)
        if q.decimal is not None and slot not in ("skip", "ambiguous", "currency_note") and not (
                self._valid(slot, value) and self._plausible(slot, value)):
            decimal_slot, decimal_value = self.classify(replace(q, value=q.decimal, decimal=None), expected)
            if decimal_slot == slot and self._valid(slot, decimal_value):
                value = decimal_value
        return slot, value


# "key: value" fields, one a line or separated by "|" or a spaced "/" ("model: X | seq: 4096 / örnek: 15.000"): the
# separator ends the field, so a number never takes the next field's keyword for its unit ("4096 | örnek").
_FIELD_KEY = re.compile(r"[^\W\d_][^:\n|]{0,30}:\s*\S")
_FIELD_SEPARATOR = re.compile(r"\s*(?:\n|\||\s/\s)\s*")


def split_fields(text: str) -> str:
    """``text`` with the separators of its "key: value" fields made a ";" (a break); other text unchanged."""
    if not _FIELD_KEY.search(text):
        return text
    return _FIELD_SEPARATOR.sub(" ; ", text)


def parse_values(text: str, kb=None, expected: Optional[str] = None, lexicon: Optional[Lexicon] = None
                 ) -> ParsedValues:
    """Read model, size, method, sequence length, budget and data volume from one chat message.

    ``kb``: the knowledge base whose model presets are recognised (default: ``bot.advisor.knowledge.load_knowledge()``).
    ``expected``: the slot the bot just asked for ("seq_len", "model_size_b", "budget_usd", "method", ...), so a
    bare number answering that question is taken for it.
    """
    if text is not None and not isinstance(text, str):
        text = str(text)  # a slot value or payload number: 4096 reads like "4096"
    if not text or not text.strip():
        return ParsedValues()
    text, config = split_pasted_config(text)
    text = read_part(text)
    parsed = _Parser(split_fields(text), kb if kb is not None else _default_kb(), expected,
                     lexicon or load_lexicon()).run() if text.strip() else ParsedValues()
    if config is not None:
        parsed = parsed.copy(update=read_pasted_config(config))
    else:
        from bot.text.model_ids import read_hub_model

        parsed = parsed.copy(update=read_hub_model(text))
    from bot.text.stack_names import read_stack

    stack = read_stack(text)
    return parsed.copy(update={"stack": stack}) if stack else parsed

