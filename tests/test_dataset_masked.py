"""The masked copy of a checked file (bot/dataset/uploads.py, channel_check.py, the widget's download handler):
written only when personal data is found, bound to its conversation, served in chunks over the session, and gone
after its download, its Telegram delivery or its expiry - nothing left in the upload folder."""
import asyncio
import json
import time

import pytest

from bot.assistant.channels import dataset_upload
from bot.dataset import channel_check, uploads
from bot.dataset.analysis import DatasetReport
from bot.dataset.report import render_summary
from bot.dataset.texts import load_dataset_knowledge

KB = load_dataset_knowledge()
PHONE = "0532 444 21 09"
QUESTION = "Zeytinyağlı sabun siparişim Bodrum'a ne zaman gelir?"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("ADVISOR_UPLOAD_DIR", str(tmp_path))
    yield tmp_path
    for copy_id in list(uploads._MASKED):
        uploads.drop_masked(copy_id)


def _records(with_phone: bool, count: int = 6):
    for index in range(count):
        answer = f"Kargonuz {index + 2} gün içinde teslim edilir."
        if with_phone and index == 0:
            answer += f" Sorunuz olursa {PHONE} numarasını arayın."
        yield {"messages": [{"role": "user", "content": f"{QUESTION} ({index})"},
                            {"role": "assistant", "content": answer}]}


async def _upload(folder, records, conversation="conv-1", original="müşteri verisi.jsonl"):
    name = await uploads.store(uploads.one_chunk("".join(json.dumps(r, ensure_ascii=False) + "\n"
                                                         for r in records).encode()), original, 10**7)
    payload = await channel_check.check_upload(name, "socketio", "qwen2.5-7b", original, conversation)
    assert payload.startswith("/dataset_upload")
    return json.loads(payload[len("/dataset_upload"):])["dataset_report"]


def test_a_file_with_personal_data_leaves_one_masked_copy_for_its_conversation(folder):
    report = asyncio.run(_upload(folder, _records(True)))
    assert report["pii"] == {"phone": 1}
    assert report["extra"]["masked_copy"] == {"channel": "widget", "minutes": uploads.MASKED_MAX_AGE_S // 60}
    files = sorted(path.name for path in folder.iterdir())
    assert len(files) == 1 and uploads.MASKED_NAME.match(files[0]), files  # the upload itself is gone
    assert (folder / files[0]).stat().st_mode & 0o777 == 0o600
    assert uploads.take_masked("conv-2") is None  # another conversation never sees it
    copy = uploads.take_masked("conv-1")
    assert copy is not None and copy.file_name == "müşteri_verisi-masked.jsonl"
    assert uploads.take_masked("conv-1") is None  # announced once
    text = copy.path.read_text(encoding="utf-8")
    assert PHONE not in text and "[PHONE]" in text and text.count("\n") == 6


def test_a_file_without_personal_data_leaves_nothing(folder):
    report = asyncio.run(_upload(folder, _records(False)))
    assert report["pii"] == {} and "masked_copy" not in report.get("extra", {})
    assert list(folder.iterdir()) == [] and uploads.take_masked("conv-1") is None


def test_the_widget_download_comes_in_chunks_over_its_session_then_the_copy_is_deleted(folder, monkeypatch):
    monkeypatch.setattr(dataset_upload, "MASKED_CHUNK_BYTES", 100)
    asyncio.run(_upload(folder, _records(True)))
    copy = uploads.take_masked("conv-1")
    expected = copy.path.read_bytes()
    assert dataset_upload.masked_chunk("conv-2", copy.copy_id, 0) == {"error": "gone"}  # not this session's
    assert dataset_upload.masked_chunk("conv-1", copy.copy_id, -1) == {"error": "bad_request"}
    received, index = b"", 0
    while True:
        answer = dataset_upload.masked_chunk("conv-1", copy.copy_id, index)
        received += answer["data"]
        index += 1
        if answer["last"]:
            break
    assert received == expected and index == -(-len(expected) // 100)
    assert list(folder.iterdir()) == []
    assert dataset_upload.masked_chunk("conv-1", copy.copy_id, 0) == {"error": "gone"}


def test_an_offered_copy_expires_and_the_sweep_deletes_it(folder):
    asyncio.run(_upload(folder, _records(True)))
    copy = uploads.take_masked("conv-1")
    copy.created -= uploads.MASKED_MAX_AGE_S + 1
    assert uploads.masked_copy(copy.copy_id, "conv-1") is None
    assert list(folder.iterdir()) == []
    # a copy left by a server that stopped: only the file remains, the sweep removes it by age
    stray = folder / ("masked-" + "ab" * 16 + ".csv")
    stray.write_text("x")
    assert uploads.sweep(now=time.time() + uploads.MASKED_MAX_AGE_S + 1) == 1 and not stray.exists()


def test_the_summary_names_the_copy_in_each_language():
    fields = {name: None for name in DatasetReport.__dataclass_fields__}
    report = DatasetReport(**{**fields, "file_kind": "jsonl", "examples": 3, "pii": {"phone": 1}, "languages": {},
                              "duplicates": {"exact": 0, "near": 0}, "short_examples": {"count": 0},
                              "mixed_format_lines": [], "problems": {}, "problem_counts": {}, "invalid_lines": [],
                              "tokens": {"median": 10, "p95": 12, "max": 14, "total": 30},
                              "seq_len_cover": {"95": 12, "99": 14}, "seq_len": 256, "truncated": 0,
                              "tokens_per_epoch": 30, "validation": {"validation": 0, "train": 3},
                              "tokenizer": {"name": "Qwen", "stand_in": False, "model": "qwen2.5-7b"},
                              "extra": {"masked_copy": {"channel": "widget", "minutes": 10}}})
    assert "فقط 10 دقیقه یا تا دریافت" in render_summary(report, "fa")
    assert "10 dakika" in render_summary(report, "tr") and "düğmeyle indirebilirsiniz" in render_summary(report, "tr")
    report.extra = {"masked_copy": {"channel": "telegram"}}
    assert "bir sonraki mesajda" in render_summary(report, "tr")
    report.extra = {}
    assert "maskelenmiş" not in render_summary(report, "tr")  # no copy made: no promise of one
