"""Word lists, tokens and numbers shared by the parser (bot/text/parse/) and the language detector (text/language.py).

The word lists live in knowledge/lexicon.yml; this module folds them exactly like user text
(bot.text.normalize.fold) and compiles them into phrase patterns. Pure Python, reads one YAML file once.
"""
from __future__ import annotations

import re
from itertools import islice
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from bot.text.normalize import fold

LEXICON_PATH = Path(__file__).resolve().parents[2] / "knowledge" / "lexicon.yml"

# Numbers (with "." or "," groups), runs of letters (any script), currency and a few symbols, and the sentence
# punctuation that ends a keyword's reach. Digits and letters are separate tokens: "70b" -> "70" "b", "a100" ->
# "a" "100", so model and GPU names tokenise the same however they are spaced or hyphenated.
_TOKEN_RE = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+|[$₺€£%×]|[,;?!:.]")
_BREAKS = set(",;?!:.")
# How many tokens of one message are read for its meaning (values, follow-ups, the intent's features). The longest
# of 3,545 real messages (data/nlu, the held-out and the studied blind sets) has 61 tokens; 256 is four times
# that, about 1,200 characters of ordinary Persian or Turkish. Past it, a 4,000-character message of 2,000 numbers
# cost the parser and the featurizers 145 ms of the one Rasa process on the 2-core machine (bench/bench_nlu_worst.py,
# issue 20: 50 ms); a value further on is asked for like any value not given. Privacy scans (masking, a refusal of
# contact) still read the whole message.
READ_TOKENS = 256


@dataclass(frozen=True)
class Token:
    text: str  # folded
    start: int  # offsets in the folded text
    end: int
    glued: bool  # no space or punctuation between the previous token and this one

    @property
    def is_number(self) -> bool:
        # Decimal digits only: "²", "⁴" and "①" are digits to str.isdigit() but not to the tokenizer's \d nor to
        # float(), so a token such as "²" reached parse_number, float() raised and the turn got no answer (issue
        # 20, finding 7). They are read as letters now: the message is answered like any word the bot cannot use.
        return self.text[0].isdecimal()

    @property
    def is_break(self) -> bool:
        return self.text in _BREAKS

    @property
    def is_latin_word(self) -> bool:
        return self.text[0].isascii() and self.text[0].isalpha()


def tokenize(folded: str, limit: Optional[int] = None) -> List[Token]:
    """The tokens of ``folded``; with ``limit``, only its first ``limit`` tokens (the text after them is not
    scanned)."""
    tokens: List[Token] = []
    previous_end = -1
    for match in islice(_TOKEN_RE.finditer(folded), limit):
        tokens.append(Token(match.group(), match.start(), match.end(), glued=match.start() == previous_end))
        previous_end = match.end()
    return tokens


def read_part(text: str) -> str:
    """``text`` up to the end of its READ_TOKENS-th token: the part of a message its meaning is read from."""
    last = None
    for last in islice(_TOKEN_RE.finditer(text), READ_TOKENS):
        pass
    return text[:last.end()] if last is not None else text


def parse_number(raw: str) -> List[float]:
    """The value(s) of a number token as people write them in fa/tr/en chats.

    "2048" -> 2048; "1.5" / "1,5" -> 1.5; "2.048" / "2,048" / "1.234.567" -> thousands groups (Turkish writes
    2.048 for two thousand forty-eight; a decimal with exactly three digits after a non-zero integer part is
    not how anyone writes a model size, a budget or a sequence length); "1.234,5" -> 1234.5; a list such as
    "8,16,32" gives several numbers.
    """
    separators = [ch for ch in raw if ch in ".,"]
    if not separators:
        return [float(raw)]
    groups = re.split(r"[.,]", raw)
    if len(set(separators)) == 2:
        return [float("".join(groups[:-1]) + "." + groups[-1])]
    if groups[0] != "0" and len(groups[0]) <= 3 and all(len(g) == 3 for g in groups[1:]):
        return [float("".join(groups))]
    if len(groups) == 2:
        return [float(groups[0] + "." + groups[1])]
    return [float(g) for g in groups]


# ---------------------------------------------------------------------------------------------- phrases


@dataclass(frozen=True)
class Pattern:
    """One word of a phrase: exact, or a prefix when written with a trailing "*"."""

    text: str
    prefix: bool

    def matches(self, token: Token) -> bool:
        text = token.text
        if text in _BREAKS:
            return False
        return text.startswith(self.text) if self.prefix else text == self.text


Phrase = Tuple[Pattern, ...]


def compile_phrase(words: Sequence[str] | str) -> Phrase:
    if isinstance(words, str):
        words = [words]
    patterns: List[Pattern] = []
    for word in words:
        word = str(word)
        prefix = word.endswith("*") and len(word) > 1
        pieces = [t.text for t in tokenize(fold(word[:-1] if prefix else word))]
        if not pieces:
            raise ValueError(f"lexicon entry {word!r} has no letters or digits")
        patterns.extend(Pattern(p, False) for p in pieces[:-1])
        patterns.append(Pattern(pieces[-1], prefix))
    return tuple(patterns)


def _rest_matches(tokens: Sequence[Token], index: int, phrase: Phrase) -> int:
    """``match_at`` for a phrase whose first word is known to match the token at ``index``."""
    if index + len(phrase) > len(tokens):
        return 0
    for offset in range(1, len(phrase)):
        if not phrase[offset].matches(tokens[index + offset]):
            return 0
    return len(phrase)


def match_at(tokens: Sequence[Token], index: int, phrase: Phrase) -> int:
    """Number of tokens ``phrase`` covers starting at ``index`` (0 when it does not match)."""
    if index + len(phrase) > len(tokens):
        return 0
    for offset, pattern in enumerate(phrase):
        if not pattern.matches(tokens[index + offset]):
            return 0
    return len(phrase)


class PhraseTable:
    """Labelled phrases; ``longest_at`` finds the longest one starting at a token.

    Phrases are indexed by their first word (exact words in a dict, prefixes by their first letter), so a
    lookup tries only the phrases that can start at that token.
    """

    def __init__(self) -> None:
        self.entries: List[Tuple[Phrase, str]] = []
        self._exact: Dict[str, List[Tuple[int, Phrase, str]]] = {}
        self._prefix: Dict[str, List[Tuple[int, Phrase, str]]] = {}

    def add(self, words, label: str) -> None:
        self.add_phrase(compile_phrase(words), label)

    def add_phrase(self, phrase: Phrase, label: str) -> None:
        order = len(self.entries)
        self.entries.append((phrase, label))
        first = phrase[0]
        index = self._prefix if first.prefix else self._exact
        key = first.text[0] if first.prefix else first.text
        index.setdefault(key, []).append((order, phrase, label))

    def longest_at(self, tokens: Sequence[Token], index: int) -> Tuple[int, Optional[str]]:
        # The parser asks every table at every token of a message (issue 20: up to 4,000 tokens): no list is built
        # per look-up, and a phrase whose first word cannot match is not tried.
        text = tokens[index].text
        if text in _BREAKS:
            return 0, None  # no pattern matches punctuation (Pattern.matches)
        best_len, best_order, best_label = 0, -1, None
        exact = self._exact.get(text, ())
        prefixed = [entry for entry in self._prefix.get(text[0], ()) if text.startswith(entry[1][0].text)]
        for candidates in (exact, prefixed):
            for order, phrase, label in candidates:
                length = _rest_matches(tokens, index, phrase)
                # the longest phrase wins; on equal length the one listed first (tables are filled in priority order)
                if length and (length > best_len or length == best_len and order < best_order):
                    best_len, best_order, best_label = length, order, label
        return best_len, best_label

    def any_at(self, tokens: Sequence[Token], index: int) -> bool:
        return self.longest_at(tokens, index)[0] > 0


# ---------------------------------------------------------------------------------------------- lexicon


@dataclass
class Lexicon:
    number_words: Dict[str, float]
    counted_number_words: Dict[str, float]  # "دوتا" = "دو تا": a number word with the counter glued on
    weak_number_words: set
    never_alone_numbers: set
    model_words: Tuple[str, ...]
    connectors: set
    multipliers: PhraseTable  # labels: thousand, million, billion
    counters: PhraseTable
    range_words: set
    approximate_words: set  # "20 bin kadar örnek": about, between a number and its unit
    units: PhraseTable  # labels: tokens, examples, epochs, gpus, params, usd, try, toman, eur, ignore
    keywords: PhraseTable  # labels: seq_len, budget_usd, ..., ignore, per_example
    methods: PhraseTable  # labels: qlora, lora, full_strong, full_weak
    method_context: PhraseTable
    full_weak_blockers_after: set
    full_weak_blockers_before: set
    method_reference_after: PhraseTable  # "tam eğitime göre": the method before it is a yardstick, not a choice
    method_reference_before: PhraseTable  # «نسبت به آموزش کامل», "compared with full training"
    unlimited: PhraseTable
    unlimited_answers: PhraseTable
    hourly: PhraseTable
    hourly_reach_words: PhraseTable
    vat: PhraseTable  # labels: included, excluded
    budget_period: PhraseTable  # labels: month, run, total
    name_suffixes: set
    separate_name_suffixes: set
    compare_or: set
    compare_and: set
    compare_words: PhraseTable
    own_card_words: PhraseTable
    model_families: Dict[str, str]
    gpu_names: PhraseTable
    rewrites: List[Tuple[Phrase, str]]
    tr_words: set
    tr_stems: Tuple[str, ...]
    tr_suffixes: Tuple[str, ...]
    en_words: set
    fa_latin_words: set
    en_stems: Tuple[str, ...]
    declines_contact: PhraseTable  # labels: refuse, here, cancel (answers to the handoff form's questions)
    # "600 tokenlik", «۱۰۲۴ توکنی», "examples of 600 tokens": a token count as an attribute of the examples
    attribute_unit_endings: Tuple[str, ...] = ()
    of_words: set = field(default_factory=set)
    own_catalogue_card_words: PhraseTable = field(default_factory=PhraseTable)
    # Finglish words no Turkish or English sentence has ("che", "chand", "mikham"): they outweigh a word Turkish
    # shares with Finglish ("karti", "saat")
    fa_latin_markers: set = field(default_factory=set)
    # Finglish pronoun endings glued to a noun ("kartetoon", "modelhatoon"): a long word ending in one is a marker
    fa_latin_marker_suffixes: Tuple[str, ...] = ()
    # glued to a number, the Turkish distributive ("800er token", "300şer örnek"): "each"
    distributive_suffixes: set = field(default_factory=set)
    abbreviations: set = field(default_factory=set)  # "ort.": its period ends no sentence
    length_limit_words: PhraseTable = field(default_factory=PhraseTable)  # "en fazla 2048 token" is a maximum
    # ``rewrites`` indexed by their first word (labels: the replacement), built by load_lexicon; apply_rewrites
    # builds it for a Lexicon made by hand.
    rewrite_table: Optional[PhraseTable] = None
    # "instead of": the phrase before (fa, en) or after (tr) what is given up (round 8)
    replaced_before: PhraseTable = field(default_factory=PhraseTable)
    replaced_after: PhraseTable = field(default_factory=PhraseTable)
    # a method not wanted: the phrase after ("LoRA değil") or before («نه LoRA») it (round 9)
    method_negated_after: PhraseTable = field(default_factory=PhraseTable)
    method_negated_before: PhraseTable = field(default_factory=PhraseTable)


def _folded_word(word) -> str:
    return " ".join(t.text for t in tokenize(fold(str(word))))


def _table(groups: Dict[str, Iterable], order: Iterable[str] | None = None) -> PhraseTable:
    table = PhraseTable()
    for label in order or groups:
        for words in groups[label]:
            table.add(words, label)
    return table


@lru_cache(maxsize=4)
def load_lexicon(path: str | None = None) -> Lexicon:
    from bot.knowledge import read_yaml, validate
    from bot.knowledge.schemas import LexiconFile

    data = read_yaml(path or LEXICON_PATH)
    validate(LexiconFile, data, path or LEXICON_PATH)  # the lists' shapes and fa/tr parity; the tables use data
    number_words: Dict[str, float] = {}
    for words in data["number_words"].values():
        for word, value in words.items():
            number_words[_folded_word(word)] = float(value)
    counted_number_words = {
        _folded_word(word) + _folded_word(suffix): float(value)
        for word, value in data["number_words"]["fa"].items() for suffix in data["number_counter_suffixes"]}
    methods = data["methods"]
    language = data["language"]
    rewrites = sorted(((compile_phrase(entry["from"]), _folded_word(entry["to"])) for entry in data["rewrites"]),
                      key=lambda item: -len(item[0]))
    return Lexicon(
        number_words=number_words,
        counted_number_words=counted_number_words,
        weak_number_words={_folded_word(w) for w in data["weak_number_words"]},
        never_alone_numbers={_folded_word(w) for w in data["never_alone_numbers"]},
        model_words=tuple(_folded_word(w) for w in data["model_words"]),
        connectors={_folded_word(w) for w in data["number_connectors"]},
        multipliers=_table(data["multipliers"]),
        counters=_table({"counter": data["counter_words"]}),
        range_words={_folded_word(w) for w in data["range_words"]},
        approximate_words={_folded_word(w) for w in data["approximate_words"]},
        units=_table(data["units"]),
        keywords=_table(data["keywords"]),
        methods=_table({k: methods[k] for k in ("qlora", "lora", "full_strong", "full_weak")}),
        method_context=_table({"context": methods["method_context"]}),
        full_weak_blockers_after={_folded_word(w) for w in methods["full_weak_blockers_after"]},
        full_weak_blockers_before={_folded_word(w) for w in methods["full_weak_blockers_before"]},
        method_reference_after=_table({"reference": methods["reference_after"]}),
        method_reference_before=_table({"reference": methods["reference_before"]}),
        method_negated_after=_table({"negated": methods.get("negated_after", [])}),
        method_negated_before=_table({"negated": methods.get("negated_before", [])}),
        unlimited=_table({"unlimited": data["budget_unlimited"]}),
        unlimited_answers=_table({"unlimited": data["budget_unlimited_answers"]}),
        hourly=_table({"hourly": data["hourly_markers"]}),
        hourly_reach_words=_table({"reach": data["hourly_reach_words"]}),
        vat=_table({"included": data["vat_included"], "excluded": data["vat_excluded"]}),
        budget_period=_table(data["budget_period"]),
        name_suffixes={_folded_word(w) for lang in data["name_suffixes"].values() for w in lang},
        separate_name_suffixes={_folded_word(w) for w in data["separate_name_suffixes"]},
        attribute_unit_endings=tuple(_folded_word(w) for w in data.get("attribute_unit_endings", ())),
        of_words={_folded_word(w) for w in data.get("of_words", ())},
        own_catalogue_card_words=_table({"owned": data.get("own_catalogue_card_words", [])}),
        compare_or={_folded_word(w) for w in data["compare_or"]},
        compare_and={_folded_word(w) for w in data["compare_and"]},
        compare_words=_table({"compare": data["compare_words"]}),
        own_card_words=_table({"own": data["own_card_words"]}),
        model_families={_folded_word(k): _folded_word(v) for k, v in data["model_families"].items()},
        gpu_names=_table({"gpu": data["gpu_names"]}),
        rewrites=rewrites,
        tr_words={_folded_word(w) for w in language["tr_words"]},
        tr_stems=tuple(_folded_word(w.rstrip("*")) for w in language["tr_stems"]),
        tr_suffixes=tuple(sorted({_folded_word(s) for s in language["tr_suffixes"]})),
        en_words={_folded_word(w) for w in language["en_words"]},
        fa_latin_words={_folded_word(w) for w in language["fa_latin_words"]},
        en_stems=tuple(_folded_word(w.rstrip("*")) for w in language["en_stems"]),
        fa_latin_markers={_folded_word(w) for w in language.get("fa_latin_markers", ())},
        fa_latin_marker_suffixes=tuple(sorted({_folded_word(w) for w in language.get("fa_latin_marker_suffixes", ())})),
        distributive_suffixes={_folded_word(w) for w in data.get("distributive_suffixes", ())},
        abbreviations={_folded_word(w) for w in data.get("abbreviations", ())},
        length_limit_words=_table({"limit": data.get("length_limit_words", [])}),
        declines_contact=_table(data["declines_contact"], order=("refuse", "here", "no_first", "cancel")),
        rewrite_table=_rewrite_table(rewrites),
        replaced_before=_table({"replaced": data.get("replaced_before", [])}),
        replaced_after=_table({"replaced": data.get("replaced_after", [])}),
    )


def is_replaced(tokens: Sequence[Token], start: int, end: int, lexicon: "Lexicon",
                suffixes: Iterable[str] = ()) -> bool:
    """The name at tokens[start:end] is the one given up: "instead of" right before it («به جای QLoRA», "bejaye
    A100") or "yerine" right after it ("QLoRA yerine", "QLoRA'nın yerine" with the suffix a separate word)."""
    after = end
    if after < len(tokens) and tokens[after].text in set(suffixes):
        after += 1
    if after < len(tokens) and lexicon.replaced_after.longest_at(tokens, after)[0]:
        return True
    for first in range(max(0, start - 3), start):
        length = lexicon.replaced_before.longest_at(tokens, first)[0]
        if length and first + length == start:
            return True
    return False


def _rewrite_table(rewrites: List[Tuple[Phrase, str]]) -> PhraseTable:
    """The rewrites as a phrase table: the longest spelling starting at a token wins, the one listed first on equal
    length - what trying the list sorted longest first did, without trying all 30 at every token (issue 20)."""
    table = PhraseTable()
    for phrase, replacement in rewrites:
        table.add_phrase(phrase, replacement)
    return table


def apply_rewrites(tokens: List[Token], lexicon: Lexicon) -> List[Token]:
    """Replace multi-word spellings of one term ("جی پی یو", "fine tune") by the term."""
    table = lexicon.rewrite_table
    if table is None:
        table = lexicon.rewrite_table = _rewrite_table(lexicon.rewrites)
    out: List[Token] = []
    i = 0
    while i < len(tokens):
        length, replacement = table.longest_at(tokens, i)
        if length and replacement is not None:  # a matched phrase always has its replacement
            first, last = tokens[i], tokens[i + length - 1]
            out.append(Token(replacement, first.start, last.end, first.glued))
            i += length
        else:
            out.append(tokens[i])
            i += 1
    return out
