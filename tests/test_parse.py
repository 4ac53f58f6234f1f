"""parse_values(): the YAML tables in tests/data/parse_cases_{fa,tr}.yml, plus the rules they rely on.

Each table row: ``text``, ``expect`` (every value the message gives - a value not listed must be None),
optional ``expected`` (the slot the bot just asked for) and ``ambiguous`` (numbers it must not guess).
"""
from pathlib import Path

import pytest
import yaml

from bot.advisor.knowledge import load_knowledge
from bot.text.parse import ParsedValues, parse_values

DATA = Path(__file__).parent / "data"


def _cases(lang):
    rows = yaml.safe_load((DATA / f"parse_cases_{lang}.yml").read_text(encoding="utf-8"))
    return [pytest.param(row, id=f"{lang}-{index}-{row['text'][:40]}") for index, row in enumerate(rows)]


@pytest.fixture(scope="module")
def kb():
    return load_knowledge()


@pytest.mark.parametrize("row", _cases("fa") + _cases("tr"))
def test_table(row, kb):
    parsed = parse_values(row["text"], kb=kb, expected=row.get("expected"))
    expect = dict(row.get("expect") or {})
    assert parsed.found() == expect
    assert parsed.ambiguous == row.get("ambiguous", [])




def test_table_rows_are_well_formed():
    fields = set(ParsedValues.__fields__) - {"ambiguous"}
    for lang in ("fa", "tr"):
        rows = yaml.safe_load((DATA / f"parse_cases_{lang}.yml").read_text(encoding="utf-8"))
        assert len(rows) >= 100, lang
        for row in rows:
            assert set(row) <= {"text", "expect", "expected", "ambiguous"}, row
            assert set(row.get("expect") or {}) <= fields, row


def test_every_value_is_none_when_absent(kb):
    parsed = parse_values("سلام، خوبی؟", kb=kb)
    assert parsed == ParsedValues()
    assert all(value is None for key, value in parsed.dict().items() if key != "ambiguous")


def test_empty_text(kb):
    assert parse_values("", kb=kb) == ParsedValues()
    assert parse_values("   ", kb=kb) == ParsedValues()


def test_bare_number_follows_the_question(kb):
    assert parse_values("8", kb=kb).found() == {}
    assert parse_values("8", kb=kb).ambiguous == ["8"]
    assert parse_values("8", kb=kb, expected="model_size_b").found() == {"model_size_b": 8.0}
    assert parse_values("8", kb=kb, expected="gpus").found() == {"gpus": 8}
    assert parse_values("8", kb=kb, expected="epochs").found() == {"epochs": 8.0}
    assert parse_values("4096", kb=kb, expected="seq_len").found() == {"seq_len": 4096}
    assert parse_values("3", kb=kb, expected="seq_len").ambiguous == ["3"]  # no sequence is 3 tokens long


def test_only_one_bare_number_answers_the_question(kb):
    parsed = parse_values("13 یا 70", kb=kb, expected="model_size_b")
    assert parsed.model_size_b == 13.0
    assert parsed.ambiguous == ["70"]


def test_local_currency_is_not_taken_as_dollars(kb):
    for text, note in [("500 TL", "try"), ("bütçem 2000 lira", "try"), ("₺750", "try"),
                       ("۵۰۰ هزار تومن", "toman"), ("بودجم ۲ میلیون تومانه", "toman"), ("۱۰۰ هزار ریال", "toman")]:
        parsed = parse_values(text, kb=kb)
        assert parsed.budget_usd is None, text
        assert parsed.currency_note == note, text


def test_model_names_come_from_the_knowledge_base(kb):
    for preset in kb.models:
        assert parse_values(preset.id, kb=kb).model_id == preset.id
        assert parse_values(f"{preset.display} ile QLoRA", kb=kb).model_id == preset.id
        for alias in preset.aliases:
            assert parse_values(f"میخوام {alias} رو فاین تیون کنم", kb=kb).model_id in {
                p.id for p in kb.models if alias in [p.id, p.display, *p.aliases]}, alias


def test_a_later_size_replaces_the_named_model(kb):
    parsed = parse_values("llama 8b değil, 70b olsun", kb=kb)
    assert parsed.model_size_b == 70.0
    assert parsed.model_id is not None and kb.model(parsed.model_id).size_b == 70.0


def test_default_knowledge_base_is_loaded():
    assert parse_values("llama 8b").model_id == "llama-3.1-8b"


@pytest.mark.parametrize("raw, values", [
    ("2048", [2048.0]),
    ("1.5", [1.5]),
    ("1,5", [1.5]),
    ("0.5", [0.5]),
    ("0.500", [0.5]),
    ("2.048", [2048.0]),
    ("2,048", [2048.0]),
    ("1.234.567", [1234567.0]),
    ("1.234,5", [1234.5]),
    ("3.10", [3.1]),
    ("8,16,32", [8.0, 16.0, 32.0]),
])
def test_parse_number(raw, values):
    from bot.text.numbers import parse_number

    assert parse_number(raw) == values


def test_random_messages_never_break_the_parser(kb):
    """Any mix of words from the lexicon, numbers and noise gives a valid ParsedValues, never an exception."""
    import random

    from bot.text.numbers import load_lexicon

    lexicon = load_lexicon()
    words = list(lexicon.number_words) + sorted(lexicon.tr_words) + sorted(lexicon.fa_latin_words)
    for table in (lexicon.units, lexicon.keywords, lexicon.methods, lexicon.multipliers, lexicon.unlimited):
        words += [" ".join(p.text for p in phrase) for phrase, _ in table.entries]
    words += ["llama", "qwen", "8b", "۷۰", "٤", "2.048", "1,5", "$", "₺", "%", "x", "،", "?", "-", "'", "\u200c",
              "0", "999999999999", "1e9", "١٢٣٤٥٦٧٨٩٠", "𝟕", "½", "Ⅻ", "—"]
    rng = random.Random(7)
    for _ in range(3000):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 12)))
        expected = rng.choice([None, "model", "seq_len", "budget", "method", "examples", "gpus", "epochs"])
        parsed = parse_values(text, kb=kb, expected=expected)
        if parsed.seq_len is not None:
            assert 16 <= parsed.seq_len <= 1_000_000, text
        if parsed.gpus is not None:
            assert 1 <= parsed.gpus <= 4096, text
        if parsed.model_size_b is not None:
            assert 0 < parsed.model_size_b <= 5000, text
        if parsed.budget_usd is not None:
            assert parsed.budget_usd > 0, text
        if parsed.model_id is not None:
            kb.model(parsed.model_id)


def test_lexicon_has_no_empty_or_unfoldable_entries():
    from bot.text.numbers import load_lexicon

    lexicon = load_lexicon()
    for table in (lexicon.units, lexicon.keywords, lexicon.methods, lexicon.multipliers, lexicon.unlimited,
                  lexicon.gpu_names, lexicon.counters, lexicon.method_context):
        for phrase, label in table.entries:
            assert phrase and all(p.text for p in phrase), label


@pytest.mark.parametrize("text, expect", [
    ("I want to fine-tune llama 8b with QLoRA, 4k context", {"model_id": "llama-3.1-8b", "model_size_b": 8.0,
                                                              "method": "qlora", "seq_len": 4096,
                                                              "model_version_assumed": True}),
    ("budget is $100", {"budget_usd": 100.0}),
    ("I have 50 dollars", {"budget_usd": 50.0}),
    ("full fine-tuning of a 7 billion parameter model on 2 GPUs", {"method": "full", "model_size_b": 7.0,
                                                                    "gpus": 2}),
    ("10k examples, 500 tokens per example, 3 epochs", {"examples": 10000, "avg_tokens": 500, "epochs": 3.0}),
    ("no budget limit", {"budget_unlimited": True}),
    ("7B QLoRA 4096", {"model_size_b": 7.0, "method": "qlora", "seq_len": 4096}),
])
def test_english_messages(text, expect, kb):
    assert parse_values(text, kb=kb).found() == expect


@pytest.mark.parametrize("row", _cases("fa") + _cases("tr"))
def test_already_normalised_text_reads_the_same(row, kb):
    """The Rasa component hands on normalised text; parsing it must give what the raw text gives."""
    from bot.text.normalize import normalize

    raw = parse_values(row["text"], kb=kb, expected=row.get("expected"))
    assert parse_values(normalize(row["text"]), kb=kb, expected=row.get("expected")) == raw


def test_non_text_input(kb):
    assert parse_values(None, kb=kb) == ParsedValues()
    assert parse_values(4096, kb=kb).seq_len == 4096
    assert parse_values(8, kb=kb, expected="model").model_size_b == 8.0


# ---------------------------------------------------------------------------------------------- issue 9 / 13 (H2)


@pytest.mark.parametrize("digits", [25, 400, 5000])
@pytest.mark.parametrize("expected", [None, "seq_len", "budget_usd", "model_size_b", "examples", "gpus", "epochs"])
def test_a_number_of_any_length_is_unclear_never_an_error(kb, digits, expected):
    number = "7" * digits
    for text in (number, f"{number} token", f"{number} dolar", f"{number}b", f"بودجه {number} دلار",
                 f"saatte en fazla {number} dolar", f"{number} örnek", f"۱{'۲' * digits}"):
        parsed = parse_values(text, kb=kb, expected=expected)
        assert all(value is None for key, value in parsed.dict().items() if key != "ambiguous"), text
        assert len(parsed.ambiguous) == 1 and len(parsed.ambiguous[0]) <= 12, text


@pytest.mark.parametrize("suffix", ["yi", "yı", "'yi", "'yı", "yu", "'u", "ye", "'e", "nin", "'nın", "i", "'i"])
def test_a_turkish_suffix_after_a_size_is_never_the_model_yi(kb, suffix):
    for size in sorted({p.size_b for p in kb.models if p.id != "yi-34b"}):
        glue = "" if suffix.startswith("'") else " "
        parsed = parse_values(f"{size:g}b{glue}{suffix} qlora ile eğitmek istiyorum", kb=kb)
        assert parsed.model_id != "yi-34b", (size, suffix)
        assert parsed.model_size_b == size and parsed.method == "qlora", (size, suffix)


def test_a_suffix_glued_to_a_family_name_keeps_the_family(kb):
    assert parse_values("llamayı 70b olarak", kb=kb).model_id == "llama-3.3-70b"
    assert parse_values("qwenı 14b ile", kb=kb).model_id == "qwen3-14b"
    assert parse_values("لامارو ۷۰ میلیاردی", kb=kb).model_id == "llama-3.3-70b"
    assert parse_values("کوئنو ۱۴ بی", kb=kb).model_id == "qwen3-14b"
    # a suffix word in front of digits glued to it is a name: "a100", not the accusative "a"
    assert parse_values("llama 8b a100 ile", kb=kb).model_id == "llama-3.1-8b"


def test_an_hourly_price_is_a_cap_not_a_budget(kb):
    parsed = parse_values("bütçemiz 300 dolar ama saatte en fazla 2 dolar", kb=kb)
    assert parsed.budget_usd == 300.0 and parsed.hourly_cap == 2.0 and parsed.hourly_cap_vat is None
    parsed = parse_values("با ۱۰۰ دلار چند ساعت میشه آموزش داد؟", kb=kb)  # hours a budget buys: no cap
    assert parsed.budget_usd == 100.0 and parsed.hourly_cap is None


def test_an_unknown_name_is_kept_and_never_becomes_a_known_preset(kb):
    for text in ("qwen 4.5 8b lora", "gemma 5 12b", "llama 4.5 70b", "olmo 3 7b", "smollm3 3b ile", "stablelm 7b"):
        parsed = parse_values(text, kb=kb)
        assert parsed.model_id is None and parsed.model_query, text


@pytest.mark.parametrize("text, expected, assumed", [
    ("qwen 14b", "qwen3-14b", True), ("gemma 27b", "gemma-3-27b", True), ("llama 70b", "llama-3.3-70b", True),
    ("phi 14b", "phi-4", True), ("mistral small 24b", "mistral-small-3.2-24b", True),
    ("qwen2.5 14b", "qwen2.5-14b", None), ("Gemma 2 27B", "gemma-2-27b", None),
    ("llama 3.1 70b", "llama-3.1-70b", None),
    ("qwen 7b", "qwen2.5-7b", None), ("magistral 24b", "magistral-small", None),
])
def test_family_and_size_follow_the_shared_resolver(text, expected, assumed, kb):
    """The parser and bot.advisor.knowledge.resolve_model pick the same preset for a family and a size, and the
    flag says whether a version was assumed (several releases of that size, none named)."""
    from bot.advisor.knowledge import resolve_model

    parsed = parse_values(text, kb=kb)
    resolved = resolve_model(text, kb)
    assert parsed.model_id == resolved.preset.id == expected
    assert parsed.model_version_assumed is assumed
    assert resolved.version_assumed is bool(assumed)


def test_a_later_size_keeps_the_version_the_customer_named(kb):
    assert parse_values("llama 3.1 8b ile başladım, 70b olsun", kb=kb).model_id == "llama-3.1-70b"
    parsed = parse_values("llama 8b değil, 70b olsun", kb=kb)
    assert (parsed.model_id, parsed.model_version_assumed) == ("llama-3.3-70b", True)


def test_names_resolved_once_per_knowledge_base_with_a_bound(monkeypatch):
    """bot.text.parse.model_names._resolve_name keeps what match_model answered (20 ms a call; a long message
    repeating names asked it dozens of times): the same answer, asked once per knowledge base, and no more than
    _RESOLVED_MAX kept."""
    import copy

    import bot.advisor.knowledge as knowledge
    from bot.text.parse import model_names as parse

    kb = knowledge.load_knowledge()
    asked = []
    real = knowledge.match_model

    def counting(name, kb_):
        asked.append((name, id(kb_)))
        return real(name, kb_)

    monkeypatch.setattr(knowledge, "match_model", counting)
    monkeypatch.setattr(parse, "_RESOLVED", type(parse._RESOLVED)())
    names = ["qwen 7b", "mistral small 24b", "llama 70b", "stablelm 7b", "gemma 9b"]
    first = [parse._resolve_name(name, kb) for name in names]
    again = [parse._resolve_name(name, kb) for name in names]
    assert first == again and len(asked) == len(names)
    assert first[0] is not None and first[3] is None  # a known family resolves; an unknown name stays unresolved
    other = copy.copy(kb)
    assert parse._resolve_name("qwen 7b", other) == first[0] and len(asked) == len(names) + 1
    monkeypatch.setattr(parse, "_RESOLVED_MAX", 3)
    parse._resolve_name("phi 14b", kb)
    assert len(parse._RESOLVED) == 3
