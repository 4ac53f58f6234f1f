"""Personal data (KVKK): detection, masking, the consented contact and the log redaction of every process.

    from bot.privacy import find_pii, mask_pii, count_pii

find_pii(text) -> [Finding(kind, start, end)], mask_pii(text) -> str, count_pii(text) -> {kind: n}; kinds in KINDS.
"""
from bot.privacy.contact import Contact, parse_contact
from bot.privacy.logs import PiiLogFilter, install_log_redaction, mask_log_record
from bot.privacy.pii import (KINDS, MASKS, Finding, contains_pii, count_pii, find_pii, mask_data, mask_pii,
                             mask_sender_id, masked_pairs, number_is_pii)

__all__ = ["Contact", "parse_contact", "PiiLogFilter", "install_log_redaction", "mask_log_record", "KINDS", "MASKS",
           "Finding", "contains_pii", "count_pii", "find_pii", "mask_data", "mask_pii", "mask_sender_id",
           "masked_pairs", "number_is_pii"]
