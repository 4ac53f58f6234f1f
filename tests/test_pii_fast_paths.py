"""The shortcuts in bot.privacy (issue 10: masking was 11 % of the Rasa server's time) find exactly what the full
pass finds: a text without a digit, "@", "t.me/", an "at" word or an address word skips the detectors, the e-mail
patterns run only when an "@" or "at" is there, and runs of digit groups with fewer than 7 digits skip the number
kinds.

The full pass is the same code with the shortcuts opened (every text scanned, every run tried), checked on the
masking tables of tests/test_pii_forms.py inside sentences, on a long estimate answer with a value inside, and on
random text."""
from __future__ import annotations

import re
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.privacy import accounts, numbers, pii
from tests.test_pii_forms import ALL_FORMS, FORMS, SENTENCES

# A real Turkish estimate answer (1,700 characters, prices, sizes, token counts): the long text masked every turn.
ESTIMATE = (
    "Bütçe sınırınız olmadığı için önerimiz H100 (80 GB): saatlik 4,99 dolar + KDV (%20 KDV dahil 5,99 dolar). "
    "İşi hızlı bitirir ve token başına maliyette en avantajlı seçenektir (milyon token başına yaklaşık 0,35 dolar).\n"
    "Llama 2 13B, QLoRA, 4.096 token dizi uzunluğu için bellek tahminimiz şöyle:\n"
    "Tek GPU'da yaklaşık 13,7 GB bellek gerekiyor (11,5–16,7 GB aralığında).\n"
    "1. A40 (48 GB): 0,74 / 0,89 dolar; 2. H100 (80 GB): 4,99 / 5,99 dolar; 12.000 örnek, 3 epoch, 1.250.000 token\n"
    "Persian: ۱۳B با ۴۰۹۶ توکن، ۲۰۴۸، ۱۲۰ دلار، http://localhost:8080/charts/5b5f143a4e8b82200c9e.png")


@contextmanager
def _opened(*patches):
    saved = [(module, name, getattr(module, name)) for module, name, _ in patches]
    for module, name, value in patches:
        setattr(module, name, value)
    try:
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)


def full_pass(text: str):
    """find_pii with every shortcut opened."""
    everything = re.compile("")
    with _opened((pii, "_MAY_HOLD_MARKS", everything), (pii, "MIN_NUMBER_DIGITS", 0),
                 (pii, "may_hold_address", lambda _: True), (numbers, "MIN_NUMBER_DIGITS", 0),
                 (accounts, "MAY_HOLD_EMAIL", everything)):
        return pii.find_pii(text)


def _corpus():
    for name, forms in FORMS.items():
        for i, form in enumerate(forms):
            lang = "fa" if i % 2 else "tr"
            sentence = SENTENCES[lang][i % len(SENTENCES[lang])]
            yield f"{name}-{i}", sentence.format(form)
            yield f"{name}-{i}-estimate", ESTIMATE[:700] + " " + form + " " + ESTIMATE[700:]


CORPUS = list(_corpus())


def test_estimate_answer_has_no_personal_data_and_is_left_as_it_is():
    assert pii.find_pii(ESTIMATE) == full_pass(ESTIMATE) == []
    assert pii.mask_pii(ESTIMATE) == ESTIMATE


@pytest.mark.parametrize("label,text", CORPUS, ids=[c[0] for c in CORPUS])
def test_shortcuts_find_what_the_full_pass_finds(label, text):
    found = pii.find_pii(text)
    assert found, label
    assert found == full_pass(text)


def test_texts_without_digit_or_address_sign_have_nothing_the_full_pass_would_find():
    words = ["Merhaba, LoRA olursa?", "سلام وقت بخیر، با QLoRA چطور؟", "utter_greet", "action_listen",
             "t.me kanalımız", "meet at home, thanks", "ＡＢＣ　ｄｅｆ", "\u200c\u200b\u00a0"]
    for text in words:
        assert pii.find_pii(text) == full_pass(text) == []


@settings(max_examples=300, deadline=None)
@given(before=st.text(max_size=80), form=st.sampled_from(ALL_FORMS), after=st.text(max_size=80))
def test_random_text_shortcuts_agree_with_the_full_pass(before, form, after):
    for text in (before + after, before + " " + form + " " + after):
        assert pii.find_pii(text) == full_pass(text)


def test_email_patterns_need_an_at_sign_or_word():
    # Why find_pii may skip them: no e-mail pattern matches a text without "@" or a spelled "at".
    for text in [ESTIMATE, "ali.veli ornek.com.tr", "telegram: ali_veli_123", "wa.me/905321234567"]:
        norm = pii.normalize(text).text
        assert not accounts.MAY_HOLD_EMAIL.search(norm) and not accounts.EMAIL.search(norm)
        assert not accounts.TELEGRAM_HANDLE.search(norm)
