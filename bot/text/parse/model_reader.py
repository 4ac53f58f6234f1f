"""Model names in a message: a preset's full name, a family and a size, a size written apart from its family, and
names we do not know (kept as typed, never replaced silently)."""
from __future__ import annotations

from typing import List, Optional, Tuple, cast

from bot.text.numbers import parse_number
from bot.text.parse.model_names import (_BILLION_LETTERS, MAX_NAMES_RESOLVED_PER_MESSAGE, _family_of, _is_resolved,
                                        _model_index, _names_by_first_word, _resolve_name, _version_matches,
                                        _version_of)
from bot.text.parse.values import MIN_BARE_FAMILY_SIZE_B
from bot.text.parse.state import ParserState


class ModelReader(ParserState):
    """Finds model names; mixed into the parser (bot.text.parse.parser._Parser)."""

    # -- model names --------------------------------------------------------------------------------------

    def find_model(self) -> None:
        if self.kb is None:
            return
        self._find_full_names()
        self._find_family_words()

    def _find_full_names(self) -> None:
        """The longest preset name (id, display name or alias) at each word, left to right."""
        names, _, _ = _model_index(self.kb)
        # "۲۰ بی", «۱۴ میلیارد», "14 milyar" are "20b", "14b" in a name, as they are as a size
        texts = ["b" if k and self.tokens[k - 1].is_number and self._billion_word(k) else t.text
                 for k, t in enumerate(self.tokens)]
        by_first = _names_by_first_word(self.kb, names)
        i = 0
        while i < self.n:
            matched = next((name for name in by_first.get(texts[i], ()) if self._name_at(texts, i, name)), None)
            i = self._take_name(i, matched) if matched is not None else i + 1

    def _billion_word(self, k: int) -> bool:
        return self.tokens[k].text in _BILLION_LETTERS or self.lexicon.multipliers.longest_at(self.tokens, k) == (
            1, "billion")

    def _name_at(self, texts, i: int, name) -> bool:
        length = len(name.words)
        if tuple(texts[i:i + length]) != name.words or not self._ends_cleanly(i + length):
            return False
        return not (length == 1 and len(name.words[0]) <= 2 and self.tokens[i].glued)  # "yi" glued: not Yi

    def _take_name(self, i: int, name) -> int:
        """Record the name found at ``i``; the index after it."""
        length = len(name.words)
        variant_end = self._unknown_variant_end(i + length)
        if variant_end:
            # "gemma4 e4b", "qwen3 a7b": a variant of that name we have no preset of - not the preset the first
            # words name (no silent substitute); the resolver offers a stand-in
            self.result.update(model_query=self.span_text(i, variant_end), model_family=_family_of(name.preset_id))
            self._consume(i, variant_end)
            return variant_end
        self.result["model_id"] = name.preset_id
        self.result["model_size_b"] = name.size_b
        if length == 3 and name.words[2] == "b" and self.tokens[i + 1].is_number:
            self.versionless.add(name.preset_id)  # "qwen 7b": an alias without a version
        self.model_at = i
        self.name_hits.append((i, i + length, name.preset_id))
        self._consume(i, i + length)
        return i + length

    def _consume(self, first: int, end: int) -> None:
        for k in range(first, end):
            self.consumed[k] = True

    def _find_family_words(self) -> None:
        """A family word not part of a full name: with a size ("llama 8b", "qwen 14"), or kept with its version
        for a size written elsewhere in the message."""
        family_words = set(self.lexicon.model_families.values())
        for k, token in enumerate(self.tokens):
            if token.text not in family_words or self.consumed[k]:
                continue
            if k + 1 < self.n and self.tokens[k + 1].is_number and not self._counted(k + 2):
                if self._is_size_multiplier(k + 2):
                    if self._family_with_size(k):
                        continue
                else:
                    version = self._family_with_bare_number(k)
                    if version is None:
                        continue
                    self.families.append((token.text, version))
                    self.family_at.setdefault(token.text, k)
                    continue
            self.families.append((token.text, None))
            self.family_at.setdefault(token.text, k)

    def _counted(self, index: int) -> bool:
        """A counter word ("تا", "ta", "tane", "adet") stands at ``index``: the number before it counts something
        ("llama 8 ta gpu", «لاما ۴ تا کارت»), it is no size of the family word before it (round 7)."""
        if index >= self.n or self.tokens[index].text in ("x", "×"):
            return False
        return self.lexicon.counters.any_at(self.tokens, index)

    def _family_with_size(self, k: int) -> bool:
        """ "llama 8b", "qwen 14B'yi": a family and a size read as one name (the newest release of that size)."""
        number = parse_number(self.tokens[k + 1].text)[0]
        preset = self._preset_for(self.tokens[k].text, number)
        if not preset:
            return False
        end = k + 2 + self.lexicon.multipliers.longest_at(self.tokens, k + 2)[0]
        if "model_id" not in self.result:
            self.result["model_id"], self.result["model_size_b"] = preset, float(number)
            self.model_at = k
        self.versionless.add(preset)
        self.name_hits.append((k, end, preset))
        self._consume(k, end)
        return True

    def _family_with_bare_number(self, k: int) -> Optional[str]:
        """ "llama 8", "qwen 14": the size of a preset of that family written without the B (None: taken);
        else the number is a version ("llama 3.1 ...", "qwen2.5 ..."), returned."""
        number = parse_number(self.tokens[k + 1].text)[0]
        preset = self._preset_for(self.tokens[k].text, number) if number >= MIN_BARE_FAMILY_SIZE_B else None
        self.consumed[k + 1] = True
        if preset and "model_id" not in self.result:
            self.result["model_id"], self.result["model_size_b"] = preset, number
            self.versionless.add(preset)
            self.model_at = k
            return None
        return self.tokens[k + 1].text

    def _unknown_variant_end(self, end: int) -> Optional[int]:
        """End of a variant written right after a name: a letter glued to a size ("e4b", "a3b") the name does not
        include, so the name does not describe the model."""
        if end + 3 > self.n:
            return None
        letter, digits, unit = self.tokens[end:end + 3]
        if (letter.is_latin_word and len(letter.text) <= 2 and digits.is_number and digits.glued
                and unit.glued and unit.text == "b"):
            return end + 3
        return None

    def _is_size_multiplier(self, index: int) -> bool:
        if index >= self.n:
            return False
        length, label = self.lexicon.multipliers.longest_at(self.tokens, index)
        return length > 0 and label == "billion"

    def _ends_cleanly(self, end: int) -> bool:
        """A name must not stop inside a number or a size: "llama 3" is not "llama 3.1", "qwen 7" not "qwen 72b"."""
        if end >= self.n:
            return True
        nxt = self.tokens[end]
        return not (nxt.glued and (nxt.is_number or self.tokens[end - 1].is_number and nxt.text in {"b", "m"}))

    def _preset_for(self, family: str, size_b: float, version: Optional[str] = None) -> Optional[str]:
        names, sizes, representative = _model_index(self.kb)
        named = self._preset_named(names, family, size_b, version)
        if named:
            return named
        candidates = [pid for pid, size in sizes.items() if size == size_b and pid.startswith(family)
                      and (version is None or pid[len(family):].lstrip("-").startswith(version))]
        newest = self._newest_of(candidates, size_b)
        if newest:
            return newest
        if representative.get(size_b) in candidates:
            return representative[size_b]
        if candidates:
            return candidates[0]
        found = self._resolved_name(" ".join(w for w in (family, version, f"{size_b:g}b") if w))
        # "qwen4 14b" is not Qwen2.5 14B: a version we have no preset of makes the name unknown (no silent substitute)
        return found if found and (version is None or _version_matches(found, family, version)) else None

    def _resolved_name(self, name: str) -> Optional[str]:
        """_resolve_name, for at most MAX_NAMES_RESOLVED_PER_MESSAGE names of this message not yet cached."""
        if not _is_resolved(name, self.kb):
            if self.names_resolved >= MAX_NAMES_RESOLVED_PER_MESSAGE:
                return None
            self.names_resolved += 1
        return _resolve_name(name, self.kb)

    @staticmethod
    def _preset_named(names, family: str, size_b: float, version: Optional[str]) -> Optional[str]:
        size_word = f"{size_b:g}"
        wanted: List[Tuple[str, ...]] = [(family, version, size_word, "b")] if version else []
        wanted.append((family, size_word, "b"))
        for words in wanted:
            for name in names:
                if name.words == words and (version is None or _version_matches(name.preset_id, family, version)):
                    return name.preset_id
        return None

    def _newest_of(self, candidates, size_b: float) -> Optional[str]:
        """No (full) version typed: the newest release of that family in that size, the same rule as
        bot.advisor.knowledge.resolve_model; the answer says which version it assumed."""
        kb_families = {self.kb.model(pid).family for pid in candidates}
        if len(kb_families) != 1:
            return None
        from bot.advisor.knowledge import newest_release

        newest = newest_release(kb_families.pop(), size_b, self.kb, among=candidates)
        if newest is None:
            return None
        self.version_assumed[newest.preset.id] = newest.version_assumed
        return newest.preset.id

    def _settle_model(self, explicit_size: Optional[Tuple[int, float]]) -> None:
        """Combine a family word with a separately written size, and let a later size override a named model."""
        if self.kb is None:
            return
        model_id = cast(Optional[str], self.result.get("model_id"))  # a preset id, set by this reader
        if explicit_size is None:
            return
        position, size = explicit_size
        if model_id is None:
            for family, version in self.families:
                preset = self._preset_for(family, size, version)
                if preset:
                    self.result["model_id"] = preset
                    return
            self._note_unknown_name(position)
            return
        _, sizes, _ = _model_index(self.kb)
        if sizes.get(model_id) != size and self.model_at is not None and position > self.model_at:
            # "llama 3.1 8b ... 70b olsun": the same version in the new size
            self.result["model_id"] = self._preset_for(_family_of(model_id), size, self._typed_version(model_id))
            if self.result["model_id"] is None:
                del self.result["model_id"]

    def _typed_version(self, preset_id: str) -> Optional[str]:
        """The version the customer wrote for a preset they named ("llama 3.1 8b" -> "3.1"), None for "llama 8b"."""
        return None if preset_id in self.versionless else _version_of(preset_id)

    def _note_unknown_name(self, size_at: int) -> None:
        """A size written after a name we do not know ("qwen4 8b", "olmo 7b", "llama 5 70b"): keep the name as typed
        so the answer can say it was not recognised instead of claiming only a size was given."""
        size_end = next((end for first, end, _ in self.sizes if first == size_at), size_at + 1)
        if self.families:
            family = self.families[0][0]
            start = self.family_at.get(family, size_at)
            if start < size_at:
                self.result["model_query"] = self.span_text(start, size_end)
                self.result["model_family"] = family
                return
        known_words = self.lexicon.tr_words | self.lexicon.en_words | self.lexicon.fa_latin_words
        start = size_at
        k = size_at - 1
        while k >= 0 and size_at - k <= 4 and self._part_of_unknown_name(k, size_at, known_words):
            start = k
            k -= 1
        if start < size_at and any(t.is_latin_word for t in self.tokens[start:size_at]):
            self.result["model_query"] = self.span_text(start, size_end)

    def _part_of_unknown_name(self, k: int, size_at: int, known_words) -> bool:
        """Token ``k``, before a size at ``size_at``, can be a word of a model name we do not know."""
        token = self.tokens[k]
        digits_glued_after = k + 1 < size_at and self.tokens[k + 1].is_number and self.tokens[k + 1].glued
        letter_of_name = len(token.text) == 1 and digits_glued_after  # "r1" in "deepseek r1 distill 32b"
        if self._ends_unknown_name(k, letter_of_name):
            return False
        if token.is_number:
            # "olmo2": a version glued to the name; a separate number is something else
            return token.glued and k > 0 and self.tokens[k - 1].is_latin_word
        if not token.is_latin_word or token.text in known_words or token.text.startswith(self.lexicon.model_words):
            return False
        return len(token.text) >= 2 or digits_glued_after  # "r1" in "deepseek r1 distill" is a name, a lone "a" not

    def _ends_unknown_name(self, k: int, letter_of_name: bool) -> bool:
        token = self.tokens[k]
        return token.is_break or (self.tags[k] is not None and not letter_of_name) or (
            self.consumed[k] and not token.is_number)
