"""Model and card names as the knowledge base spells them, indexed for reading chat text: preset names by word,
family words in other scripts, case endings after a name, catalogue and owned cards, and the shared resolver's
answers kept per knowledge base."""
from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Dict, List, Optional, Set, Tuple

from bot.text.normalize import fold
from bot.text.numbers import Lexicon, PhraseTable, Token, tokenize



@dataclass(frozen=True)
class _ModelName:
    words: Tuple[str, ...]
    preset_id: str
    size_b: float


_MODEL_INDEXES: Dict[int, Tuple[object, List[_ModelName], Dict[str, float], Dict[float, str]]] = {}


def _model_index(kb) -> Tuple[List[_ModelName], Dict[str, float], Dict[float, str]]:
    cached = _MODEL_INDEXES.get(id(kb))
    if cached is not None and cached[0] is kb:
        return cached[1], cached[2], cached[3]
    names: List[_ModelName] = []
    sizes: Dict[str, float] = {}
    for preset in kb.models:
        sizes[preset.id] = float(preset.size_b)
        for name in [preset.id, preset.display, *preset.aliases]:
            words = tuple(t.text for t in tokenize(fold(name)))
            if words:
                names.append(_ModelName(words, preset.id, float(preset.size_b)))
    names.sort(key=lambda n: -len(n.words))  # longest name first: "llama 3.1 8b instruct" before "llama 3.1 8b"
    representative = {float(k): v for k, v in getattr(kb, "representative_by_size", {}).items()}
    _MODEL_INDEXES[id(kb)] = (kb, names, sizes, representative)
    return names, sizes, representative


_NAME_WORDS: Dict[int, Tuple[object, Tuple[frozenset, frozenset]]] = {}


def _name_words(kb) -> Tuple[frozenset, frozenset]:
    """Letter-only words of the preset names ("llama", "qwen", "scout", "mixtral"): a case ending glued to one of
    them ("llamayı", "scoutu") is dropped before names are matched."""
    if kb is None:
        return frozenset(), frozenset()
    cached = _NAME_WORDS.get(id(kb))
    if cached is not None and cached[0] is kb:
        return cached[1]
    words: Set[str] = set()
    after_digits: Set[str] = set()
    for preset in kb.models:
        for name in [preset.id, preset.display, *preset.aliases]:
            tokens = tokenize(fold(name))
            words.update(t.text for t in tokens if t.text.isalpha() and len(t.text) >= 3)
            after_digits.update(t.text for k, t in enumerate(tokens)
                                if k and t.glued and tokens[k - 1].is_number and not t.is_number)
    _NAME_WORDS[id(kb)] = (kb, (frozenset(words), frozenset(after_digits)))
    return _NAME_WORDS[id(kb)][1]


_SIZE_LETTERS = ("b", "m")
_BILLION_LETTERS = {"بی", "bn"}


def _strip_name_suffixes(tokens: List[Token], lexicon: Lexicon, name_words: Tuple[frozenset, frozenset]
                         ) -> List[Token]:
    """Drop the case endings and particles written after a model name, a size or a number (knowledge/lexicon.yml
    name_suffixes): "8byi" -> "8 b", "14b yi" -> "14 b", "qwen3ü" -> "qwen 3", "llamayı" -> "llama",
    "لامارو" -> "لاما". A suffix word before digits glued to it ("a100") is a name, not a suffix."""
    words, letters_after_digits = name_words
    stems = set(words) | set(lexicon.model_families)
    longest_stem = max(map(len, stems), default=0)
    out: List[Token] = []
    for index, token in enumerate(tokens):
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        starts_identifier = following is not None and following.glued and following.is_number
        if out and not token.is_number and not starts_identifier:
            kept = _after_name(token, out[-1], lexicon, stems, letters_after_digits)
            if kept is not token:
                out.extend([kept] if kept is not None else [])
                continue
        out.append(_stem_of(token, lexicon, stems, longest_stem))
    return out


def _after_name(token: Token, previous: Token, lexicon: Lexicon, stems: set, letters_after_digits: frozenset
                ) -> Optional[Token]:
    """A suffix after a number or a name: None (dropped), the size letter it was glued to, or the token itself."""
    text = token.text
    if token.glued and previous.is_number and text not in letters_after_digits:  # "17b 16e" stays
        if text in lexicon.name_suffixes or text in lexicon.distributive_suffixes:
            return None  # "qwen3ü", "4090ı", "800er token" (each)
        if text[0] in _SIZE_LETTERS and text[1:] in lexicon.name_suffixes:
            return replace(token, text=text[0], end=token.start + 1)  # "8byi" -> "8" "b"
    elif not token.glued and text in lexicon.separate_name_suffixes and (
            previous.is_number or previous.text in _SIZE_LETTERS and previous.glued
            or previous.text in _BILLION_LETTERS or previous.text in stems):
        return None  # "14b yi", "qwen3 8b ye", "llama yı", «۸ بی‌مون»
    return token


def _stem_of(token: Token, lexicon: Lexicon, stems: set, longest_stem: int) -> Token:
    """ "llamayi" -> "llama", "لامارو" -> "لاما": a name word with a case ending glued on."""
    text = token.text
    if token.is_number or text in stems or len(text) <= 3:
        return token
    # no stem is longer than the longest name word: a 4,000-letter word is not sliced 4,000 times
    for cut in range(min(len(text) - 1, longest_stem), 2, -1):
        if text[:cut] in stems and text[cut:] in lexicon.name_suffixes:
            return replace(token, text=text[:cut])
    return token


def _words(text: str) -> Tuple[str, ...]:
    return tuple(t.text for t in tokenize(fold(text)))


_CARD_NOISE = {"nvidia", "rtx", "geforce", "tesla", "gb", "pcie", "sxm"}
_CARD_TABLES: Dict[int, Tuple[object, Dict[Tuple[str, ...], str]]] = {}


def _catalogue_card(kb, tokens: List[Token]) -> Optional[str]:
    """The catalogue id (knowledge/gpus.yml) of a GPU name as tagged in a message ("a100", "rtx 4090", "4090")."""
    if kb is None:
        return None
    cached = _CARD_TABLES.get(id(kb))
    if cached is None or cached[0] is not kb:
        names: Dict[Tuple[str, ...], str] = {}
        for card in kb.gpus:
            for name in (card.id, card.name):
                words = _words(name)
                names.setdefault(words, card.id)
                names.setdefault(tuple(w for w in words if w not in _CARD_NOISE), card.id)
        cached = _CARD_TABLES[id(kb)] = (kb, names)
    words = tuple(t.text for t in tokens)
    return cached[1].get(words) or cached[1].get(tuple(w for w in words if w not in _CARD_NOISE))


_OWN_GPU_TABLES: Dict[int, Tuple[object, Optional[Tuple[PhraseTable, frozenset]]]] = {}


def _own_gpu_entries(kb) -> List[dict]:
    """Cards customers own (knowledge/own_gpus.yml): from the knowledge base when it loads them, else from
    bot.advisor.own_gpus."""
    for attribute in ("own_gpus", "own_cards"):
        entries = getattr(kb, attribute, None)
        if entries:
            return [entry if isinstance(entry, dict) else entry.dict() for entry in entries]
    from bot.advisor.own_gpus import load_own_gpus

    return [card.dict() for card in load_own_gpus()]


_STRONG_OWNED: Dict[int, Tuple[object, frozenset]] = {}


def _strong_owned_ids(kb) -> frozenset:
    """The own cards (knowledge/own_gpus.yml ``catalogue: true``) that are also rented here: data-centre cards."""
    cached = _STRONG_OWNED.get(id(kb))
    if cached is None or cached[0] is not kb:
        ids = frozenset(entry["id"] for entry in _own_gpu_entries(kb) if entry.get("catalogue"))
        cached = _STRONG_OWNED[id(kb)] = (kb, ids)
    return cached[1]


def _own_gpu_table(kb) -> Optional[Tuple[PhraseTable, frozenset]]:
    """Phrases naming an owned card -> its id, and the ids that are also catalogue cards (those need "I have")."""
    cached = _OWN_GPU_TABLES.get(id(kb))
    if cached is not None and cached[0] is kb:
        return cached[1]
    entries = _own_gpu_entries(kb)
    table, catalogue = PhraseTable(), set()
    catalogue_names = {_words(name) for card in (kb.gpus if kb is not None else []) for name in (card.id, card.name)}
    for entry in entries:
        names = [entry["id"], entry.get("name") or entry.get("display") or "", *(entry.get("aliases") or [])]
        for name in names:
            if name and _words(str(name)):
                table.add(str(name), entry["id"])
                if _words(str(name)) in catalogue_names:
                    catalogue.add(entry["id"])
    result = (table, frozenset(catalogue)) if entries else None
    _OWN_GPU_TABLES[id(kb)] = (kb, result)
    return result


# Names already resolved, per knowledge base: resolve_model takes about 10 ms for a name no preset has (it scores
# the name against every preset), and a long message repeating model names asked it again for every repeat: the
# estimate form's validation, which runs inside Rasa, of a 4,000-character message of job words took 498 ms
# without this cache and 258 ms with it (bench/bench_long_message.py). Bounded: the names come from what customers
# type.
_RESOLVED: "OrderedDict[Tuple[int, str], Tuple[object, Optional[str]]]" = OrderedDict()
_RESOLVED_MAX = 2048
# Names not in that cache one message may send to the resolver: a message of 500 made-up names ("qwen 101b qwen
# 102b ...") cost 500 look-ups of 10-19 ms each before (issue 20 audit); past eight the rest are unknown names, as
# they would be anyway (no preset has them); no sentence of the training or test data sends more than one.
MAX_NAMES_RESOLVED_PER_MESSAGE = 8


def _is_resolved(name: str, kb) -> bool:
    """The resolver's answer for this name is in the cache (asking again costs nothing)."""
    cached = _RESOLVED.get((id(kb), name))
    return cached is not None and cached[0] is kb


def _resolve_name(name: str, kb) -> Optional[str]:
    """The shared resolver's matching (bot.advisor.knowledge.match_model: resolve_model, also used by the CLI and
    the form, without the suggestions it works out for an unknown name) for a name the phrase index did not match
    exactly; a bare size does not count as a name here."""
    from bot.advisor.knowledge import InputError, match_model

    key = (id(kb), name)
    cached = _RESOLVED.get(key)
    if cached is not None and cached[0] is kb:
        return cached[1]
    try:
        resolved = match_model(name, kb)
        found = None if resolved is None or resolved.by_size else resolved.preset.id
    except (InputError, ValueError):
        found = None
    _RESOLVED[key] = (kb, found)
    while len(_RESOLVED) > _RESOLVED_MAX:
        _RESOLVED.popitem(last=False)
    return found


def _version_matches(preset_id: str, family: str, version: str) -> bool:
    """ "llama-3.1-8b" is a Llama 3 and a Llama 3.1, not a Llama 3.2 or 4."""
    rest = preset_id[len(family):].lstrip("-") if preset_id.startswith(family) else preset_id
    version = version.replace(",", ".")
    return rest == version or rest.startswith(version + "-") or rest.startswith(version + ".") \
        or (rest.startswith(version) and not rest[len(version):len(version) + 1].isdigit())


def _version_of(preset_id: str) -> Optional[str]:
    """The version in a preset id: "llama-3.1-8b" -> "3.1", "qwen2.5-7b" -> "2.5", "mistral-7b" -> None."""
    rest = preset_id[len(_family_of(preset_id)):].lstrip("-")
    head = rest.split("-")[0]
    return head if re.fullmatch(r"\d+(?:\.\d+)?", head) else None


def _family_of(preset_id: str) -> str:
    """The family word of a preset id: "llama-3.1-8b" -> "llama", "qwen2.5-7b" -> "qwen"."""
    return preset_id.split("-")[0].rstrip("0123456789.")


_FIRST_WORD_INDEXES: Dict[int, Tuple[object, Dict[str, List[_ModelName]]]] = {}


def _names_by_first_word(kb, names: List[_ModelName]) -> Dict[str, List[_ModelName]]:
    """The model names by their first word, longest first (a message is scanned word by word)."""
    cached = _FIRST_WORD_INDEXES.get(id(kb))
    if cached is not None and cached[0] is kb:
        return cached[1]
    index: Dict[str, List[_ModelName]] = {}
    for name in names:  # already longest first
        index.setdefault(name.words[0], []).append(name)
    _FIRST_WORD_INDEXES[id(kb)] = (kb, index)
    return index


_FAMILY_WORD_MAPS: Dict[int, Tuple[object, Dict[str, str]]] = {}


def _kb_family_words(kb) -> Dict[str, str]:
    """Family words of knowledge/models.yml in other scripts ("گما" -> "gemma"), for a family named by one word."""
    cached = _FAMILY_WORD_MAPS.get(id(kb))
    if cached is not None and cached[0] is kb:
        return cached[1]
    mapping: Dict[str, str] = {}
    for family_id, family in (getattr(kb, "families", None) or {}).items():
        if not family_id.isalpha():
            continue
        for word in family.words:
            folded = " ".join(t.text for t in tokenize(fold(word)))
            if folded and not folded.isascii() and " " not in folded:
                mapping[folded] = family_id
    _FAMILY_WORD_MAPS[id(kb)] = (kb, mapping)
    return mapping


def _default_kb():
    from bot.advisor.knowledge import load_knowledge

    return load_knowledge()


# ---------------------------------------------------------------------------------------------- quantities

