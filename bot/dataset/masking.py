"""A copy of the customer's file with personal data masked ([PHONE], [EMAIL], [ADDRESS] ...).

JSONL keeps its records (lines that are not JSON are left out: they could not be masked reliably); CSV and XLSX
become a CSV of their cells (formula cells left empty, never evaluated).
"""
from __future__ import annotations

import csv
import json
from typing import Any

from bot.dataset.pii_counts import mask
from bot.dataset.reader import ReadLimits, _bounded_lines


def _mask_value(value: Any) -> Any:
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, list):
        return [_mask_value(item) for item in value]
    if isinstance(value, dict):
        return {key: _mask_value(item) for key, item in value.items()}
    return value


def write_masked_copy(source: str, target: str, kind: str, limits: ReadLimits) -> int:
    """Write the masked copy; returns the number of records or rows written."""
    if kind in ("jsonl", "json"):
        return _masked_jsonl(source, target, kind, limits)
    rows = _spreadsheet_rows(source, kind, limits)
    written = 0
    with open(target, "w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        for row in rows:
            writer.writerow([mask(cell) for cell in row])
            written += 1
    return written


def _masked_jsonl(source: str, target: str, kind: str, limits: ReadLimits) -> int:
    written = 0
    with open(target, "w", encoding="utf-8") as out:
        for record in _json_records(source, kind, limits):
            out.write(json.dumps(_mask_value(record), ensure_ascii=False) + "\n")
            written += 1
    return written


def _json_records(source: str, kind: str, limits: ReadLimits):
    if kind == "json":
        with open(source, encoding="utf-8-sig") as handle:
            yield from json.load(handle)
        return
    with open(source, "rb") as handle:
        for raw in _bounded_lines(handle, limits.max_line_bytes):
            if raw is None or not raw.strip():
                continue
            try:
                yield json.loads(raw.decode("utf-8-sig"))
            except (ValueError, UnicodeDecodeError):
                continue


def _spreadsheet_rows(source: str, kind: str, limits: ReadLimits):
    if kind == "csv":
        csv.field_size_limit(limits.max_line_bytes)
        with open(source, encoding="utf-8-sig", newline="") as handle:
            sample = handle.read(65536)
            handle.seek(0)
            try:
                dialect = csv.Sniffer().sniff(sample, delimiters=",;\t|")
            except csv.Error:
                dialect = csv.excel
            yield from csv.reader(handle, dialect)
        return
    import openpyxl

    workbook = openpyxl.load_workbook(source, read_only=True, data_only=False, keep_links=False)
    try:
        for cells in workbook.worksheets[0].iter_rows():
            yield ["" if cell.value is None or getattr(cell, "data_type", None) == "f" else str(cell.value)
                   for cell in cells]
    finally:
        workbook.close()
