"""detect_language(): fa for Arabic script, tr/en for Latin text by letters and words, None without a signal."""
import pytest

from bot.text.language import detect_language
from bot.text.numbers import load_lexicon

CASES = [
    # Persian, with and without English terms, Arabic letters and digits
    ("سلام", "fa"),
    ("میخوام llama 8b رو با qlora فاین تیون کنم، ۲۰۴۸ توکن", "fa"),
    ("llama 8b رو با qlora", "fa"),
    ("با ۴۰۹۶ توکن چی؟", "fa"),
    ("كم GPU لازم دارم", "fa"),
    ("QLoRA چیه؟", "fa"),
    ("مرسی", "fa"),
    ("7B لورا", "fa"),
    ("۴۰۹۶", "fa"),
    ("٤٠٩٦", "fa"),
    ("7B؟", "fa"),
    # Turkish, with and without diacritics
    ("merhaba", "tr"),
    ("Merhaba, yardım eder misiniz?", "tr"),
    ("70 milyarlık modeli tam ince ayar yapsam kaç GPU lazım?", "tr"),
    ("LoRA olursa?", "tr"),
    ("bütçem aslında 100 dolar", "tr"),
    ("butce 100 dolar", "tr"),
    ("kac gpu lazim", "tr"),
    ("kaç GPU lazım", "tr"),
    ("tesekkurler", "tr"),
    ("Teşekkürler!", "tr"),
    ("İyi günler", "tr"),
    ("A100 mü H100 mü?", "tr"),
    ("llama 8b için ne kadar VRAM gerekiyor", "tr"),
    ("qwen 14b sığar mı", "tr"),
    ("selam", "tr"),
    ("fiyatlar KDV dahil mi", "tr"),
    ("bir insanla görüşmek istiyorum", "tr"),
    ("yetmis milyarlik model", "tr"),
    ("ŞİMDİ", "tr"),
    ("sen bot musun?", "tr"),
    ("bot musunuz", "tr"),
    ("gerçek misin", "tr"),
    ("nasılsın", "tr"),
    ("sen", "tr"),
    ("saol", "tr"),
    ("3000 TL bütçem var", "tr"),
    # English
    ("hello", "en"),
    ("hi there", "en"),
    ("how much does it cost", "en"),
    ("which gpu do I need for llama 8b", "en"),
    ("thanks", "en"),
    ("I want to fine-tune mistral with QLoRA", "en"),
    ("what is the cheapest card", "en"),
    # no signal
    ("7B QLoRA 4096", None),
    ("4096", None),
    ("llama 8b", None),
    ("A100", None),
    ("😀👍", None),
    ("/greet", None),
    ("/start web-42", None),
    ('/inform{"language":"tr"}', None),
    ("", None),
    ("   ", None),
    ("?!", None),
    ("$50", None),
    # a currency alone says nothing about the language: a Persian user writes "500 TL" too
    ("500 TL", None),
    ("500 tl", None),
    ("1000 lira", None),
    ("300 ₺", None),
    ("100 dolar", None),
    ("20 USD", None),
]


@pytest.mark.parametrize("text, expected", CASES)
def test_detect_language(text, expected):
    assert detect_language(text) == expected


def test_word_lists_do_not_overlap():
    lexicon = load_lexicon()
    assert not lexicon.tr_words & lexicon.en_words


@pytest.mark.parametrize("text, expected", [
    ("salam", "fa"),
    ("mikham llama 8b ro ba qlora fine tune konam", "fa"),
    ("chand ta gpu lazem daram?", "fa"),
    ("mrc", "fa"),
    ("mersi", None),  # Turks and Iranians both write it
])
def test_persian_in_latin_letters(text, expected):
    assert detect_language(text) == expected


def test_finglish_words_are_neither_turkish_nor_english():
    lexicon = load_lexicon()
    assert not lexicon.fa_latin_words & (lexicon.tr_words | lexicon.en_words)


def test_language_detection_never_reads_arabic_script_as_latin():
    for text in ["ممنون", "ok ممنون", "thanks ممنون", "teşekkürler ممنون"]:
        assert detect_language(text) == "fa"


def _nlu_examples(lang):
    import re
    from pathlib import Path

    import yaml

    path = Path(__file__).resolve().parent.parent / "data" / "nlu" / f"{lang}.yml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    examples = []
    for item in data.get("nlu", []):
        for line in (item.get("examples") or "").splitlines():
            line = line.strip()
            if line.startswith("- "):
                # "[8B](model_size_b)" / "[8B]{...}" -> "8B"
                examples.append(re.sub(r"\[([^\]]*)\](?:\([^)]*\)|\{[^}]*\})", r"\1", line[2:]))
    return examples


@pytest.mark.parametrize("lang", ["fa", "tr"])
def test_training_examples_are_not_taken_for_another_language(lang):
    """The project's own NLU examples: a wrong language would answer a user in a language they did not write."""
    examples = _nlu_examples(lang)
    assert len(examples) > 100
    results = [detect_language(text) for text in examples]
    wrong = [text for text, result in zip(examples, results) if result not in (lang, None)]
    silent = [text for text, result in zip(examples, results) if result is None]
    assert len(wrong) <= len(examples) * 0.005, wrong
    # None is for messages with no signal at all ("7B", "qlora", "2 GPU"); they keep the conversation's language
    assert len(silent) <= len(examples) * 0.05, silent


@pytest.mark.parametrize("lang", ["fa", "tr"])
def test_parse_tables_are_never_taken_for_the_other_language(lang):
    """Every message of the parser tables is in its language or carries no signal (model names, numbers)."""
    from pathlib import Path

    import yaml

    rows = yaml.safe_load((Path(__file__).parent / "data" / f"parse_cases_{lang}.yml").read_text(encoding="utf-8"))
    english = {"10k examples", "full fine-tune", "full fine tuning"}  # English terms a Turk may type on their own
    wrong = [(row["text"], detect_language(row["text"])) for row in rows
             if row["text"] not in english and detect_language(row["text"]) not in (lang, None)]
    assert not wrong
