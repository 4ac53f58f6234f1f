"""Streaming reader of a customer's training file: JSONL (or a JSON array), CSV or XLSX -> (line, Example | Problem).

The file is checked before it is parsed (size, renamed binaries, zip bombs, encodings) and read line by line with a
bounded line length, so a 2 GB line or a 2 GB file costs neither memory nor a crash: the whole file is refused with
a FileRejected code, or one line with a Problem code. Neither carries any of the file's content.
"""
from __future__ import annotations

import codecs
import csv
import io
import json
import os
import zipfile
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from bot.dataset.formats import Parsed, Problem, parse_record, qa_example

SNIFF_BYTES = 65536  # enough for the magic numbers and a CSV header; csv.Sniffer reads this much too

# Magic numbers of the binaries people rename to .jsonl/.csv (file(1)'s magic database)
_BINARY_MAGIC = (b"%PDF", b"\x89PNG", b"GIF8", b"\xff\xd8\xff", b"\x7fELF", b"\x1f\x8b", b"BZh", b"\xfd7zXZ",
                 b"Rar!", b"7z\xbc\xaf", b"\xd0\xcf\x11\xe0", b"MZ", b"SQLite format 3", b"\x00\x00\x00")
_ZIP_MAGIC = b"PK\x03\x04"
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


@dataclass(frozen=True)
class ReadLimits:
    """A channel's limits (knowledge/dataset.yml `limits`)."""

    max_bytes: int
    max_line_bytes: int
    max_unpacked_bytes: int  # an XLSX is a zip: the sum of its members' sizes once unpacked
    max_zip_ratio: int       # unpacked / packed; office files compress about 10:1, zip bombs 1000:1 and more


class FileRejected(Exception):
    """The whole file is refused; `code` names a text in knowledge/dataset.yml `rejections`."""

    def __init__(self, code: str, **params):
        self.code, self.params = code, params
        super().__init__(code)


class ColumnsNeeded(Exception):
    """A spreadsheet whose question and answer columns could not be told apart; `count` columns were found."""

    def __init__(self, count: int):
        self.count = count
        super().__init__(f"{count} columns")


def file_kind(path: str, head: bytes) -> str:
    """jsonl | json | csv | xlsx from the name and the first bytes; FileRejected for binaries and other encodings."""
    name = path.lower()
    if head.startswith(_ZIP_MAGIC):
        if name.endswith((".xlsx", ".xlsm")):
            return "xlsx"
        raise FileRejected("zip_not_xlsx")
    if any(head.startswith(magic) for magic in _BINARY_MAGIC if len(head) >= len(magic)) or b"\x00" in head:
        if head.startswith(_UTF16_BOMS) or b"\x00" in head[:4] and not head.startswith(b"\x00\x00\x00"):
            raise FileRejected("not_utf8")
        raise FileRejected("binary_file")
    if name.endswith((".xlsx", ".xlsm", ".xls")):
        raise FileRejected("binary_file")  # a spreadsheet name on something that is not a zip
    kind = _text_kind(name, head)
    # One undecodable JSONL line is that line's problem; a CSV (read as one text stream) or a first line that is
    # not UTF-8 means the file is in another encoding.
    _check_utf8_prefix(head if kind == "csv" else head.split(b"\n", 1)[0])
    return kind


def _text_kind(name: str, head: bytes) -> str:
    if name.endswith((".csv", ".tsv")):
        return "csv"
    first = head.lstrip(codecs.BOM_UTF8 + b" \t\r\n")[:1]
    if first == b"[":
        return "json"
    if first == b"{" or name.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    return "csv"


def _check_utf8_prefix(head: bytes) -> None:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not merely a character cut by the sniff window
            raise FileRejected("not_utf8") from None


def check_zip(path: str, limits: ReadLimits) -> None:
    """Refuse a zip whose members unpack beyond the limit or compress like a bomb (before openpyxl opens it)."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except zipfile.BadZipFile:
        raise FileRejected("binary_file") from None
    unpacked = sum(member.file_size for member in members)
    packed = max(1, sum(member.compress_size for member in members))
    if unpacked > limits.max_unpacked_bytes or unpacked / packed > limits.max_zip_ratio:
        raise FileRejected("zip_bomb")
    if not any(member.filename == "xl/workbook.xml" for member in members):
        raise FileRejected("zip_not_xlsx")


class DatasetReader:
    """Iterate (line number, Example | Problem) over a file; `kind` says how it was read."""

    def __init__(self, path: str, limits: ReadLimits, columns: Optional[Tuple[int, int]] = None,
                 header_words: Optional[Dict[str, Sequence[str]]] = None):
        self.path, self.limits, self.columns = path, limits, columns
        self.header_words = header_words or {"question": ("question",), "answer": ("answer",)}
        size = os.path.getsize(path)
        if size == 0:
            raise FileRejected("empty_file")
        if size > limits.max_bytes:
            raise FileRejected("too_large", limit_mb=limits.max_bytes // 1_000_000)
        with open(path, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
        self.kind = file_kind(path, head)
        if self.kind == "xlsx":
            check_zip(path, limits)
        self.head = head

    def __iter__(self) -> Iterator[Tuple[int, Parsed]]:
        if self.kind == "jsonl":
            return self._jsonl()
        if self.kind == "json":
            return self._json_array()
        if self.kind == "csv":
            return self._csv()
        return self._xlsx()

    # ------------------------------------------------------------------------------------------ JSON
    def _jsonl(self) -> Iterator[Tuple[int, Parsed]]:
        return jsonl_range(self.path, 0, os.path.getsize(self.path), 1, self.limits.max_line_bytes)

    def _json_array(self) -> Iterator[Tuple[int, Parsed]]:
        if os.path.getsize(self.path) > self.limits.max_line_bytes * 4:
            raise FileRejected("json_array_too_large")  # a JSON array is parsed whole; JSONL streams
        try:
            with open(self.path, encoding="utf-8-sig") as handle:
                records = json.load(handle)
        except (ValueError, UnicodeDecodeError):
            raise FileRejected("bad_json_file") from None
        if not isinstance(records, list):
            raise FileRejected("bad_json_file")
        for number, record in enumerate(records, start=1):
            yield number, parse_record(record)

    # ------------------------------------------------------------------------------------------ CSV
    def _csv(self) -> Iterator[Tuple[int, Parsed]]:
        csv.field_size_limit(self.limits.max_line_bytes)
        sample = self.head.decode("utf-8-sig", errors="ignore")
        try:
            dialect = csv.Sniffer().sniff(sample, delimiters=",;\t|")
        except csv.Error:
            dialect = csv.excel
        with open(self.path, encoding="utf-8-sig", errors="strict", newline="") as handle:
            reader = csv.reader(handle, dialect)
            rows = _csv_rows(reader)
            try:
                header = next(rows)[1]
            except StopIteration:
                raise FileRejected("empty_file") from None
            if header is None:
                raise FileRejected("not_utf8")
            question, answer = self._choose_columns(header)
            for number, row in rows:
                if row is None:
                    yield number, Problem("line_too_long")
                elif any(cell.strip() for cell in row):
                    yield number, _row_example(row, question, answer)

    # ------------------------------------------------------------------------------------------ XLSX
    def _xlsx(self) -> Iterator[Tuple[int, Parsed]]:
        import openpyxl  # read-only mode streams the sheet; data_only=False keeps formulas as formulas, unevaluated

        try:
            workbook = openpyxl.load_workbook(self.path, read_only=True, data_only=False, keep_links=False)
        except Exception:  # openpyxl raises a dozen kinds for a broken workbook
            raise FileRejected("binary_file") from None
        try:
            rows = workbook.worksheets[0].iter_rows()
            header_cells = next(rows, None)
            if header_cells is None:
                raise FileRejected("empty_file")
            header = ["" if cell.value is None else str(cell.value) for cell in header_cells]
            question, answer = self._choose_columns(header)
            for number, cells in enumerate(rows, start=2):
                cells = tuple(cells)
                if any(getattr(cell, "data_type", None) == "f" for cell in cells):
                    yield number, Problem("formula_cell")
                    continue
                values = ["" if cell.value is None else str(cell.value) for cell in cells]
                if any(value.strip() for value in values):
                    yield number, _row_example(values, question, answer)
        finally:
            workbook.close()

    def _choose_columns(self, header: List[str]) -> Tuple[int, int]:
        if self.columns:
            question, answer = self.columns
            if max(question, answer) >= len(header):
                raise ColumnsNeeded(len(header))
            return question, answer
        found = {}
        for role, words in self.header_words.items():
            for index, name in enumerate(header):
                if name.strip().casefold() in words:
                    found.setdefault(role, index)
        if len(found) == 2 and found["question"] != found["answer"]:
            return found["question"], found["answer"]
        if len([name for name in header if name.strip()]) == 2 and len(header) == 2:
            return 0, 1
        raise ColumnsNeeded(len(header))


def jsonl_range(path: str, start: int, end: int, first_line: int,
                max_line_bytes: int) -> Iterator[Tuple[int, Parsed]]:
    """(line number, Example | Problem) of the JSONL lines that start in [start, end); `start` begins a line."""
    with open(path, "rb") as handle:
        handle.seek(start)
        for number, raw in enumerate(_bounded_lines(handle, max_line_bytes), start=first_line):
            if raw is None:
                yield number, Problem("line_too_long")
            else:
                if number == 1 and raw.startswith(codecs.BOM_UTF8):
                    raw = raw[len(codecs.BOM_UTF8):]
                if raw.strip():
                    yield number, _parse_json_line(raw)
            if handle.tell() >= end:
                return


def line_starts(path: str, parts: int) -> List[Tuple[int, int, int]]:
    """The file cut into up to `parts` (start, end, first line number) ranges at line starts."""
    size = os.path.getsize(path)
    cuts = [0]
    with open(path, "rb") as handle:
        for part in range(1, parts):
            handle.seek(max(size * part // parts, cuts[-1]))
            for _ in _bounded_lines(handle, 1 << 20):  # skip to the next line start, a long line in chunks
                break
            if cuts[-1] < handle.tell() < size:
                cuts.append(handle.tell())
        cuts.append(size)
        lines, handle_position, numbers = 1, 0, [1]
        handle.seek(0)
        for cut in cuts[1:-1]:
            while handle_position < cut:
                block = handle.read(min(1 << 20, cut - handle_position))
                lines += block.count(b"\n")
                handle_position += len(block)
            numbers.append(lines)
    return [(cuts[i], cuts[i + 1], numbers[i]) for i in range(len(cuts) - 1)]


def _row_example(row: Sequence[str], question: int, answer: int) -> Parsed:
    if max(question, answer) >= len(row):
        return Problem("missing_column")
    return qa_example(row[question], row[answer])


def _csv_rows(reader) -> Iterator[Tuple[int, Optional[List[str]]]]:
    """(physical line number, row); None for a row over the field limit or one that is not UTF-8."""
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error:
            yield reader.line_num, None
            continue
        except UnicodeDecodeError:
            yield reader.line_num + 1, None
            return  # the decoder's position is lost; the rest of the file cannot be read reliably
        yield reader.line_num, row


def _parse_json_line(raw: bytes) -> Parsed:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return Problem("not_utf8_line")
    try:
        record = json.loads(text)
    except ValueError:
        return Problem("bad_json")
    return parse_record(record)


def _bounded_lines(handle: io.BufferedReader, max_line_bytes: int) -> Iterator[Optional[bytes]]:
    """Lines of at most max_line_bytes; a longer line is skipped in chunks (constant memory) and yields None."""
    while True:
        line = handle.readline(max_line_bytes + 1)
        if not line:
            return
        if len(line) <= max_line_bytes or line.endswith(b"\n") and len(line) == max_line_bytes + 1:
            yield line
            continue
        while not line.endswith(b"\n"):
            line = handle.readline(1 << 20)
            if not line:
                break
        yield None
