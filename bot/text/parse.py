"""Deterministic reading of the values a user types: model, size, method, sequence length, budget, data volume.

``parse_values(text, kb=None, expected=None)`` works on raw chat text in Persian, Turkish or English (it folds
the text itself, see bot/text/normalize.py) and never guesses: a number whose meaning it cannot tell from a unit, a
keyword before it, or the slot the bot just asked for (``expected``) is reported in ``ambiguous`` and nothing
else. Word lists are data (knowledge/lexicon.yml); model names come from the knowledge base (knowledge/models.yml).

How a number is read:
  * a unit after it decides: "2048 token" (sequence length), "20M token" / "۲۰ میلیون توکن" (total tokens),
    "ortalama 600 token" (average tokens per example), "5000 örnek" (examples), "3 epoch", "۴ تا کارت" (GPUs),
    "50$" / "$50" / "۵۰ دلار" (budget in USD); TL/lira/₺, تومان/ریال and euro amounts are *not* USD and only set
    ``currency_note``; GB, hours, %, bits, LoRA rank, batch size are understood and ignored;
  * a billion multiplier without a token unit is a model size: "7B", "هفت میلیارد", "yetmiş milyarlık";
  * a keyword before it: "context 4096", "bütçem 100", "بودجه ۵۰";
  * otherwise the slot the bot asked for (``expected``), then the one safe guess: a power of two from 512 to
    131072 (or 4k, 8k ...) is a sequence length - no model size, budget or GPU count looks like that;
  * "4k" / "4 bin" / "۴ هزار" as a sequence length means 4096 (context sizes are powers of two); as a count of
    examples it means 4000;
  * a range ("50-100 dolar", "۵۰ تا ۱۰۰ دلار") gives its upper end; alternatives ("8 veya 16 GPU") leave the first
    one ambiguous;
  * a dollar amount next to "per hour" ("saatlik 2 dolar") is a price, not a budget: ambiguous;
  * when a slot is given twice the later value wins ("llama 8b değil, 70b olsun").

Model names: the longest id, display name or alias of a preset found in the text; a family word ("llama", "لاما",
"qwen") plus a separately written size ("لاما ۸ میلیارد") picks the preset of that family and size. ``model_size_b``
is set with ``model_id`` (the preset's size).
"""
from __future__ import annotations

import math
import re
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Dict, List, Literal, Optional, Tuple

from pydantic import BaseModel

from bot.text.normalize import fold
from bot.text.numbers import Lexicon, PhraseTable, Token, apply_rewrites, load_lexicon, parse_number, tokenize

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
        return {k: v for k, v in self.dict().items() if v is not None and k != "ambiguous"}


# ---------------------------------------------------------------------------------------------- model names


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
    words, after_digits = set(), set()
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
    families = lexicon.model_families
    name_words, name_letters_after_digits = name_words
    stems = set(name_words) | set(families)
    out: List[Token] = []
    for index, token in enumerate(tokens):
        text = token.text
        previous = out[-1] if out else None
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        starts_identifier = following is not None and following.glued and following.is_number
        if previous is not None and not token.is_number and not starts_identifier:
            if token.glued and previous.is_number and text not in name_letters_after_digits:  # "17b 16e"
                if text in lexicon.name_suffixes:
                    continue  # "qwen3ü", "4090ı"
                if text[0] in _SIZE_LETTERS and text[1:] in lexicon.name_suffixes:
                    out.append(replace(token, text=text[0], end=token.start + 1))  # "8byi" -> "8" "b"
                    continue
            elif not token.glued and text in lexicon.separate_name_suffixes and (
                    previous.is_number or previous.text in _SIZE_LETTERS and previous.glued
                    or previous.text in _BILLION_LETTERS or previous.text in stems):
                continue  # "14b yi", "qwen3 8b ye", "llama yı", «۸ بی‌مون»
        if not token.is_number and text not in stems and len(text) > 3:
            for cut in range(len(text) - 1, 2, -1):
                if text[:cut] in stems and text[cut:] in lexicon.name_suffixes:
                    token = replace(token, text=text[:cut])  # "llamayi" -> "llama", "لامارو" -> "لاما"
                    break
        out.append(token)
    return out


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


OWN_GPUS_FILE = "own_gpus.yml"
_OWN_GPU_TABLES: Dict[int, Tuple[object, Optional[Tuple[PhraseTable, frozenset]]]] = {}


def _own_gpu_entries(kb) -> List[dict]:
    """Cards customers own (knowledge/own_gpus.yml): from the knowledge base when it loads them, else read here;
    an empty list while the file does not exist."""
    for attribute in ("own_gpus", "own_cards"):
        entries = getattr(kb, attribute, None)
        if entries:
            return [entry if isinstance(entry, dict) else entry.dict() for entry in entries]
    try:
        from bot.advisor.own_gpus import load_own_gpus
    except ImportError:
        load_own_gpus = None
    if load_own_gpus is not None:
        return [card.dict() for card in load_own_gpus()]
    from bot.text.numbers import LEXICON_PATH

    path = LEXICON_PATH.parent / OWN_GPUS_FILE
    if not path.exists():
        return []
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if isinstance(data, dict):
        data = data.get("cards") or data.get("gpus") or data.get("own_gpus") or []
    return [entry for entry in data if isinstance(entry, dict) and entry.get("id")]


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


def _resolve_name(name: str, kb) -> Optional[str]:
    """The shared resolver (bot.advisor.knowledge.resolve_model, also used by the CLI and the form) for a name the
    phrase index did not match exactly; a bare size does not count as a name here."""
    from bot.advisor.knowledge import InputError, resolve_model

    key = (id(kb), name)
    cached = _RESOLVED.get(key)
    if cached is not None and cached[0] is kb:
        return cached[1]
    try:
        resolved = resolve_model(name, kb)
        found = None if resolved.by_size else resolved.preset.id
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


def _split_gpu_count(folded: str) -> str:
    """ "8xh100" -> "8 x h100": the letter run "xh" would otherwise hide both the counter and the GPU name."""
    folded = _EXPERTS_TIMES_SIZE_RE.sub(r"\1x\2b", folded)
    return _COUNT_TIMES_NAME_RE.sub(r"\1 x ", folded)


class _Parser:
    def __init__(self, text: str, kb, expected: Optional[str], lexicon: Lexicon):
        self.lexicon = lexicon
        self.kb = kb
        self.expected = SLOT_ALIASES.get(expected, expected) if expected else None
        self.folded = _split_gpu_count(fold(text))
        tokens = _strip_name_suffixes(apply_rewrites(tokenize(self.folded), lexicon), lexicon, _name_words(kb))
        families = {**_kb_family_words(kb), **lexicon.model_families}
        self.tokens: List[Token] = [replace(t, text=families.get(t.text, t.text)) for t in tokens]
        self.n = len(self.tokens)
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

    # -- model names --------------------------------------------------------------------------------------

    def find_model(self) -> None:
        if self.kb is None:
            return
        names, sizes, _ = _model_index(self.kb)
        # "۲۰ بی" is "20b" in a name, as it is as a size
        texts = ["b" if t.text in _BILLION_LETTERS and k and self.tokens[k - 1].is_number else t.text
                 for k, t in enumerate(self.tokens)]
        by_first = _names_by_first_word(self.kb, names)
        i = 0
        while i < self.n:
            for name in by_first.get(texts[i], ()):
                length = len(name.words)
                if tuple(texts[i:i + length]) == name.words and self._ends_cleanly(i + length):
                    if len(name.words) == 1 and len(name.words[0]) <= 2 and self.tokens[i].glued:
                        continue  # "yi" glued to something is not the model Yi
                    variant_end = self._unknown_variant_end(i + length)
                    if variant_end:
                        # "gemma4 e4b", "qwen3 a7b": a variant of that name we have no preset of - not the
                        # preset the first words name (no silent substitute); the resolver offers a stand-in
                        self.result.update(model_query=self.span_text(i, variant_end),
                                           model_family=_family_of(name.preset_id))
                        for k in range(i, variant_end):
                            self.consumed[k] = True
                        i = variant_end
                        break
                    self.result["model_id"] = name.preset_id
                    self.result["model_size_b"] = name.size_b
                    if len(name.words) == 3 and name.words[2] == "b" and self.tokens[i + 1].is_number:
                        self.versionless.add(name.preset_id)  # "qwen 7b": an alias without a version
                    self.model_at = i
                    self.name_hits.append((i, i + length, name.preset_id))
                    for k in range(i, i + length):
                        self.consumed[k] = True
                    i += length
                    break
            else:
                i += 1
        family_words = set(self.lexicon.model_families.values())
        for k, token in enumerate(self.tokens):
            if token.text not in family_words or self.consumed[k]:
                continue
            version = None
            if k + 1 < self.n and self.tokens[k + 1].is_number and self._is_size_multiplier(k + 2):
                # "llama 8b", "qwen 14B'yi": a family and a size read as one name (the newest release of that size)
                number = parse_number(self.tokens[k + 1].text)[0]
                preset = self._preset_for(token.text, number)
                if preset:
                    end = k + 2 + self.lexicon.multipliers.longest_at(self.tokens, k + 2)[0]
                    if "model_id" not in self.result:
                        self.result["model_id"], self.result["model_size_b"] = preset, float(number)
                        self.model_at = k
                    self.versionless.add(preset)
                    self.name_hits.append((k, end, preset))
                    for j in range(k, end):
                        self.consumed[j] = True
                    continue
            if k + 1 < self.n and self.tokens[k + 1].is_number and not self._is_size_multiplier(k + 2):
                number = parse_number(self.tokens[k + 1].text)[0]
                preset = self._preset_for(token.text, number) if number >= MIN_BARE_FAMILY_SIZE_B else None
                self.consumed[k + 1] = True
                if preset and "model_id" not in self.result:
                    # "llama 8", "qwen 14": the size of a preset of that family, written without the B
                    self.result["model_id"], self.result["model_size_b"] = preset, number
                    self.versionless.add(preset)
                    self.model_at = k
                    continue
                version = self.tokens[k + 1].text  # "llama 3.1 ...", "qwen2.5 ...": a version, not a value
            self.families.append((token.text, version))
            self.family_at.setdefault(token.text, k)

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
        size_word = f"{size_b:g}"
        wanted = [(family, version, size_word, "b")] if version else []
        wanted.append((family, size_word, "b"))
        for words in wanted:
            for name in names:
                if name.words == words and (version is None or _version_matches(name.preset_id, family, version)):
                    return name.preset_id
        candidates = [pid for pid, size in sizes.items() if size == size_b and pid.startswith(family)
                      and (version is None or pid[len(family):].lstrip("-").startswith(version))]
        kb_families = {self.kb.model(pid).family for pid in candidates}
        if len(kb_families) == 1:
            # no (full) version typed: the newest release of that family in that size, the same rule as
            # bot.advisor.knowledge.resolve_model; the answer says which version it assumed
            from bot.advisor.knowledge import newest_release

            newest = newest_release(kb_families.pop(), size_b, self.kb, among=candidates)
            if newest is not None:
                self.version_assumed[newest.preset.id] = newest.version_assumed
                return newest.preset.id
        if representative.get(size_b) in candidates:
            return representative[size_b]
        if candidates:
            return candidates[0]
        found = _resolve_name(" ".join(w for w in (family, version, f"{size_b:g}b") if w), self.kb)
        # "qwen4 14b" is not Qwen2.5 14B: a version we have no preset of makes the name unknown (no silent substitute)
        return found if found and (version is None or _version_matches(found, family, version)) else None

    # -- phrases ------------------------------------------------------------------------------------------

    def tag_phrases(self) -> None:
        tables = _tables(self.lexicon)
        i = 0
        while i < self.n:
            if self.consumed[i]:
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
            for k in range(q.first, q.unit_end if q.unit_end is not None else q.end):
                self.consumed[k] = True
            quantities.append(q)
            i = max(q.end, q.unit_end or 0, i + 1)
        return quantities

    def _read_multipliers(self, q: _Quantity) -> None:
        j = q.end
        while j < self.n and self.is_tagged(j, "multiplier"):
            label = self.tags[j].label
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
        return k < self.n and self.tags[k] is not None and self.tags[k].category == "unit"

    def _read_unit(self, q: _Quantity) -> None:
        if self._is_range_low(q):
            q.unit = "range_low"  # the upper end, read next with its unit, is what counts
            return
        j = q.end
        while j < self.n and self.is_tagged(j, "counter"):
            q.counter = True
            j += 1
        tag = self.tag(j)
        if tag is not None and tag.category == "unit":
            q.unit, q.unit_end = tag.label, tag.end
        elif tag is not None and tag.category == "gpu":
            q.unit, q.unit_end = "gpus", tag.end
            if q.weak and not q.counter:
                q.unit = "skip_weak"  # "on A100" is English "on", "bir A100" just "an A100"
        elif tag is not None and tag.category == "keyword" and tag.label == "seq_len":
            q.unit, q.unit_end = "seq_len", tag.end  # "4096 context", "4k bağlam"
        before = self.tag(q.first - 1)
        if q.unit is None and q.first > 0 and self.tokens[q.first - 1].text == "%":
            q.unit = "ignore"  # "%20"
        elif q.unit is None and before is not None and before.category == "unit" and before.label in (
                "usd", "try", "toman", "eur") and not self.tokens[q.first - 1].text.isalpha():
            q.unit = before.label  # "$50", "₺500"
        elif q.unit is None and before is not None and before.category == "counter" and self.tokens[
                q.first - 1].text in ("x", "×"):
            named = self.tag(before.start - 1)
            if named is not None and (named.category == "gpu" or named.label == "gpus"):
                q.unit = "gpus"  # "A100 x 2", "GPU x 4"
        elif q.unit is None and q.counter and before is not None and (
                before.category == "gpu" or before.label == "gpus"):
            q.unit = "gpus"  # "H100 2 tane", "A100 ۲ تا"
        q.keyword = self._keyword_before(q.first)
        j = q.unit_end
        if q.unit == "usd" and j is not None and j + 1 < self.n and self.tokens[j].text in self.lexicon.connectors \
                and self.lexicon.number_words.get(self.tokens[j + 1].text) == 0.5:
            q.value += 0.5  # "یه دلار و نیم": a dollar and a half
            q.unit_end = j + 2
        if q.unit == "tokens":
            keywords = self._keywords_before(q.first)
            q.per_example = self._per_example_after(q.unit_end) or "avg_tokens" in keywords
            if "total_tokens" in keywords:
                q.keyword = "total_tokens"

    def _per_example_after(self, index: int) -> bool:
        for k in range(index, min(index + 3, self.n)):
            tag = self.tags[k]
            if self.tokens[k].is_break or self.tokens[k].is_number:
                return False  # "4096 token 5000 örnek ortalama 700 token": "ortalama" is the next number's
            if tag is not None and tag.category == "keyword" and tag.label in ("per_example", "avg_tokens"):
                # "600 token ortalama" is this number's; "4096 توکن و میانگین طول نمونه‌ها ۶۰۰ توکن" the next one's
                return tag.label == "per_example" or not self._number_within(tag.end, 4)
        return False

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
        while k >= 0 and steps < 3:
            token, tag = self.tokens[k], self.tags[k]
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

    # -- meaning of one quantity --------------------------------------------------------------------------

    def classify(self, q: _Quantity, expected: Optional[str]) -> Tuple[str, object]:
        unit, value = q.unit, q.absolute
        if not math.isfinite(value) or value > MAX_READABLE_NUMBER:
            # 5,000 digits is no value anyone means: asked about like any unclear number, never computed with
            return ("skip", None) if unit in ("skip_weak", "range_low") else ("ambiguous", _short_number(q.raw))
        if unit in ("skip_weak", "range_low"):
            return "skip", None
        if q.weak and not q.counter and unit in (None, "examples", "params", "ignore"):
            if not (unit is None and expected is not None and self._is_whole_answer(q)):
                return "skip", None  # "bir örnek" is "an example", "یک مدل" "a model", "نه" is "no"
        if unit in ("try", "toman", "eur"):
            return "currency_note", unit
        if unit == "usd":
            return ("hourly_cap", value) if self._hourly_near(q) else ("budget_usd", value)
        if unit == "ignore" or q.keyword == "ignore" and q.scale is None and unit is None:
            return "skip", None
        if unit == "tokens":
            if q.keyword in ("avg_tokens", "per_example") or q.per_example:
                return "avg_tokens", int(round(value))
            if q.keyword == "total_tokens" or q.scale is not None or value > MAX_PLAUSIBLE_SEQ_LEN:
                return "total_tokens", int(round(value))
            return "seq_len", _seq_len_value(q)
        if unit == "seq_len":
            return "seq_len", _seq_len_value(q)
        if unit == "examples":
            return "examples", int(round(value))
        if unit == "epochs":
            return "epochs", q.value
        if unit == "gpus":
            return "gpus", int(round(value))
        if q.scale == "billion":
            return "model_size_b", q.value
        if q.scale == "million" and (unit == "params" or unit is None and self._model_word_near(q)):
            return "model_size_b", q.value / 1000  # "500M parameters", "مدل ۵۰۰ میلیونی" = 0.5B
        if unit == "params":
            return ("model_size_b", value / 1e9) if value >= 1e8 else ("ambiguous", q.raw)
        keyword = q.keyword
        if keyword in ("seq_len", "examples", "epochs", "gpus", "avg_tokens", "total_tokens"):
            return keyword, _seq_len_value(q) if keyword == "seq_len" else value
        if keyword == "budget_usd":
            return ("budget_usd", value) if value < MAX_UNMARKED_BUDGET_USD else ("ambiguous", q.raw)
        if keyword == "per_example":
            return "avg_tokens", value
        typical_length = q.scale is None and (
            _is_power_of_two(value) and POWER_OF_TWO_SEQ_RANGE[0] <= value <= POWER_OF_TWO_SEQ_RANGE[1]
            or q.kilo and _seq_len_value(q) != int(value))
        # The asked slot decides a bare number only when a number can answer it: after the method question
        # "qlora, 2048" is the method and a sequence length; nor is 2048 a model size (none is near 512B-131072B
        # and a power of two) when the model was asked.
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
            if length and start + length <= q.first and all(
                    self.lexicon.hourly_reach_words.any_at(self.tokens, k) for k in range(start + length, q.first)):
                return True
        return False

    def _is_whole_answer(self, q: _Quantity) -> bool:
        """The message is just this number ("yüz", "bir", "هشت"), so it answers the question the bot asked."""
        content = [t for t in self.tokens if not t.is_break]
        words = {t.text for t in self.tokens[q.first:q.end]}
        return len(content) == q.end - q.first and not words & self.lexicon.never_alone_numbers

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

    def run(self) -> ParsedValues:
        self.find_model()
        self.tag_phrases()
        self._find_own_gpu()
        quantities = self.find_quantities()
        expected_left = self.expected
        explicit_size: Optional[Tuple[int, float]] = None
        for q in quantities:
            slot, value = self.classify(q, expected_left)
            if q.decimal is not None and slot not in ("skip", "ambiguous", "currency_note") and not (
                    self._valid(slot, value) and self._plausible(slot, value)):
                as_decimal = replace(q, value=q.decimal, decimal=None)
                decimal_slot, decimal_value = self.classify(as_decimal, expected_left)
                if decimal_slot == slot and self._valid(slot, decimal_value):
                    value = decimal_value
            if slot == "skip":
                continue
            if slot == "ambiguous":
                self.ambiguous.append(str(value))
                continue
            if not self._valid(slot, value):
                self.ambiguous.append(q.raw)
                continue
            if slot == expected_left:
                expected_left = None  # only one bare number answers the question
            if slot == "model_size_b":
                explicit_size = (q.first, float(value))
            self.result[slot] = value
            if slot == "model_size_b":
                self.sizes.append((q.first, q.end, float(value)))
            if slot in ("budget_usd", "hourly_cap"):
                self.money_at = q
        self._settle_model(explicit_size)
        self._find_method()
        if any(tag is not None and tag.category == "unlimited" for tag in self.tags) or (
                self.expected == "budget_usd" and self._whole_message_is(self.lexicon.unlimited_answers)):
            self.result["budget_unlimited"] = True
        self._read_vat_and_period()
        self._find_comparison()
        if self.version_assumed.get(self.result.get("model_id")):
            self.result["model_version_assumed"] = True
        values = {k: self._typed(k, v) for k, v in self.result.items()}
        return ParsedValues(ambiguous=self.ambiguous, **values)

    # -- hourly cap, budget period, own card, comparisons --------------------------------------------------

    def _read_vat_and_period(self) -> None:
        if "hourly_cap" in self.result:
            for k in range(self.n):
                length, label = self.lexicon.vat.longest_at(self.tokens, k)
                if length:
                    self.result["hourly_cap_vat"] = label == "included"
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
        k = 0
        while k < self.n:
            length, card_id = table.longest_at(self.tokens, k) if not self.consumed[k] else (0, None)
            if not length:
                k += 1
                continue
            if owned or card_id not in catalogue:
                self.result.setdefault("own_gpu", card_id)
            if self.tags[k] is None or self.tags[k].category != "gpu":
                for j in range(k, k + length):
                    self.consumed[j] = True  # "4060 ti 16gb", "rtx 5090": a name, its digits are no values
            k += length

    def _find_comparison(self) -> None:
        """Two options of one kind joined by "or" (or by "and" with a compare word): "LoRA mı QLoRA mı?",
        "H100 یا A100؟", "8B veya 14B", "llama 8b or qwen 7b". The compared slot is not filled from the message."""
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
        for start, end, pid in self.name_hits:
            options["model"].append((start, end, pid))
        family = _family_of(self.name_hits[0][2]) if self.name_hits else None
        version = self._typed_version(self.name_hits[0][2]) if self.name_hits else None
        for start, end, size in self.sizes:
            # "qwen2.5 7b mi 14b mi": the second size is of the named family and version when it has a preset of
            # that size, "qwen 7b mi 14b mi" the newest release of that size
            preset = (self._preset_for(family, size, version) or (self._preset_for(family, size) if version is None
                                                                    else None)) if family else None
            options["model"].append((start, end, preset or f"{size:g}b"))
        has_compare_word = any(self.lexicon.compare_words.any_at(self.tokens, k) for k in range(self.n))
        for kind in ("method", "gpu", "model"):
            if kind == "method" and self.method_measured:
                continue
            found = sorted(options[kind])
            for (a_start, a_end, a), (b_start, _, b) in zip(found, found[1:]):
                if a == b:
                    continue
                between = {t.text for t in self.tokens[a_end:b_start] if not t.is_break}
                if not between or len(between) > 4:
                    continue
                if between & self.lexicon.compare_or or (between & self.lexicon.compare_and and has_compare_word):
                    self.result["compare"] = {"kind": kind, "options": [a, b]}
                    if kind == "method":
                        self.result.pop("method", None)
                    elif kind == "model":
                        for slot in ("model_id", "model_size_b", "model_query", "model_family"):
                            self.result.pop(slot, None)
                    return

    def _whole_message_is(self, table) -> bool:
        content = [t for t in self.tokens if not t.is_break]
        length, _ = table.longest_at(content, 0) if content else (0, None)
        return bool(content) and length == len(content)

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

    def _settle_model(self, explicit_size: Optional[Tuple[int, float]]) -> None:
        """Combine a family word with a separately written size, and let a later size override a named model."""
        if self.kb is None:
            return
        model_id = self.result.get("model_id")
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
        while k >= 0 and size_at - k <= 4:
            token = self.tokens[k]
            letter_of_name = len(token.text) == 1 and k + 1 < size_at and self.tokens[k + 1].is_number \
                and self.tokens[k + 1].glued  # "r1" in "deepseek r1 distill 32b"
            if token.is_break or (self.tags[k] is not None and not letter_of_name) or (
                    self.consumed[k] and not token.is_number):
                break
            if token.is_number:
                if not (token.glued and k > 0 and self.tokens[k - 1].is_latin_word):
                    break  # "olmo2": a version glued to the name; a separate number is something else
            elif not token.is_latin_word or token.text in known_words or token.text.startswith(
                    self.lexicon.model_words) or len(token.text) < 2 and not (
                    k + 1 < size_at and self.tokens[k + 1].is_number and self.tokens[k + 1].glued):
                break  # "r1" in "deepseek r1 distill" is part of a name, a lone "a" is not
            start = k
            k -= 1
        if start < size_at and any(t.is_latin_word for t in self.tokens[start:size_at]):
            self.result["model_query"] = self.span_text(start, size_end)

    def _find_method(self) -> None:
        named: List[_Tag] = []
        seen_starts = set()
        for tag in self.tags:
            if tag is None or tag.category != "method" or tag.start in seen_starts:
                continue
            seen_starts.add(tag.start)
            if tag.label == "full_weak" and not self._weak_full_supported(tag):
                continue
            named.append(tag)
        references = [(tag, marker) for tag in named for marker in [self._reference_marker(tag)] if marker]
        if references:
            # "LoRA ile eğitirsem kalite tam eğitime göre düşer mi?": the yardstick is no choice, and the other
            # method is one only when it is tied to the job (see knowledge/lexicon.yml, methods.reference_after).
            outside = set()
            for tag, (first, end) in references:
                outside.update(range(min(first, tag.start), max(end, tag.end)))
            named = [tag for tag in named if all(tag is not ref for ref, _ in references)
                     and self._tied_to_the_job(tag, outside)]
            # a method chosen for the job and measured against another is no "X or Y" question
            self.method_measured = bool(named)
        if named:
            label = named[-1].label
            self.result["method"] = {"full_strong": "full", "full_weak": "full"}.get(label, label)

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
        for k in range(max(0, tag.start - 3), min(self.n, tag.end + 3)):
            if not tag.start <= k < tag.end and self.lexicon.method_context.any_at(self.tokens, k):
                return True
        content = [t for t in self.tokens if not t.is_break]
        return len(content) <= 3


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
    parsed = _Parser(text, kb if kb is not None else _default_kb(), expected, lexicon or load_lexicon()).run() \
        if text.strip() else ParsedValues()
    if config is not None:
        parsed = parsed.copy(update=read_pasted_config(config))
    else:
        from bot.text.model_ids import read_hub_model

        parsed = parsed.copy(update=read_hub_model(text))
    from bot.text.stack_names import read_stack

    return parsed.copy(update={"stack": read_stack(text)}) if read_stack(text) else parsed


# Keys only a Hugging Face model config.json has; a JSON object with one of them is taken for a config.
CONFIG_MARKERS = ("model_type", "architectures", "num_hidden_layers", "hidden_size", "text_config",
                  "num_attention_heads", "vocab_size")
_SMART_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u00ab": '"', "\u00bb": '"',
                               "\u2018": "'", "\u2019": "'"})


def split_pasted_config(text: str) -> Tuple[str, Optional[object]]:
    """A config.json pasted into the chat: (the text around it, the JSON object), or (text, None).

    The object runs from the first "{" to the last "}"; chat apps turn quotes into typographic ones, which are put
    back first. An object that is not valid JSON but looks like a config is returned as the string "json" so the
    reply can say it could not be read."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0:
        return text, None
    if end <= start:
        # cut off before its closing brace (a message length limit): unreadable, and its numbers are no values
        return (text[:start], "json") if any(f'"{m}"' in text[start:] for m in CONFIG_MARKERS) else (text, None)
    body = text[start:end + 1]
    if not any(marker in body for marker in CONFIG_MARKERS):
        return text, None
    import json

    rest = text[:start] + " " + text[end + 1:]
    try:
        data = json.loads(body.translate(_SMART_QUOTES))
    except (ValueError, RecursionError):
        return rest, "json"
    return rest, data if isinstance(data, dict) else "json"


def read_pasted_config(config: object) -> Dict[str, object]:
    """ParsedValues fields from a pasted config: custom_arch (+ label and size), or config_error naming the missing
    key ("json" when it is not valid JSON)."""
    if not isinstance(config, dict):
        return {"config_error": "json"}
    try:
        from bot.advisor.hf_config import read_hf_config
    except ImportError:  # the reader is not installed in this build: treat the paste as unreadable
        return {"config_error": "json"}
    try:
        arch = read_hf_config(config)
    except Exception as error:  # the reader names what is missing; any other failure is "unreadable"
        return {"config_error": _missing_key(error)}
    data = arch.dict() if hasattr(arch, "dict") else dict(arch)
    name = config.get("_name_or_path") or (config.get("architectures") or [None])[0] or config.get("model_type")
    label = f"config.json ({str(name)[:60]})" if name else "config.json"
    values: Dict[str, object] = {"custom_arch": data, "custom_arch_label": label}
    params = data.get("params")
    if isinstance(params, (int, float)) and params > 0:
        values["model_size_b"] = round(float(params) / 1e9, 2)
    return values


def _missing_key(error: Exception) -> str:
    name = (getattr(error, "params", None) or {}).get("name")
    if isinstance(name, str) and name and name != "-":
        return name  # bot.advisor.hf_config names the key in its InputError
    for attribute in ("missing", "field"):
        value = getattr(error, attribute, None)
        if isinstance(value, str) and value:
            return value
    match = re.search(r"['\"`]([A-Za-z_][A-Za-z0-9_.]*)['\"`]", str(error))
    return match.group(1) if match else "json"
