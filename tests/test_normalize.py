"""normalize() keeps the length (Rasa entity offsets) and maps what Persian/Turkish keyboards type."""
import random
import sys

import pytest

from bot.text.normalize import fold, normalize

# Characters chosen to hit every mapping and its edge: Arabic/Persian letters, both digit sets, separators,
# invisible characters, Turkish capitals, fullwidth and presentation forms, combining marks, emoji, surrogates.
INTERESTING = (
    "يىكةۀأإٱؤیکهاآ" "۰۱۲۳۴۵۶۷۸۹" "٠١٢٣٤٥٦٧٨٩" "٫٬،؛؟٪" "\u200c\u200d\u200b\u200e\u200f\ufeff\u00a0\u202f\u2066"
    "İIıiŞşĞğÇçÖöÜüÂâ" "ＱＬｏｒａ１２％" "ﻻﷲﺏﺑﺒﻙ" "ـ\u064b\u064e\u0650\u0651\u0652\u0670" "😀🇹🇷👍🏽" "ßẞŉǰΐﬁ"
    "abcXYZ 0123456789 .,;:!?-–—'\"$₺€\t\n"
)


@pytest.mark.parametrize("seed", range(40))
def test_length_is_kept_for_random_strings(seed):
    rng = random.Random(seed)
    for _ in range(100):
        pool = INTERESTING if rng.random() < 0.7 else None
        length = rng.randint(0, 40)
        if pool:
            text = "".join(rng.choice(pool) for _ in range(length))
        else:
            text = "".join(chr(rng.randint(0, sys.maxunicode)) for _ in range(length))
        text = "".join(ch for ch in text if not 0xD800 <= ord(ch) <= 0xDFFF)
        assert len(normalize(text)) == len(text), repr(text)
        assert len(normalize(text, lowercase=False)) == len(text), repr(text)


def test_length_is_kept_for_every_unicode_character():
    characters = [chr(code) for code in range(sys.maxunicode + 1) if not 0xD800 <= code <= 0xDFFF]
    for start in range(0, len(characters), 4096):
        chunk = characters[start:start + 4096]
        for text in ("".join(chunk), "I".join(chunk), " ".join(chunk)):  # "I" depends on its word
            assert len(normalize(text)) == len(text), hex(ord(chunk[0]))
            assert len(normalize(text, lowercase=False)) == len(text), hex(ord(chunk[0]))


@pytest.mark.parametrize("raw, expected", [
    ("كيف", "کیف"),
    ("علي", "علی"),
    ("مدلى", "مدلی"),
    ("مدرسة", "مدرسه"),
    ("۲۰۴۸ توکن", "2048 توکن"),
    ("٢٠٤٨", "2048"),
    ("۱٫۵ میلیارد", "1.5 میلیارد"),
    ("۲٬۰۴۸", "2,048"),
    ("می\u200cخوام", "می خوام"),
    ("فاین\u200cتیون", "فاین تیون"),
    ("چی؟", "چی?"),
    ("۵۰٪", "50%"),
    ("İSTANBUL", "istanbul"),
    ("KIŞ", "kış"),
    ("IŞIK", "ışık"),
    ("QLoRA", "qlora"),
    ("LoRA'yı İstiyorum", "lora'yı istiyorum"),
    ("Ｑｌｏｒａ ７Ｂ", "qlora 7b"),
    ("q‑lora – full", "q-lora - full"),
    ("a\u00a0b", "a b"),
])
def test_mappings(raw, expected):
    assert normalize(raw) == expected
    assert len(normalize(raw)) == len(raw)


def test_uppercase_kept_on_request():
    assert normalize("İstanbul QLoRA ۷B", lowercase=False) == "İstanbul QLoRA 7B"


def test_tatweel_and_diacritics_stay_in_normalize_but_not_in_fold():
    text = "کـــامِل"
    assert normalize(text) == text
    assert fold(text) == "کامل"


@pytest.mark.parametrize("raw, expected", [
    ("yetmiş milyarlık", "yetmis milyarlik"),
    ("Bütçem ÇOK az", "butcem cok az"),
    ("LoRA'yı", "lora"),
    ("8B’lik model", "8b model"),
    ("آموزش", "اموزش"),
    ("می‌خوام", "می خوام"),
])
def test_fold(raw, expected):
    assert fold(raw) == expected


@pytest.mark.parametrize("seed", range(5))
def test_normalize_is_idempotent(seed):
    rng = random.Random(seed)
    for _ in range(300):
        text = "".join(rng.choice(INTERESTING) for _ in range(rng.randint(0, 30)))
        once = normalize(text)
        assert normalize(once) == once, repr(text)
        assert fold(once) == fold(text), repr(text)
