"""Every log path of a process through the masking: logging records, Python warnings and their tracebacks.

Rasa reports odd input (a message starting with "/" that names no intent, entities it cannot read) through Python
`warnings`, which print to stderr without passing any logging filter: var/log/rasa.log held phone numbers, e-mail
addresses and TC numbers typed after a "/" (issue 20 finding 5). install_log_redaction sends warnings through logging
(logging.captureWarnings) and masks every record the process creates, whichever logger, handler or formatter
writes it; mask_handlers adds the filter to the handlers that exist, for records built before the factory was set.
"""
from __future__ import annotations

import logging
import re
import warnings
from typing import Any, Callable, Iterable, Optional

from bot.privacy.pii import find_pii, mask_pii, replace_findings

# JSON written with ensure_ascii (Rasa's structured debug logs) carries non-ASCII as \\uXXXX: Persian digits,
# NBSP separators, "ö" in an IDN address. Such escapes are written as the characters they stand for before masking.
_ESCAPED_CHAR = re.compile(r"\\u([0-9a-fA-F]{4})")


def _unescape_json_chars(message: str) -> str:
    def char(m: "re.Match[str]") -> str:
        code = int(m.group(1), 16)
        return m.group(0) if 0xD800 <= code <= 0xDFFF else chr(code)

    return _ESCAPED_CHAR.sub(char, message)


# Inside a JSON string a line break or tab is written "\\n" / "\\t": two characters that would split a number's
# groups with a letter. They are read as two spaces (same length, so the spans found fit the message as written).
_ESCAPED_SPACE = re.compile(r"\\[nrt]")


def mask_log_text(message: str) -> str:
    """A log message masked, with JSON escapes read as the characters they stand for."""
    message = _unescape_json_chars(message)
    view = _ESCAPED_SPACE.sub("  ", message)
    return mask_pii(message) if view == message else replace_findings(message, find_pii(view))


class PiiLogFilter(logging.Filter):
    """Masks personal data in log records (message and arguments) before any handler writes them."""

    def filter(self, record: logging.LogRecord) -> bool:
        mask_log_record(record)
        return True


def mask_log_record(record: logging.LogRecord) -> logging.LogRecord:
    """Mask the message, its arguments, the exception (message and traceback) and the stack of a log record.

    The traceback is formatted here, while the record is created: logging.Formatter would format it later, after
    every filter has run, and write an exception message that quotes the customer's text in clear.
    """
    # Masked already when the message is still the masked one: logging.makeLogRecord builds a record through the
    # factory and then overwrites its message, which must be masked again.
    if getattr(record, "_pii_masked", None) is record.msg and not record.args:
        return record
    try:
        message = record.getMessage()
    except Exception:  # a broken format string must still reach the log, masked
        message = str(record.msg)
    record.msg = mask_log_text(message)
    record.args = ()
    if record.exc_info and not record.exc_text:
        try:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        except Exception:  # an exception whose str() fails: keep its type only
            record.exc_text = getattr(record.exc_info[0], "__name__", "exception")
    if record.exc_text:
        record.exc_text = mask_log_text(record.exc_text)
    if record.stack_info:
        record.stack_info = mask_pii(record.stack_info)
    record._pii_masked = record.msg
    return record


_PII_FILTER = PiiLogFilter()
_installed = False


def mask_handlers(handlers: Optional[Iterable[logging.Handler]] = None) -> None:
    """Put the masking filter on `handlers` (default: every handler of every logger there is now), once each.

    The record factory already masks what this process logs; the filter also covers records a library builds
    itself (logging.makeLogRecord) and handlers a logging config file adds."""
    if handlers is None:
        loggers = [logging.getLogger()] + [lg for lg in list(logging.Logger.manager.loggerDict.values())
                                           if isinstance(lg, logging.Logger)]
        handlers = [h for lg in loggers for h in lg.handlers]
    for handler in list(handlers):
        if _PII_FILTER not in handler.filters:
            handler.addFilter(_PII_FILTER)


def install_log_redaction() -> None:
    """Mask personal data in every log record and every warning of this process.

    A filter on the root logger would miss records of child loggers (filters do not propagate), so the record
    factory is wrapped: records are created only for enabled levels, so disabled debug logging costs nothing.
    Warnings become records of the "py.warnings" logger (logging.captureWarnings), created through that factory.
    """
    global _installed
    # The word lists of knowledge/privacy.yml are read and checked now: a broken file stops the server at start,
    # not inside the first log record it masks.
    mask_pii("Moda Mah. No: 1, 0532 000 00 00")
    if not _installed:
        previous: Callable[..., logging.LogRecord] = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            return mask_log_record(previous(*args, **kwargs))

        logging.setLogRecordFactory(factory)
        _installed = True
    capture_warnings()
    mask_handlers()


def capture_warnings() -> None:
    """warnings.warn(...) as a masked log record instead of a line on stderr (again if something reset it)."""
    if getattr(warnings.showwarning, "__module__", "") != "logging":
        # captureWarnings(True) does nothing when it was called before and something has replaced showwarning
        # since: undo it first, so the replacement is the one kept and restored.
        logging.captureWarnings(False)
        logging.captureWarnings(True)
