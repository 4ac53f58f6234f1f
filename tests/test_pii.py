"""Personal data: checksum validators, masking (also with Persian/Arabic digits), contact parsing, log redaction and
the redacting Rasa tracker store read back from its SQLite and PostgreSQL tables."""
from __future__ import annotations

import asyncio
import json
import logging
import uuid

import pytest

from bot.privacy import MASKS, PiiLogFilter, find_pii, install_log_redaction, mask_data, mask_pii, parse_contact
from bot.privacy.checks import is_valid_card, is_valid_iban, is_valid_ir_national_id, is_valid_tc_kimlik
from bot.privacy.normalize import digits_only

# Published test numbers: TC 10000000146 (valid), Iranian code 0499370899, IBANs from the TR/IR bank examples,
# cards are the networks' public test numbers.
VALID_TC = "10000000146"
VALID_IR_ID = "0499370899"
VALID_TR_IBAN = "TR330006100519786457841326"
VALID_IR_IBAN = "IR062960000000100324200001"
VISA_TEST = "4111111111111111"
MASTERCARD_TEST = "5500 0000 0000 0004"
PERSIAN_DIGITS = str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹")
ARABIC_DIGITS = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")


def test_tc_kimlik_checksum():
    assert is_valid_tc_kimlik(VALID_TC)
    assert is_valid_tc_kimlik(digits_only(VALID_TC.translate(PERSIAN_DIGITS)))
    assert not is_valid_tc_kimlik("10000000147")  # last check digit wrong
    assert not is_valid_tc_kimlik("10000000156")  # tenth digit wrong
    assert not is_valid_tc_kimlik("00000000146")  # leading zero is never issued
    assert not is_valid_tc_kimlik("1000000014")


def test_iranian_national_code_checksum():
    assert is_valid_ir_national_id(VALID_IR_ID)
    assert is_valid_ir_national_id("0013542419")
    assert not is_valid_ir_national_id("0499370898")
    assert not is_valid_ir_national_id("1111111111")  # repeated digits pass the arithmetic but are not issued
    assert not is_valid_ir_national_id("049937089")


def test_iban_mod97_and_luhn():
    assert is_valid_iban(VALID_TR_IBAN) and is_valid_iban(VALID_IR_IBAN)
    assert is_valid_iban("tr33 0006 1005 1978 6457 8413 26")
    assert not is_valid_iban("TR330006100519786457841327")
    assert is_valid_card(VISA_TEST) and is_valid_card(digits_only(MASTERCARD_TEST))
    assert not is_valid_card("4111111111111112")
    assert not is_valid_card("0000000000000000")


@pytest.mark.parametrize("text,kind", [
    ("ایمیل من ali.rezaei@example.co.ir است", "email"),
    ("شماره‌ام ۰۹۱۲۱۲۳۴۵۶۷ هست", "phone"),
    ("شماره‌ام +98 912 123 4567 هست", "phone"),
    ("numaram 0532 123 45 67", "phone"),
    ("numaram +90 (532) 123 45 67", "phone"),
    ("ofis 0212 555 12 34", "phone"),
    ("تلفن دفتر ۰۲۱ ۲۲۳۳ ۴۴۵۵", "phone"),
    (f"TC kimlik numaram {VALID_TC}", "tc_kimlik"),
    (f"کد ملی {VALID_IR_ID.translate(PERSIAN_DIGITS)}", "national_id"),
    (f"کد ملی {VALID_IR_ID.translate(ARABIC_DIGITS)}", "national_id"),
    ("IBAN: TR33 0006 1005 1978 6457 8413 26 lütfen", "iban"),
    (f"شبا {VALID_IR_IBAN}", "iban"),
    (f"kart {MASTERCARD_TEST} son kullanma 12/26", "card"),
    (f"کارت {VISA_TEST.translate(PERSIAN_DIGITS)}", "card"),
    ("تلگرام من @ali_rezaei است", "telegram"),
    ("bana t.me/ayse_yilmaz üzerinden yazın", "telegram"),
])
def test_each_kind_is_found_and_masked(text, kind):
    found = find_pii(text)
    assert [f.kind for f in found] == [kind]
    masked = mask_pii(text)
    assert MASKS[kind] in masked
    # Nothing of the personal value survives: no run of 7+ digits (ASCII or Persian/Arabic) is left.
    digits = "".join(ch if ch.isdigit() else " " for ch in masked)
    assert all(len(run) < 7 for run in digits.split())
    assert "@" not in masked


def test_surrounding_text_is_kept_exactly():
    text = "سلام، کد ملی من ۰۴۹۹۳۷۰۸۹۹ است و مدل llama 8b با qlora"
    assert mask_pii(text) == "سلام، کد ملی من [IR_NATIONAL_ID] است و مدل llama 8b با qlora"


@pytest.mark.parametrize("text", [
    "llama 3.1 8b qlora 4096 tokens, budget 500 dollars",
    "۱۰۰۰۰ نمونه با میانگین ۲۰۴۸ توکن و ۳ دوره",
    "10000000000 token toplam",           # 11 digits, fails the TC checksum: a count, not an id
    "1234567890 token",                   # 10 digits, fails the Iranian checksum
    "H100 80GB x 8, 2x A100",
    "message id 4f1c2a90b3d84e5f9a0123456789abcd",
    "T-261129-7KQ4M numaralı talep",
])
def test_ordinary_numbers_are_not_masked(text):
    assert mask_pii(text) == text


def test_mask_data_walks_json_and_skips_structural_keys():
    data = {"text": "mail me at a@b.io", "timestamp": 1.5, "name": "a@b.io",
            "entities": [{"entity": "x", "value": "0532 123 45 67"}], "n": 7}
    out = mask_data(data, skip_keys=("name",))
    assert out == {"text": "mail me at [EMAIL]", "timestamp": 1.5, "name": "a@b.io",
                   "entities": [{"entity": "x", "value": "[PHONE]"}], "n": 7}
    assert data["text"] == "mail me at a@b.io"  # the input is not modified


@pytest.mark.parametrize("raw,kind,value", [
    ("Ali.Rezaei@Example.com", "email", "ali.rezaei@example.com"),
    ("۰۹۱۲ ۱۲۳ ۴۵۶۷", "phone", "+989121234567"),
    ("0532 123 45 67", "phone", "+905321234567"),
    ("+90 532 123 45 67", "phone", "+905321234567"),
    ("0090 532 123 45 67", "phone", "+905321234567"),
    ("+44 20 7946 0958", "phone", "+442079460958"),
    ("@ali_rezaei", "telegram", "@ali_rezaei"),
    ("https://t.me/ali_rezaei", "telegram", "@ali_rezaei"),
])
def test_valid_contacts_are_canonicalised(raw, kind, value):
    contact = parse_contact(raw)
    assert contact is not None and (contact.kind, contact.value) == (kind, value)


@pytest.mark.parametrize("raw", ["hello", "ali_rezaei", "a@b", "@abc", "@bad__name", "12345", "0912 123",
                                 "+98 912 123 45", "بله", ""])
def test_invalid_contacts_are_rejected(raw):
    assert parse_contact(raw) is None


def test_log_filter_masks_message_and_arguments(caplog):
    logger = logging.getLogger("test.pii.filter")
    handler_filter = PiiLogFilter()
    logger.addFilter(handler_filter)
    try:
        with caplog.at_level(logging.INFO, logger="test.pii.filter"):
            logger.info("user said %s and %s", "call 09121234567", {"iban": VALID_TR_IBAN})
    finally:
        logger.removeFilter(handler_filter)
    text = caplog.records[-1].getMessage()
    assert "[PHONE]" in text and "[IBAN]" in text
    assert "09121234567" not in caplog.text and VALID_TR_IBAN not in caplog.text


def test_json_escaped_persian_digits_in_logs_are_masked(caplog):
    install_log_redaction()
    with caplog.at_level(logging.DEBUG):
        # Rasa's structlog output: JSON with ensure_ascii, so Persian digits arrive as \u06f0 escapes.
        logging.getLogger("rasa.core.policies.rule_policy").debug(
            json.dumps({"current_states": f"user text: کد ملی {VALID_IR_ID.translate(PERSIAN_DIGITS)}"}))
    assert "[IR_NATIONAL_ID]" in caplog.text
    assert json.dumps(VALID_IR_ID.translate(PERSIAN_DIGITS))[1:-1] not in caplog.text


def test_installed_redaction_covers_every_logger(caplog):
    install_log_redaction()
    with caplog.at_level(logging.DEBUG):
        logging.getLogger("rasa.core.processor").debug("Received user message 'my TC is %s'", VALID_TC)
        logging.getLogger("some.other.lib").warning("card %s", VISA_TEST)
    assert VALID_TC not in caplog.text and VISA_TEST not in caplog.text
    assert "[TC_KIMLIK]" in caplog.text and "[CARD]" in caplog.text


# ------------------------------------------------------------------ redacting tracker store

PII_CONVERSATION = [
    f"سلام، ایمیل من ali.rezaei@example.com و موبایلم ۰۹۱۲۱۲۳۴۵۶۷ است، کد ملی {VALID_IR_ID}",
    f"TC kimlik {VALID_TC}, IBAN {VALID_TR_IBAN}, kart {MASTERCARD_TEST}",
]
SECRETS = ["ali.rezaei@example.com", "09121234567", "۰۹۱۲۱۲۳۴۵۶۷", VALID_IR_ID, VALID_TC, VALID_TR_IBAN,
           MASTERCARD_TEST, MASTERCARD_TEST.replace(" ", "")]


def _tracker_with_pii(sender: str):
    from rasa.shared.core.events import ActionExecuted, BotUttered, SlotSet, UserUttered
    from rasa.shared.core.trackers import DialogueStateTracker

    tracker = DialogueStateTracker.from_events(sender, [])
    for text in PII_CONVERSATION:
        tracker.update(UserUttered(text, intent={"name": "inform", "confidence": 0.9},
                                   entities=[{"entity": "contact", "value": "0532 123 45 67", "start": 0, "end": 3}],
                                   parse_data={"text": text, "intent": {"name": "inform"}, "entities": []},
                                   metadata={"note": "kart " + VISA_TEST}))
        tracker.update(ActionExecuted("action_listen"))
        tracker.update(BotUttered(f"You wrote: {text}"))
    tracker.update(SlotSet("handoff_contact", "+905321234567"))
    return tracker


def _assert_store_masks(store, read_rows, sender):
    tracker = _tracker_with_pii(sender)
    asyncio.run(store.save(tracker))
    rows = read_rows()
    assert len(rows) == len(tracker.events)
    raw = "\n".join(rows)
    for secret in SECRETS + ["+905321234567", VISA_TEST]:
        assert secret not in raw, f"{secret} stored in clear"
        assert json.dumps(secret)[1:-1] not in raw
    for mask in ("[EMAIL]", "[PHONE]", "[IR_NATIONAL_ID]", "[TC_KIMLIK]", "[IBAN]", "[CARD]"):
        assert mask in raw
    # Read back through Rasa: the conversation is intact, only masked.
    restored = asyncio.run(store.retrieve(sender))
    texts = [e.text for e in restored.events if getattr(e, "text", None)]
    assert len(texts) == 2 * len(PII_CONVERSATION)
    assert texts[0].startswith("سلام، ایمیل من [EMAIL] و موبایلم [PHONE] است")
    assert restored.get_slot("handoff_contact") is None or restored.get_slot("handoff_contact") == "[PHONE]"
    # A second save appends nothing twice.
    asyncio.run(store.save(restored))
    assert len(read_rows()) == len(tracker.events)


def test_redacting_tracker_store_sqlite(tmp_path):
    import sqlite3

    from bot.assistant.tracker_store import RedactingSQLTrackerStore

    db = tmp_path / "sub" / "tracker.db"
    store = RedactingSQLTrackerStore(dialect="sqlite", db=str(db))
    sender = f"pii-{uuid.uuid4().hex[:8]}"

    def rows():
        with sqlite3.connect(db) as conn:
            return [r[0] for r in conn.execute("SELECT data FROM events WHERE sender_id = ?", (sender,))]

    _assert_store_masks(store, rows, sender)


@pytest.mark.postgres
def test_redacting_tracker_store_postgresql():
    import psycopg2

    from bot.assistant.tracker_store import RedactingSQLTrackerStore

    store = RedactingSQLTrackerStore(dialect="postgresql", host="127.0.0.1", port=5432, db="test",
                                     username="postgres")
    sender = f"pii-{uuid.uuid4().hex[:8]}"

    def rows():
        with psycopg2.connect("postgresql://postgres@127.0.0.1:5432/test") as conn, conn.cursor() as cur:
            cur.execute("SELECT data FROM events WHERE sender_id = %s ORDER BY id", (sender,))
            return [r[0] for r in cur.fetchall()]

    try:
        _assert_store_masks(store, rows, sender)
    finally:
        with psycopg2.connect("postgresql://postgres@127.0.0.1:5432/test") as conn, conn.cursor() as cur:
            cur.execute("DELETE FROM events WHERE sender_id = %s", (sender,))


def test_exception_messages_and_tracebacks_are_masked_in_the_log(tmp_path):
    """Security review finding 5: logging.Formatter fills in the traceback after every filter has run, so an
    exception quoting the customer's message reached var/log/rasa.log in clear."""
    install_log_redaction()
    log_file = tmp_path / "rasa.log"
    handler = logging.FileHandler(log_file)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s - %(message)s"))
    logger = logging.getLogger("rasa.core.processor.h6")
    logger.addHandler(handler)
    try:
        try:
            raise ValueError(f"cannot parse 'telefonum +90 532 765 43 21, e-posta rt12exc@example.com, TC {VALID_TC}'")
        except ValueError:
            logger.exception("Encountered an exception while running action")
        logger.error("failed", exc_info=RuntimeError("0912 123 45 67"), stack_info=True)
    finally:
        logger.removeHandler(handler)
        handler.close()
    text = log_file.read_text()
    assert "Traceback" in text and "ValueError" in text
    for secret in ("+90 532 765 43 21", "rt12exc@example.com", VALID_TC, "0912 123 45 67"):
        assert secret not in text
    assert "[PHONE]" in text and "[EMAIL]" in text and "[TC_KIMLIK]" in text
