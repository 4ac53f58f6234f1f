"""Which model a customer means: preset names as people type them, sizes, same-family stand-ins (Persian and
Turkish spellings included). Split from bot/advisor/knowledge.py, which re-exports :func:`resolve_model`,
:func:`family_of`, :func:`substitute_differences` and :func:`newest_release`."""
from __future__ import annotations

import difflib
import math
import re
from typing import Dict, Iterable, List, Optional, Tuple, Union

from bot.advisor.knowledge import (InputError, Knowledge, ModelPreset, ResolvedModel, UnknownModel, load_knowledge,
                                   release_key)

# Words that do not change which architecture is meant ("Llama-3.1-8B-Instruct" is the 8B shape).
_NOISE = {"instruct", "chat", "hf", "it", "base", "model", "meta", "v", "the", "pretrained", "sft", "pt", "bf16",
          "fp16", "unsloth", "bnb", "gguf", "awq", "gptq", "hub", "huggingface", "google", "microsoft", "mistralai",
          "meta-llama", "deepseek-ai", "openai-community", "qwen-team",
          # Persian object markers written onto or after a name ("Qwen3رو", "گما ۳ را")
          "رو", "را", "مدل"}
# Turkish case and derivation suffixes written after a size with a space or an apostrophe ("14b yi", "8B'lik"):
# they never start a model name, so "14b yi" is a 14B size and never the model Yi.
_TR_SUFFIXES = {"yi", "yı", "yu", "yü", "i", "ı", "u", "ü", "e", "a", "ye", "ya", "de", "da", "te", "ta", "le", "la",
                "ile", "nin", "nın", "in", "ın", "den", "dan", "ten", "tan", "lik", "lık", "luk", "lük", "lık"}
# "a3b"/"e16" style name parts (active parameters, expert count) are one token, never a size
_TOKEN = re.compile(r"(?<![^\W\d_])[ae]\d+(?:\.\d+)?b\b|\d+(?:\.\d+)?x\d+(?:\.\d+)?b|\d+(?:\.\d+)?[bmk]?|[^\W\d_]+")
_APOSTROPHE_SUFFIX = re.compile(r"(?<=[\w.])['’`][^\W\d_]+")
_DIGITS = str.maketrans("۰۱۲۳۴۵۶۷۸۹٠١٢٣٤٥٦٧٨٩", "01234567890123456789")
_BILLION_WORDS = {"b", "بی", "میلیارد", "milyar", "billion"}
_SIZE = re.compile(r"\d+(?:\.\d+)?b")
_FAMILY_WORDS: Dict[int, Tuple["Knowledge", Dict[str, str]]] = {}


def _family_words(kb: Optional["Knowledge"]) -> Dict[str, str]:
    """Persian-script (and other) family words -> the Latin family word used in preset names."""
    if kb is None:
        return {}
    cached = _FAMILY_WORDS.get(id(kb))
    if cached is not None and cached[0] is kb:
        return cached[1]
    mapping: Dict[str, str] = {}
    for family in kb.families.values():
        words = [w.replace("\u200c", "").lower() for w in family.words]
        latin = next((w for w in words if w.isascii()), words[0])
        for word in words:
            if not word.isascii():
                mapping[word] = latin
    _FAMILY_WORDS[id(kb)] = (kb, mapping)
    return mapping


def _tokens(text: str, kb: Optional["Knowledge"] = None) -> Tuple[str, ...]:
    text = text.translate(_DIGITS).replace("\u200c", "").replace("٫", ".").lower()
    text = _APOSTROPHE_SUFFIX.sub("", text)
    text = re.sub(r"(?<=\d),(?=\d\b)", ".", text)            # "qwen 3,5" -> 3.5 (a decimal comma)
    text = re.sub(r"(\d)\s*x\s*(\d)", r"\1x\2", text)          # "8 x 7b" -> "8x7b"
    raw = _TOKEN.findall(text.replace("_", " "))
    synonyms = _family_words(kb)
    tokens: List[str] = []
    skip_version = False
    for tok in raw:
        tok = synonyms.get(tok, tok)
        if skip_version and re.fullmatch(r"\d+(?:\.\d+)?", tok):
            skip_version = False  # "v0.1" -> drop the version number
            continue
        skip_version = tok == "v"
        if tok in _NOISE or re.fullmatch(r"\d+k", tok):  # "4k" is a context length, not a size
            continue
        if re.fullmatch(r"2[3-7](0[1-9]|1[0-2])", tok):  # release dates as YYMM: "-2503", "-2507"
            continue
        if tok in _BILLION_WORDS and tokens and re.fullmatch(r"\d+(?:\.\d+)?", tokens[-1]):
            tokens[-1] += "b"  # "8 b", "۸ بی" -> "8b"
            continue
        if tokens and _SIZE.fullmatch(tokens[-1]) and tok in _TR_SUFFIXES:
            continue  # "14b yi", "8B'lik"
        if tok.endswith("m") and tok[:-1].replace(".", "").isdigit():
            tok = f"{float(tok[:-1]) / 1000:g}b"  # "500m" -> "0.5b"
        if tokens and tokens[-1] in ("a", "e") and _SIZE.fullmatch(tok):
            tokens[-1] += tok  # "A 3B" (active parameters) is a name part, not the model's size
            continue
        tokens.append(tok)
    return tuple(tokens)


def _size_token(tokens: Tuple[str, ...]) -> Optional[float]:
    for tok in tokens:
        if _SIZE.fullmatch(tok):
            return float(tok[:-1])
    return None


_ALIAS_INDEXES: Dict[int, Tuple["Knowledge", Dict[Tuple[str, ...], str]]] = {}


def _alias_index(kb: "Knowledge") -> Dict[Tuple[str, ...], str]:
    cached = _ALIAS_INDEXES.get(id(kb))
    if cached is not None and cached[0] is kb:
        return cached[1]
    index: Dict[Tuple[str, ...], str] = {}
    for preset in kb.models:
        for name in [preset.id, preset.display, *preset.aliases]:
            index.setdefault(_tokens(name, kb), preset.id)
    _ALIAS_INDEXES[id(kb)] = (kb, index)
    return index


def _by_size(size_b: float, kb: Knowledge) -> ResolvedModel:
    if not (isinstance(size_b, (int, float)) and math.isfinite(size_b) and size_b > 0):
        raise InputError("size_b", "bad_size", f"model size must be a positive number of billions, got {size_b!r}")
    nearest = min(kb.representative_by_size, key=lambda s: (abs(math.log(s / size_b)), s))
    return ResolvedModel(preset=kb.model(kb.representative_by_size[nearest]), by_size=True,
                         requested_size_b=float(size_b))


def family_of(tokens: Tuple[str, ...], kb: Knowledge) -> Optional[str]:
    """The family a tokenised name belongs to (its first word that names a family), or None."""
    words = {}
    for fid, family in kb.families.items():
        for word in family.words:
            words[_tokens(word, kb)[0] if _tokens(word, kb) else word] = fid
    for tok in tokens:
        if tok in words:
            return words[tok]
    return None


def substitute_differences(preset: ModelPreset, kb: Knowledge) -> List[str]:
    """How an unrecognised model of ``preset``'s family may differ from the stand-in, as codes:

    version     a different release of the family (shapes may differ)
    vocab       the family's releases use different vocabularies (logits memory differs)
    moe         the family has Mixture-of-Experts releases (memory and speed differ a lot)
    attention   the family has releases with sliding-window or linear-attention layers
    """
    members = [p for p in kb.models if p.family == preset.family]
    codes = ["version"]
    if len({p.arch.vocab for p in members}) > 1:
        codes.append("vocab")
    if any(p.arch.moe for p in members):
        codes.append("moe")
    if len({p.arch.layer_pattern for p in members}) > 1:
        codes.append("attention")
    return codes


def _substitute(tokens: Tuple[str, ...], kb: Knowledge) -> Tuple[Optional[str], Optional[str], Optional[float]]:
    """(family, stand-in preset id, size) for a name that matched no preset: the newest dense preset of the same
    family nearest in size (a MoE stand-in only when the family has nothing else)."""
    family = family_of(tokens, kb)
    size = _size_token(tokens)
    if family is None:
        return None, None, size
    members = [p for p in kb.models if p.family == family]
    dense = [p for p in members if p.arch.moe is None] or members
    if size is None:
        return family, None, None
    order = {p.id: i for i, p in enumerate(kb.models)}
    best = min(dense, key=lambda p: (round(abs(math.log(p.size_b / size)), 3),
                                     tuple(-k for k in release_key(p.released)), -order[p.id]))
    return family, best.id, size


def newest_release(family: str, size_b: float, kb: Knowledge, among: Optional[Iterable[str]] = None
                   ) -> Optional[ResolvedModel]:
    """What a family and a size typed without a version mean ("qwen 14b", "llama 70b", "phi 14b"): the newest
    release of ``family`` in size ``size_b`` by ``released`` in knowledge/models.yml, only among the preset ids
    ``among`` when given (the presets whose names hold every word typed: "mistral small 24b" is not Magistral).

    ``version_assumed`` is True when several releases matched, so the answer names the version it took. The
    shared resolver and the chat parser (bot.text.parse) both decide with this function. None when no preset of
    that family has that size (a bare size goes to ``representative_by_size`` instead).
    """
    allowed = None if among is None else set(among)
    releases = [p for p in kb.models if p.family == family and p.size_b == size_b
                and (allowed is None or p.id in allowed)]
    if not releases:
        return None
    newest = max(releases, key=lambda p: release_key(p.released))
    return ResolvedModel(preset=newest, by_size=False, version_assumed=len(releases) > 1)


def resolve_model(query: Union[str, float, int], kb: Optional[Knowledge] = None, *,
                  allow_substitute: bool = False) -> ResolvedModel:
    """Find the preset a user means: a preset id, a name or alias as people type it, or a bare size in billions.

    A bare size maps to the representative preset of the nearest listed size (``by_size=True``). A family and a
    size without a version ("qwen 14b") map to the newest release of that family in that size
    (:func:`newest_release`, ``version_assumed`` when there are several). A name that
    matches no preset raises :class:`UnknownModel`; when it names a known family and a size, the error carries the
    same-family stand-in (``substitute``) and how it may differ (``differences``), and with
    ``allow_substitute=True`` that stand-in is returned instead (``unrecognised`` = the name, ``by_size=False``:
    the user did give a name). A name matching several presets equally well raises with the candidates.
    """
    kb = kb or load_knowledge()
    if isinstance(query, bool):
        raise UnknownModel(query, [])
    if isinstance(query, (int, float)):
        return _by_size(float(query), kb)
    text = str(query).strip()[:200]
    tokens = _tokens(text, kb)
    if not tokens:
        raise UnknownModel(query, _closest(text, kb))
    matched, candidates = _matched(tokens, kb)
    if matched is not None:
        return matched
    family, substitute, requested = (None, None, None) if candidates else _substitute(tokens, kb)
    if substitute is not None and allow_substitute:
        preset = kb.model(substitute)
        return ResolvedModel(preset=preset, by_size=False, requested_size_b=requested, unrecognised=text,
                             differences=substitute_differences(preset, kb))
    suggestions = candidates[:5] or _closest(text, kb)
    if substitute is not None:  # "qwen 15b": the family's newest release of the nearest size comes first
        suggestions = [substitute] + [pid for pid in suggestions if pid != substitute][:2]
    raise UnknownModel(query, suggestions, family=family, substitute=substitute,
                       requested_size_b=requested,
                       differences=substitute_differences(kb.model(substitute), kb) if substitute else [])


def match_model(query: str, kb: Optional[Knowledge] = None) -> Optional[ResolvedModel]:
    """resolve_model's answer when a preset matches the name, else None: only the matching half, without the
    suggestions and the same-family stand-in an unknown name costs (difflib over every preset name, 10-19 ms),
    for callers that throw those away (the chat parser, bot/text/parse)."""
    kb = kb or load_knowledge()
    tokens = _tokens(str(query).strip()[:200], kb)
    return _matched(tokens, kb)[0] if tokens else None


def _matched(tokens: Tuple[str, ...], kb: Knowledge) -> Tuple[Optional[ResolvedModel], List[str]]:
    """The preset the name's words match (None when none or several do) and the presets whose names hold every
    word (the candidates resolve_model suggests when it finds none)."""
    if len(tokens) == 1 and re.fullmatch(r"\d+(?:\.\d+)?b?", tokens[0]):
        return _by_size(float(tokens[0].rstrip("b")), kb), []
    index = _alias_index(kb)
    if tokens in index:
        return ResolvedModel(preset=kb.model(index[tokens]), by_size=False), []
    # Partial names ("llama 8b", "mistral"): every typed word appears in one preset's name.
    wanted = set(tokens)
    order = [p.id for p in kb.models]
    representatives = set(kb.representative_by_size.values())
    candidates = sorted({pid for key, pid in index.items() if wanted <= set(key)},
                        key=lambda pid: (pid not in representatives, order.index(pid)))
    if len(candidates) == 1:
        return ResolvedModel(preset=kb.model(candidates[0]), by_size=False), candidates
    size = _size_token(tokens)
    if candidates and size is not None:
        # A family and a size without a version: the newest release of that family in that size.
        family = family_of(tokens, kb)
        newest = newest_release(family, size, kb, among=candidates) if family else None
        if newest is not None:
            return newest, candidates
        representative = kb.representative_by_size.get(size)
        if representative in candidates:
            return ResolvedModel(preset=kb.model(representative), by_size=False), candidates
        same_size = [pid for pid in candidates if kb.model(pid).size_b == size]
        if len({kb.model(pid).arch.dict(exclude={"name"}).__repr__() for pid in same_size}) == 1:
            # same shape under two names
            return ResolvedModel(preset=kb.model(same_size[0]), by_size=False), candidates
    return None, candidates


def _closest(text: str, kb: Knowledge, limit: int = 3) -> List[str]:
    key = " ".join(_tokens(text, kb)) or text.lower()
    names: Dict[str, str] = {}
    for preset in kb.models:
        for name in [preset.id, preset.display, *preset.aliases]:
            names.setdefault(" ".join(_tokens(name, kb)), preset.id)
    suggestions: List[str] = []
    for match in difflib.get_close_matches(key, list(names), n=20, cutoff=0.4):
        if names[match] not in suggestions:
            suggestions.append(names[match])
    return suggestions[:limit]
