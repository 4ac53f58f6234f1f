"""Property tests of bot.privacy (issue 20 finding 2): every way of writing a value is masked, ordinary job messages
are not.

The strategies build values with valid check digits (phone numbers libphonenumber accepts, TC kimlik, Iranian
national codes, IBANs, Luhn cards, e-mail addresses, Turkish and Persian postal addresses) and write them the ways
that hid them before: digits of every script, separators of every kind (line breaks, U+2028, underscores, doubled
dashes, Arabic comma or thousands separator, katakana dots, wide gaps), letters or a second number glued to them,
URL-encoded tel:/viber: links, extensions glued with "x", spelled e-mail forms, IBANs without their country code.
The masked text must keep no run of six digits of the value (in any script) and no e-mail local part.
"""
from __future__ import annotations

import urllib.parse
from typing import List

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from stdnum import iban as stdnum_iban
from stdnum import luhn
from stdnum.tr import tckimlik

from bot.privacy import count_pii, find_pii, mask_pii
from bot.privacy.normalize import digits_only

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Digit forms: ASCII, Persian, Arabic-Indic, fullwidth, mathematical bold / double-struck / monospace, superscript.
_SUPERSCRIPT = "⁰¹²³⁴⁵⁶⁷⁸⁹"
DIGIT_FORMS = {
    "ascii": "0123456789", "persian": "۰۱۲۳۴۵۶۷۸۹", "arabic": "٠١٢٣٤٥٦٧٨٩", "fullwidth": "０１２３４５６７８９",
    "math_bold": "".join(chr(0x1D7CE + i) for i in range(10)),
    "double_struck": "".join(chr(0x1D7D8 + i) for i in range(10)),
    "monospace": "".join(chr(0x1D7F6 + i) for i in range(10)), "superscript": _SUPERSCRIPT,
}
SEPARATORS = [" ", "-", ".", "/", "\u00a0", "\u202f", "\n", "\u2028", "\r\n", "_", "--", " -- ", "،", "٬", "・", "･",
              "     ", "\t", " . ", "\u200b", "\u200c", "__", ", "]
WRAPS = {
    "plain": "{}", "tel": "tel:{}", "wa": "wa.me/{}", "glued_letters": "tel{}abc", "parens": "({})",
    "newline_around": "\n{}\n", "colon": "no:{}", "persian_word": "شماره{}", "quote": "'{}'",
}
SENTENCES = ["Merhaba, bilgim: {} teşekkürler", "سلام، اطلاعات من {} است", "{}", "not ({}) tamam mı?",
             "لطفاً با {} هماهنگ کنید.", "llama 3.1 8b qlora, {} , 2048 token"]


def _digits(draw, n: int) -> str:
    return "".join(draw(st.lists(st.sampled_from("0123456789"), min_size=n, max_size=n)))


@st.composite
def tr_mobile(draw) -> str:
    return "5" + draw(st.sampled_from("0345")) + _digits(draw, 8)


@st.composite
def ir_mobile(draw) -> str:
    return "9" + draw(st.sampled_from("0123")) + _digits(draw, 8)


@st.composite
def phone(draw) -> str:
    """A Turkish or Iranian mobile in one of its prefix forms."""
    if draw(st.booleans()):
        local, cc = draw(tr_mobile()), "90"
    else:
        local, cc = draw(ir_mobile()), "98"
    prefix = draw(st.sampled_from(["0", "+" + cc, "00" + cc, cc, "0", "+" + cc + " "]))
    return prefix + local


@st.composite
def tc(draw) -> str:
    body = draw(st.sampled_from("123456789")) + _digits(draw, 8)
    return body + tckimlik.calc_check_digits(body)


@st.composite
def national_id(draw) -> str:
    body = _digits(draw, 9)
    remainder = sum(int(body[i]) * (10 - i) for i in range(9)) % 11
    code = body + str(remainder if remainder < 2 else 11 - remainder)
    assume(len(set(code)) > 1)
    return code


@st.composite
def card(draw) -> str:
    prefix = draw(st.sampled_from(["4", "51", "55", "2221", "6037", "6219", "9792"]))
    body = prefix + _digits(draw, 15 - len(prefix))
    return body + luhn.calc_check_digit(body)


@st.composite
def iban_digits(draw) -> str:
    """A Turkish IBAN as digits after its country code (the form written without "TR")."""
    bban = _digits(draw, 22)
    return stdnum_iban.calc_check_digits("TR00" + bban) + bban


NUMBER_KINDS = {"phone": phone(), "tc_kimlik": tc(), "national_id": national_id(), "card": card(),
                "iban": iban_digits()}


def _group(value: str, sizes: List[int], sep: str) -> str:
    out, i = [], 0
    for n in sizes:
        if i >= len(value):
            break
        out.append(value[i:i + n])
        i += n
    if i < len(value):
        out.append(value[i:])
    return sep.join(out)


@st.composite
def written_number(draw):
    """(kind, value digits, as written)."""
    kind = draw(st.sampled_from(sorted(NUMBER_KINDS)))
    value = draw(NUMBER_KINDS[kind])
    plus = value.startswith("+")
    digits = value.lstrip("+").replace(" ", "")
    sizes = draw(st.sampled_from([[100], [4, 4, 4, 4, 4, 4], [3, 3, 2, 2], [4, 3, 2, 2], [3, 3, 4], [2, 3, 3, 2, 2],
                                  [1, 3, 3, 2, 2], [3, 3, 3, 2]]))
    if kind == "card":
        sizes = draw(st.sampled_from([[100], [4, 4, 4, 4]]))
    sep = draw(st.sampled_from(SEPARATORS))
    script = DIGIT_FORMS[draw(st.sampled_from(sorted(DIGIT_FORMS)))]
    written = _group(digits, sizes, sep).translate(str.maketrans("0123456789", script))
    written = ("+" if plus else "") + written
    wrap = draw(st.sampled_from(sorted(WRAPS)))
    return kind, digits, WRAPS[wrap].format(written)


def _leaked(value_digits: str, masked: str) -> List[str]:
    shown = digits_only(masked)
    return [value_digits[i:i + 6] for i in range(len(value_digits) - 5) if value_digits[i:i + 6] in shown]


@SETTINGS
@given(number=written_number(), sentence=st.sampled_from(SENTENCES))
def test_every_written_form_of_a_number_is_masked(number, sentence):
    kind, digits, written = number
    masked = mask_pii(sentence.format(written))
    assert not _leaked(digits, masked), (kind, written, masked)


@SETTINGS
@given(number=written_number())
def test_the_kind_of_a_plainly_written_number_is_counted(number):
    kind, digits, _ = number
    counts = count_pii("bilgim " + digits)
    assert sum(counts.values()) == 1 and set(counts) >= {"phone", "email", "tc_kimlik", "iban", "card",
                                                         "national_id", "address"}, (digits, counts)


@SETTINGS
@given(first=written_number(), second=written_number())
def test_two_numbers_glued_together_are_both_masked(first, second):
    glued = first[1] + second[1]
    masked = mask_pii("kimlik ve telefon: " + glued)
    assert not _leaked(first[1], masked) and not _leaked(second[1], masked), masked


@SETTINGS
@given(local=st.one_of(tr_mobile(), ir_mobile()), scheme=st.sampled_from(["tel:", "viber://chat?number=", "sms:",
                                                                            "https://wa.me/", "whatsapp://send?phone="]),
       spaced=st.booleans(), twice=st.booleans())
def test_url_encoded_links_are_masked(local, scheme, spaced, twice):
    cc = "90" if local.startswith("5") else "98"
    number = f"+{cc} {local[:3]} {local[3:6]} {local[6:]}" if spaced else f"+{cc}{local}"
    encoded = urllib.parse.quote(number, safe="")
    if twice:
        encoded = urllib.parse.quote(encoded, safe="")
    masked = mask_pii(f"beni buradan arayın {scheme}{encoded} lütfen")
    assert not _leaked(cc + local, masked), masked


@SETTINGS
@given(local=tr_mobile(), ext=st.integers(1, 99999), glue=st.sampled_from(["x", " x ", "X", " ext. ", " dahili "]))
def test_extensions_glued_to_a_number_are_masked(local, ext, glue):
    masked = mask_pii(f"ofis 0{local}{glue}{ext}")
    assert not _leaked("0" + local, masked) and str(ext) not in digits_only(masked.replace("[PHONE]", "")), masked


# ---------------------------------------------------------------- e-mail addresses

@st.composite
def email_written(draw):
    user = draw(st.sampled_from(["ayse.kaya", "reza_ahmadi", "m.hosseini90", "ÇAĞLA", "deniz-ozturk", "s.rezaei"]))
    user += draw(st.sampled_from(["", "7", "2026", "+gpu"]))
    domain, tld = draw(st.sampled_from([("gmail", "com"), ("örnek", "com.tr"), ("mail", "ir"), ("outlook", "com"),
                                        ("sirket", "net"), ("uni.ac", "ir")]))
    form = draw(st.sampled_from(["{u}@{d}.{t}", "{u} @ {d}.{t}", "{u}＠{d}．{t}", "{u} [at] {d} [dot] {t}",
                                 "{u}(at){d}.{t}", "{u} at {d} dot {t}", "{u} (at) {d} (dot) {t}",
                                 "mailto:{u}%40{d}.{t}", "{U}@{D}.{T}", "<{u}@{d}.{t}>", "{u}@{d}.{t}."]))
    written = form.format(u=user, d=domain, t=tld, U=user.upper(), D=domain.upper(), T=tld.upper())
    return user, written


@SETTINGS
@given(email=email_written(), sentence=st.sampled_from(SENTENCES))
def test_every_written_form_of_an_email_address_is_masked(email, sentence):
    user, written = email
    masked = mask_pii(sentence.format(written))
    assert user.lower() not in masked.lower() and "[EMAIL]" in masked, (written, masked)


# ---------------------------------------------------------------- postal addresses

TR_PLACES = ["Atatürk", "Cumhuriyet", "Bahariye", "Moda", "Kızılay", "Gazi Osman Paşa", "1453", "Yıldız"]
FA_PLACES = ["ولیعصر", "بهار", "شهید رضایی", "گلستان", "نارنجستان", "۱۲", "فردوسی"]


@st.composite
def tr_address(draw):
    num = str(draw(st.integers(1, 250)))
    flat = str(draw(st.integers(1, 40)))
    parts = [f"{draw(st.sampled_from(TR_PLACES))} {draw(st.sampled_from(['Mah.', 'Mahallesi', 'mah', 'Mh.']))}",
             f"{draw(st.sampled_from(TR_PLACES))} {draw(st.sampled_from(['Sok.', 'Sokak', 'Cad.', 'Caddesi', 'Sk.']))}",
             f"{draw(st.sampled_from(['No:', 'No:', 'No ', 'no.']))}{num}",
             f"{draw(st.sampled_from(['Daire ', 'D:', 'Daire:', 'Kat ']))}{flat}"]
    sep = draw(st.sampled_from([" ", ", ", "\n"]))
    tail = draw(st.sampled_from(["", " Kadıköy/İstanbul", " 34710 Kadıköy / İSTANBUL", ", Çankaya/Ankara"]))
    return [num, flat], sep.join(parts[draw(st.integers(0, 1)):]) + tail


@st.composite
def fa_address(draw):
    digits = DIGIT_FORMS[draw(st.sampled_from(["ascii", "persian"]))]
    num = str(draw(st.integers(1, 250)))
    unit = str(draw(st.integers(1, 40)))
    postal = draw(st.sampled_from(["1", "3", "5"])) + str(draw(st.integers(100000000, 999999999)))
    tr = str.maketrans("0123456789", digits)
    parts = [f"خیابان {draw(st.sampled_from(FA_PLACES))}", f"کوچه {draw(st.sampled_from(FA_PLACES))}",
             f"پلاک {num.translate(tr)}", f"واحد {unit.translate(tr)}",
             f"کد پستی {postal.translate(tr)}"]
    chosen = parts[draw(st.integers(0, 1)):draw(st.integers(3, 5))]
    numbers = [num, unit, postal] if "کد پستی" in chosen[-1] else [num]
    return numbers, draw(st.sampled_from(["، ", " ", "،\n"])).join(chosen)


@SETTINGS
@given(address=st.one_of(tr_address(), fa_address()), sentence=st.sampled_from(SENTENCES[:5]))
def test_addresses_are_masked(address, sentence):
    numbers, written = address
    masked = mask_pii(sentence.format(written))
    assert "[ADDRESS]" in masked, (written, masked)
    shown = digits_only(masked)
    long_numbers = [n for n in numbers if len(n) >= 6]
    assert not [n for n in long_numbers if n in shown], masked
    for place in TR_PLACES[:5] + FA_PLACES[:5]:
        if place in written and place not in sentence:
            assert place not in masked, (written, masked)


# ---------------------------------------------------------------- ordinary job messages stay as they are

MODELS = ["llama 3.1 8b", "Llama-3.1-70B", "qwen2.5 14b", "mistral 7b", "gemma 2 9b", "llama 2 13B", "deepseek 67b",
          "phi-3 mini 3.8b", "لاما ۳.۱ ۸ میلیارد", "مدل ۷۰ میلیاردی", "qwen 72b"]
METHODS = ["qlora", "lora", "full fine-tune", "QLoRA 4-bit", "کیولورا", "tam ince ayar"]
SEQ = ["2048 token", "4.096 token", "8,192 tokens", "۲۰۴۸ توکن", "32k context", "۴۰۹۶ توکنی", "16384 token"]
MONEY = ["60 dolar", "$2,500", "1.250.000 TL", "۵۰۰ دلار", "۱۲۰ میلیون تومان", "3.000 USD", "saatlik 4,99 dolar",
         "bütçem 10000 dolar", "۲٬۵۰۰ دلار", "%20 KDV dahil 5,99 dolar"]
DATES = ["03.12.2026", "2026-12-03", "۱۴۰۵/۰۹/۱۲", "12/03/2026", "3 Aralık 2026 14:30", "۱۲ آذر ۱۴۰۵ ساعت ۱۴:۳۰",
         "2026-12-03T14:30:00Z"]
COUNTS = ["10000 örnek", "۵۰ هزار نمونه", "3 epoch", "1.500.000.000 token", "12.000 örnek", "۱۲۰۰۰۰ نمونه",
          "batch 16", "2x A100 80GB", "H100 x 8", "8 × H200", "RTX 4090 24GB", "lr 2e-4", "rank 64 alpha 128"]
GLUE = ["ile", "için", "و", "با", "ve", "—", ",", "؛", "\n", "ama", "یا"]


@st.composite
def job_message(draw) -> str:
    pieces = draw(st.lists(st.sampled_from(MODELS + METHODS + SEQ + MONEY + DATES + COUNTS), min_size=2, max_size=7))
    out = [pieces[0]]
    for piece in pieces[1:]:
        out += [draw(st.sampled_from(GLUE)), piece]
    return " ".join(out)


@SETTINGS
@given(job_message())
def test_job_messages_are_not_masked(message):
    assert find_pii(message) == [], (message, mask_pii(message))
    assert mask_pii(message) == message


@SETTINGS
@given(st.text(max_size=300))
def test_masking_never_raises_and_masks_its_own_output_to_itself(text):
    once = mask_pii(text)
    assert mask_pii(once) == once
