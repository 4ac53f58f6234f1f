"""Every log path of a process through the masking (issue 20 finding 5): Python warnings, records built without the
record factory, JSON-escaped line breaks inside a logged number (the servers' own logs are checked end to end in
tests/e2e/test_pii_new_forms.py); the word lists of knowledge/privacy.yml checked on load; count_pii, the counting
API of the dataset check."""
from __future__ import annotations

import logging
import warnings

from bot.privacy import install_log_redaction
from bot.privacy.logs import PiiLogFilter, capture_warnings, mask_handlers, mask_log_text


def _file_logger(tmp_path, name):
    handler = logging.FileHandler(tmp_path / "app.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s - %(message)s"))
    logging.getLogger().addHandler(handler)
    return handler


def test_warnings_reach_the_log_masked(tmp_path):
    install_log_redaction()
    handler = _file_logger(tmp_path, "root")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            capture_warnings()  # as the servers do after configuring logging (pytest had replaced showwarning)
            warnings.warn("Failed to parse arguments in line '/inform{\"tel\": \"0543 876 21 09\"}' from "
                          "melis.tan@example.net", UserWarning)
    finally:
        logging.getLogger().removeHandler(handler)
        handler.close()
    text = (tmp_path / "app.log").read_text(encoding="utf-8")
    assert "py.warnings" in text and "[PHONE]" in text and "[EMAIL]" in text
    assert "876 21 09" not in text and "melis.tan" not in text


def test_install_puts_the_filter_on_every_handler_and_it_masks_records_built_elsewhere(tmp_path):
    handler = _file_logger(tmp_path, "root")
    child = logging.getLogger("test.pii.logs.child")
    child_handler = logging.StreamHandler()
    child.addHandler(child_handler)
    try:
        install_log_redaction()
        mask_handlers()
        for h in (handler, child_handler):
            assert any(isinstance(f, PiiLogFilter) for f in h.filters)
        # A record made without the record factory (logging.makeLogRecord, as some libraries do) is masked by
        # the handler's filter.
        record = logging.makeLogRecord({"name": "lib", "levelno": logging.INFO, "levelname": "INFO",
                                        "msg": "kimlik %s", "args": ("1000000014 6",)})
        handler.handle(record)
    finally:
        logging.getLogger().removeHandler(handler)
        child.removeHandler(child_handler)
        handler.close()
    text = (tmp_path / "app.log").read_text(encoding="utf-8")
    assert "kimlik [TC_KIMLIK]" in text and "1000000014" not in text


def test_json_escaped_line_breaks_and_persian_digits_in_a_logged_number():
    logged = r'{"text": "cep\n0544\n312\n77\n06 ve kod \u06f0\u06f4\u06f9\u06f9\u06f3\u06f7\u06f0\u06f8\u06f9\u06f9"}'
    masked = mask_log_text(logged)
    assert masked == '{"text": "cep\\n[PHONE] ve kod [IR_NATIONAL_ID]"}'


# ---------------------------------------------------------------- the word lists and the counting API

def test_word_lists_are_checked_on_load(tmp_path):
    import pytest
    import yaml

    from bot.privacy.address import WORDS_PATH, AddressWordsError, load_words

    data = yaml.safe_load(WORDS_PATH.read_text(encoding="utf-8"))
    assert set(load_words()) >= {"tr", "fa", "phone_words", "iban_words"}
    data["fa"]["street"] = []
    broken = tmp_path / "privacy.yml"
    broken.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(AddressWordsError, match="fa.street"):
        load_words(broken)


def test_count_pii_gives_counts_by_kind_and_never_the_values():
    from bot.privacy import KINDS, count_pii

    text = ("numaram 0532 987 65 43, yedek ۰۹۱۲ ۳۴۵ ۶۷۸۹; e-posta ece.demir@example.com; TC 10000000146; "
            "kod ملی 0499370899; kart 4111 1111 1111 1111; IBAN TR33 0006 1005 1978 6457 8413 26; "
            "adres Moda Mah. Şair Nefi Sok. No:7 Kadıköy/İstanbul")
    counts = count_pii(text)
    assert counts == {"phone": 2, "email": 1, "tc_kimlik": 1, "iban": 1, "card": 1, "national_id": 1,
                      "address": 1, "telegram": 0}
    assert set(counts) == set(KINDS) and all(isinstance(v, int) for v in counts.values())
    assert count_pii("llama 3.1 8b qlora 2048 token 60 dolar") == dict.fromkeys(KINDS, 0)
