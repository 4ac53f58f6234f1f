"""Phrases that are no numbers: the method (and a method that is only a yardstick), comparisons ("A or B"), an
owned card, VAT and the budget's period."""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple, cast

from bot.text.parse.model_names import _catalogue_card, _family_of, _own_gpu_table, _strong_owned_ids
from bot.text.numbers import is_replaced
from bot.text.parse.quantities import _Tag
from bot.text.parse.state import ParserState


def fold_particle(word: str) -> str:
    return word.replace("ı", "i").replace("ü", "u")


class PhraseReader(ParserState):
    """Reads method, comparison, own card, VAT and period; mixed into the parser (bot.text.parse.parser._Parser)."""

    # -- hourly cap, budget period, own card, comparisons --------------------------------------------------

    def _read_vat_and_period(self) -> None:
        for k in range(self.n):
            length, label = self.lexicon.vat.longest_at(self.tokens, k)
            if length:
                self.result["vat_said"] = label == "included"
        if "hourly_cap" in self.result and "vat_said" in self.result:
            self.result["hourly_cap_vat"] = self.result["vat_said"]
        money = getattr(self, "money_at", None)
        if "budget_usd" not in self.result or money is None:
            return
        end = money.unit_end if money.unit_end is not None else money.end
        for k in list(range(max(0, money.first - 4), money.first)) + list(range(end, min(self.n, end + 4))):
            length, label = self.lexicon.budget_period.longest_at(self.tokens, k)
            if length:
                self.result["budget_period"] = label
                return

    def _find_own_gpu(self) -> None:
        cards = _own_gpu_table(self.kb)
        if cards is None:
            return
        table, catalogue = cards
        owned = any(self.lexicon.own_card_words.any_at(self.tokens, k) for k in range(self.n))
        self._strongly_owned: Optional[bool] = None
        k = 0
        while k < self.n:
            length, card_id = table.longest_at(self.tokens, k) if not self.consumed[k] else (0, None)
            if not length:
                k += 1
                continue
            if self._said_owned(cast(str, card_id), catalogue, owned):  # a length found: a card id with it
                self.result.setdefault("own_gpu", card_id)
            if (tag := self.tags[k]) is None or tag.category != "gpu":
                for j in range(k, k + length):
                    self.consumed[j] = True  # "4060 ti 16gb", "rtx 5090": a name, its digits are no values
            k += length

    def _said_owned(self, card_id: str, catalogue: frozenset, owned: bool) -> bool:
        """A card we also rent is the customer's only when they say so: "var" is enough for a gaming card, but
        "A100 var mı?" asks about our stock, so an A100 or H100 needs "bizde", "elimizde", «خودمون» (issue 21).
        The message is scanned for those words once, and only when such a card is named (linear work)."""
        if card_id in _strong_owned_ids(self.kb):
            if self._strongly_owned is None:
                self._strongly_owned = any(
                    self.lexicon.own_catalogue_card_words.any_at(self.tokens, k) for k in range(self.n))
            return self._strongly_owned
        return owned or card_id not in catalogue

    def _find_comparison(self) -> None:
        """Two options of one kind joined by "or" (or by "and" with a compare word): "LoRA mı QLoRA mı?",
        "H100 یا A100؟", "8B veya 14B", "llama 8b or qwen 7b". The compared slot is not filled from the message."""
        options = self._comparison_options()
        has_compare_word = any(self.lexicon.compare_words.any_at(self.tokens, k) for k in range(self.n))
        for kind in ("method", "gpu", "model"):
            if kind == "method" and self.method_measured:
                continue
            pair = self._joined_pair(sorted(options[kind]), has_compare_word)
            if pair is None:
                continue
            self.result["compare"] = {"kind": kind, "options": pair}
            if kind == "method":
                self.result.pop("method", None)
            elif kind == "model":
                for slot in ("model_id", "model_size_b", "model_query", "model_family"):
                    self.result.pop(slot, None)
            return

    def _comparison_options(self) -> Dict[str, List[Tuple[int, int, str]]]:
        """Every method, catalogue card and model named in the message: (first, end token, value) by kind."""
        options: Dict[str, List[Tuple[int, int, str]]] = {"method": [], "gpu": [], "model": []}
        seen = set()
        for tag in self.tags:
            if tag is None or tag.start in seen:
                continue
            seen.add(tag.start)
            if tag.category == "method" and (tag.label != "full_weak" or self._weak_full_supported(tag)):
                label = {"full_strong": "full", "full_weak": "full"}.get(tag.label, tag.label)
                options["method"].append((tag.start, tag.end, label))
            elif tag.category == "gpu":
                card = _catalogue_card(self.kb, self.tokens[tag.start:tag.end])
                if card:
                    options["gpu"].append((tag.start, tag.end, card))
        options["model"].extend(self.name_hits)
        family = _family_of(self.name_hits[0][2]) if self.name_hits else None
        version = self._typed_version(self.name_hits[0][2]) if self.name_hits else None
        for start, end, size in self.sizes:
            options["model"].append((start, end, self._compared_size(family, version, size) or f"{size:g}b"))
        return options

    def _compared_size(self, family: Optional[str], version: Optional[str], size: float) -> Optional[str]:
        """ "qwen2.5 7b mi 14b mi": the second size is of the named family and version when it has a preset of that
        size, "qwen 7b mi 14b mi" the newest release of that size."""
        if not family:
            return None
        return self._preset_for(family, size, version) or (
            self._preset_for(family, size) if version is None else None)

    def _joined_pair(self, found: List[Tuple[int, int, str]], has_compare_word: bool) -> Optional[List[str]]:
        for (_, a_end, a), (b_start, _, b) in zip(found, found[1:]):
            if a == b:
                continue
            between = {t.text for t in self.tokens[a_end:b_start] if not t.is_break}
            if not between or len(between) > 4:
                continue
            if between & self.lexicon.compare_or or (between & self.lexicon.compare_and and has_compare_word):
                return [a, b]
        return None

    def _whole_message_is(self, table) -> bool:
        content = [t for t in self.tokens if not t.is_break]
        length, _ = table.longest_at(content, 0) if content else (0, None)
        return bool(content) and length == len(content)

    def _find_method(self) -> None:
        named = self._named_methods()
        references = [(tag, marker) for tag in named for marker in [self._reference_marker(tag)] if marker]
        if references:
            # "LoRA ile eğitirsem kalite tam eğitime göre düşer mi?": the yardstick is no choice, and the other
            # method is one only when it is tied to the job (see knowledge/lexicon.yml, methods.reference_after).
            outside: Set[int] = set()
            for tag, (first, end) in references:
                outside.update(range(min(first, tag.start), max(end, tag.end)))
            yardsticks = {id(ref) for ref, _ in references}
            named = [tag for tag in named if id(tag) not in yardsticks and self._tied_to_the_job(tag, outside)]
            # a method chosen for the job and measured against another is no "X or Y" question
            self.method_measured = bool(named)
        wanted = [tag for tag in named if not self._negated(tag)]
        if len(wanted) < len(named):
            named = wanted  # "full olsun, LoRA istemiyorum": never the negated one; "QLoRA olmasın" alone: none
        kept = [tag for tag in named if not is_replaced(self.tokens, tag.start, tag.end, self.lexicon,
                                                        self.lexicon.separate_name_suffixes)]
        named = kept or named  # "bejaye qlora, lora": the method given up is no choice; alone it still names one
        if named:
            label = named[-1].label
            self.result["method"] = {"full_strong": "full", "full_weak": "full"}.get(label, label)

    _QUESTION_PARTICLES = frozenset({"mi", "mı", "mu", "mü", "mi?", "mı?"})

    def _negated(self, tag: _Tag) -> bool:
        """The method is said not to be wanted: "LoRA değil" (not "LoRA değil mi?"), "QLoRA olmasın", «نه LoRA»."""
        after = tag.end
        if after < self.n and (self.tokens[after].text in self.lexicon.separate_name_suffixes
                               or self.tokens[after].text in ("da", "de")):
            after += 1  # "LoRA'yı istemiyorum" with the suffix a separate word, "LoRA da değil"
        length = self.lexicon.method_negated_after.longest_at(self.tokens, after)[0] if after < self.n else 0
        if length:
            nxt = after + length
            return not (nxt < self.n and fold_particle(self.tokens[nxt].text) in self._QUESTION_PARTICLES)
        for start in range(max(0, tag.start - 3), tag.start):
            length = self.lexicon.method_negated_before.longest_at(self.tokens, start)[0]
            if length and start + length == tag.start:
                return True
        return False

    def _named_methods(self) -> List[_Tag]:
        named: List[_Tag] = []
        seen_starts = set()
        for tag in self.tags:
            if tag is None or tag.category != "method" or tag.start in seen_starts:
                continue
            seen_starts.add(tag.start)
            if tag.label != "full_weak" or self._weak_full_supported(tag):
                named.append(tag)
        return named

    def _reference_marker(self, tag: _Tag) -> Optional[Tuple[int, int]]:
        """The span of a comparison word that makes this method the yardstick ("... göre", «نسبت به ...»)."""
        after = tag.end
        if after < self.n and self.tokens[after].text in self.lexicon.separate_name_suffixes:
            after += 1  # "LoRA ya göre"
        length = self.lexicon.method_reference_after.longest_at(self.tokens, after)[0] if after < self.n else 0
        if length:
            return after, after + length
        for start in range(max(0, tag.start - 3), tag.start):
            length = self.lexicon.method_reference_before.longest_at(self.tokens, start)[0]
            if length and start + length == tag.start:
                return start, tag.start
        return None

    def _tied_to_the_job(self, tag: _Tag, outside: set) -> bool:
        if self.expected == "method" or "model_id" in self.result or "model_size_b" in self.result:
            return True
        for k in range(max(0, tag.start - 2), min(self.n, tag.end + 2)):
            if k not in outside and not tag.start <= k < tag.end \
                    and self.lexicon.method_context.any_at(self.tokens, k):
                return True
        return False

    def _weak_full_supported(self, tag: _Tag) -> bool:
        nxt = self.tokens[tag.end] if tag.end < self.n else None
        prev = self.tokens[tag.start - 1] if tag.start > 0 else None
        if nxt is not None and (nxt.is_number or nxt.text in self.lexicon.full_weak_blockers_after):
            return False
        if prev is not None and prev.text in self.lexicon.full_weak_blockers_before:
            return False
        if self.expected == "method" or "model_id" in self.result or "model_size_b" in self.result:
            return True
        return self._method_context_near(tag) or self.content_count <= 3

    def _method_context_near(self, tag: _Tag) -> bool:
        return any(not tag.start <= k < tag.end and self.lexicon.method_context.any_at(self.tokens, k)
                   for k in range(max(0, tag.start - 3), min(self.n, tag.end + 3)))
