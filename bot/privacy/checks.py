"""Is this string of digits a TC kimlik, an Iranian national code, an IBAN, a payment card or a phone number?

Libraries where they exist: python-stdnum (TC kimlik, IBAN, Luhn, ISO 7064 mod 97-10) and phonenumbers
(libphonenumber's metadata for Turkey, Iran and the rest of the world). stdnum has no Iranian national code and its
IBAN registry has no Iran (not a SWIFT registry member, though Iranian banks issue "Sheba" IBANs): both are here.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Optional

import phonenumbers
from stdnum import iban as stdnum_iban
from stdnum import luhn
from stdnum.iso7064 import mod_97_10
from stdnum.tr import tckimlik

# Regions whose numbers customers write without a country code (the bot serves Turkish and Persian speakers).
HOME_REGIONS = ("TR", "IR")
# Sheba: "IR", two check digits, 22 digits (Central Bank of Iran, IBAN format since 2013).
_SHEBA = re.compile(r"IR\d{24}")
# Every Turkish and Iranian subscriber number has ten digits after the trunk zero (area code or mobile prefix
# included); the shorter ones libphonenumber also accepts for Iran are old local numbers and read like dates.
_HOME_NATIONAL_DIGITS = 10
_MOBILE_TYPES = (phonenumbers.PhoneNumberType.MOBILE, phonenumbers.PhoneNumberType.FIXED_LINE_OR_MOBILE)


def is_valid_tc_kimlik(digits: str) -> bool:
    """TC Kimlik No: 11 digits, no leading zero, two check digits (stdnum.tr.tckimlik)."""
    return len(digits) == 11 and digits.isdigit() and tckimlik.is_valid(digits)


def is_valid_ir_national_id(digits: str) -> bool:
    """Iranian national code (کد ملی): 10 digits, weighted mod-11 check digit (National Organization for Civil
    Registration); codes of one repeated digit pass the arithmetic but are never issued."""
    if len(digits) != 10 or not digits.isdigit() or len(set(digits)) == 1:
        return False
    remainder = sum(int(digits[i]) * (10 - i) for i in range(9)) % 11
    check = int(digits[9])
    return check == remainder if remainder < 2 else check == 11 - remainder


def is_valid_iban(value: str) -> bool:
    """ISO 13616 mod-97 and the country's structure (stdnum.iban); Iranian Sheba numbers by their own structure."""
    compact = re.sub(r"[\s.\-_/]", "", value).upper()
    if compact.startswith("IR"):
        return bool(_SHEBA.fullmatch(compact)) and mod_97_10.is_valid(compact[4:] + compact[:4])
    return stdnum_iban.is_valid(compact)


def is_valid_card(digits: str) -> bool:
    """13-19 digits with a valid Luhn check digit (stdnum.luhn); a run of one digit is a placeholder, not a card."""
    return 13 <= len(digits) <= 19 and digits.isdigit() and len(set(digits)) > 1 and luhn.is_valid(digits)


def phone_kind(digits: str, international: bool) -> bool:
    """A phone number: any country's when written as international ("+", "00", a tel: link), Turkish and Iranian
    numbers also with the trunk zero, with the country code but no "+", or (mobiles only) with neither."""
    return phone_number(digits, international) is not None


@lru_cache(maxsize=8192)
def phone_number(digits: str, international: bool, strict: bool = False) -> Optional[phonenumbers.PhoneNumber]:
    """The parsed number behind `digits` under the rules of phone_kind, or None.

    A number written with its country code or trunk zero is masked when it has a possible length for its country
    (libphonenumber's is_possible_number): a customer's mistyped or brand-new number is still theirs. Ten digits
    with neither must be a valid mobile number: counts of that size are common in job messages. `strict`: valid
    numbers only (a contact the team will call).
    """
    if digits.startswith("00"):
        digits, international = digits[2:], True
    elif digits.startswith("0"):
        international = False  # "tel:0532...": a national number in an international link
    if not 7 <= len(digits) <= 15:
        return None
    accept = phonenumbers.is_valid_number if strict else phonenumbers.is_possible_number
    if international or (len(digits) == 12 and digits[:2] in ("90", "98")):
        number = _parse("+" + digits, None)
        if number is not None and accept(number):
            return number
        if strict:
            return None
        # Not a number of the country its first digits name: a "+" typed before a national number ("+ 0532...",
        # "+ 532/...") still leaves a Turkish or Iranian number.
    parsed = [(region, _parse(digits, region)) for region in HOME_REGIONS]
    numbers = [(r, n) for r, n in parsed if n is not None and len(str(n.national_number)) == _HOME_NATIONAL_DIGITS]
    for region, number in numbers:
        if phonenumbers.is_valid_number_for_region(number, region) and \
                (digits.startswith("0") or phonenumbers.number_type(number) in _MOBILE_TYPES):
            return number
    if strict or not digits.startswith("0"):
        return None
    # With the trunk zero: Turkish area codes and mobiles start with 2-5, Iranian ones with 1-9 (09 mobiles).
    region = "TR" if digits[1] in "2345" else "IR"
    return next((n for r, n in numbers if r == region and phonenumbers.is_possible_number(n)), None)


def _parse(digits: str, region: Optional[str]) -> Optional[phonenumbers.PhoneNumber]:
    try:
        return phonenumbers.parse(digits, region)
    except phonenumbers.NumberParseException:
        return None


def e164(text: str, international: bool) -> Optional[str]:
    """The number in E.164 (+905321234567) when `text` (digits, maybe with a leading "+") is a valid phone number."""
    number = phone_number(re.sub(r"\D", "", text), international, strict=True)
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164) if number else None
