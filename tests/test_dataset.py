"""The data check (bot/dataset/): files of our own making in every format, in Persian, Turkish and English,
broken ones included; token counts against the reference tokenizers; the CLI's JSON and the estimate."""
import json
import os
import subprocess
import sys
import zipfile

import pytest

from bot.dataset.analysis import analyse_file
from bot.dataset.masking import write_masked_copy
from bot.dataset.reader import ColumnsNeeded, FileRejected, ReadLimits
from bot.dataset.texts import load_dataset_knowledge
from bot.dataset.tokens import _encoder, counter_for_model
from bot.dataset.formats import Example

HERE = os.path.dirname(__file__)
DATA = os.path.join(HERE, "data", "dataset")
ROOT = os.path.dirname(HERE)
KB = load_dataset_knowledge()
CLI_LIMITS = KB.limits["cli"].read_limits()

FA_Q, FA_A = "سلام، سفارش من کی به تهران می‌رسد؟", "سفارش شما پس‌فردا تحویل پیک می‌شود و تا عصر همان روز می‌رسد."
TR_Q = "İade sürecini nasıl başlatabilirim?"
TR_A = "Hesabınızdan Siparişlerim bölümüne girip iade talebi oluşturabilirsiniz."
EN_Q, EN_A = "Can I change the delivery address?", "Yes, you can change it until the parcel leaves our warehouse."


def _chat(q, a, system=None):
    messages = ([{"role": "system", "content": system}] if system else []) + [
        {"role": "user", "content": q}, {"role": "assistant", "content": a}]
    return {"messages": messages}


def _write_jsonl(path, records):
    with open(path, "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(record if isinstance(record, str) else json.dumps(record, ensure_ascii=False))
            handle.write("\n")
    return str(path)


# ------------------------------------------------------------------------------------------ tokenizers


@pytest.mark.parametrize("tokenizer_id", ["qwen2", "qwen3_5", "llama3", "o200k_harmony", "tekken", "mistral_v3"])
def test_token_counts_equal_the_reference_tokenizers(tokenizer_id):
    samples = json.load(open(os.path.join(DATA, "samples.json"), encoding="utf-8"))
    reference = json.load(open(os.path.join(DATA, "reference_counts.json"), encoding="utf-8"))[tokenizer_id]
    encoder = _encoder(tokenizer_id)
    for lang in ("fa", "tr", "en"):
        assert [len(encoder.encode(text)) for text in samples[lang]] == reference[lang], lang
        assert encoder.count_batch(samples[lang]) == reference[lang], lang


def test_the_stand_in_note_quotes_the_measured_spread_of_the_shipped_tokenizers():
    """knowledge/dataset.yml summary_stand_in states how far the real tokenizers differ from the stand-in on the
    samples (bench/tokenizer_spread.py); the figures must be the measured ones."""
    from bench.tokenizer_spread import sample_counts, stand_in_spread

    spread = stand_in_spread(sample_counts())
    note = KB.texts["summary_stand_in"]
    assert f"{spread['fa']}% differently in Persian, {spread['tr']}% in Turkish and {spread['en']}% in English" \
        in note.en
    assert f"Farsçada %{spread['fa']}'e, Türkçede %{spread['tr']}'e, İngilizcede %{spread['en']}'ya" in note.tr
    assert f"تا {spread['fa']}% در فارسی، {spread['tr']}% در ترکی و {spread['en']}% در انگلیسی" in note.fa
    assert KB.tokenizer_for_model("gemma-3-12b")["stand_in"] and KB.tokenizer_for_model("llama-4-scout")["stand_in"]


def test_models_map_to_their_family_tokenizer():
    assert KB.tokenizer_for_model("qwen2.5-7b")["tokenizer"] == "qwen2"
    assert KB.tokenizer_for_model("qwen3.5-9b")["tokenizer"] == "qwen3_5"
    assert KB.tokenizer_for_model("llama-3.1-8b")["tokenizer"] == "llama3"
    assert KB.tokenizer_for_model("gpt-oss-20b")["tokenizer"] == "o200k_harmony"
    assert KB.tokenizer_for_model("mistral-small-3.1-24b")["tokenizer"] == "tekken"
    assert KB.tokenizer_for_model("mistral-7b")["tokenizer"] == "mistral_v3"
    gemma = KB.tokenizer_for_model("gemma-3-4b")
    assert gemma["stand_in"] and gemma["template"] == "gemma"


def test_chat_template_overhead_is_added_per_message():
    counter = counter_for_model("qwen2.5-7b")
    chat = Example("chat", (("user", TR_Q), ("assistant", TR_A)))
    plain = Example("text", (("text", TR_Q), ))
    content = len(counter.encoder.encode(TR_Q)) + len(counter.encoder.encode(TR_A))
    # ChatML: <|im_start|> role \n ... <|im_end|> \n = 5 tokens around each message
    assert counter.count_examples([chat]) == [content + 10]
    assert counter.count_examples([plain]) == [len(counter.encoder.encode(TR_Q)) + 1]  # + <|endoftext|>


# ------------------------------------------------------------------------------------------ formats


def test_every_jsonl_format_in_three_languages(tmp_path):
    records = [
        _chat(FA_Q, FA_A, system="شما دستیار فروشگاه هستید."),
        {"conversations": [{"from": "human", "value": TR_Q}, {"from": "gpt", "value": TR_A}]},
        {"instruction": EN_Q, "input": "", "output": EN_A},
        {"prompt": TR_Q, "completion": TR_A},
        {"text": FA_Q + " " + FA_A},
    ]
    report = analyse_file(_write_jsonl(tmp_path / "all.jsonl", records), CLI_LIMITS, "qwen2.5-7b")
    assert report.examples == 5 and report.invalid_lines == []
    assert report.formats == {"chat": 1, "sharegpt": 1, "alpaca": 1, "prompt_completion": 1, "text": 1}
    assert report.mixed_format_lines == [2, 3, 4, 5]
    assert report.languages == {"fa": 2, "tr": 2, "en": 1}
    assert report.tokens["max"] >= report.tokens["p95"] >= report.tokens["median"] > 0


def test_broken_lines_are_reported_with_their_numbers_and_never_crash(tmp_path):
    lines = [
        _chat(EN_Q, EN_A),                                                      # 1 fine
        '{"messages": [{"role": "user", "content": "yarım kalmış satır"',      # 2 truncated JSON
        {"messages": [{"role": "assistant", "content": TR_A}, {"role": "user", "content": TR_Q}]},  # 3 order
        {"messages": [{"role": "user", "content": FA_Q}, {"role": "assistant", "content": "  "}]},  # 4 empty
        {"messages": [{"role": "user", "content": FA_Q}, {"role": "user", "content": FA_A},
                      {"role": "assistant", "content": FA_A}]},                # 5 not alternating
        ["a", "list"],                                                          # 6 not an object
        {"question": "no known keys"},                                          # 7 unknown format
        "",                                                                     # 8 blank: skipped
        {"messages": [{"role": "user", "content": 42}, {"role": "assistant", "content": EN_A}]},  # 9 not text
        {"messages": [{"role": "wizard", "content": EN_Q}]},                    # 10 unknown role
        {"messages": [{"role": "user", "content": EN_Q}]},                      # 11 no answer
    ]
    path = _write_jsonl(tmp_path / "broken.jsonl", lines)
    with open(path, "ab") as handle:
        handle.write(b'{"text": "\xff\xfe broken bytes"}\n')                    # 12 not UTF-8
    report = analyse_file(path, CLI_LIMITS, "llama-3.1-8b")
    assert report.examples == 1
    assert report.invalid_lines == [2, 3, 4, 5, 6, 7, 9, 10, 11, 12]
    assert report.problems == {"bad_json": [2], "first_not_user": [3], "empty_field": [4],
                               "roles_not_alternating": [5], "not_an_object": [6], "unknown_format": [7],
                               "content_not_text": [9], "unknown_role": [10], "no_assistant_answer": [11],
                               "not_utf8_line": [12]}


def test_a_line_over_the_limit_is_skipped_in_constant_memory(tmp_path):
    limits = ReadLimits(max_bytes=10_000_000, max_line_bytes=1000, max_unpacked_bytes=10**8, max_zip_ratio=200)
    path = _write_jsonl(tmp_path / "long.jsonl", [_chat(TR_Q, TR_A), {"text": "ğ" * 1_500_000}, _chat(EN_Q, EN_A)])
    report = analyse_file(path, limits, "qwen2.5-7b")
    assert report.examples == 2 and report.problems == {"line_too_long": [2]}


def test_duplicates_exact_and_near(tmp_path):
    records = [_chat(FA_Q, FA_A), _chat(FA_Q, FA_A), _chat(FA_Q.replace("ی", "ي"), FA_A + "!!"),
               _chat(TR_Q.upper(), TR_A), _chat(TR_Q, TR_A), _chat(EN_Q, EN_A), {"text": "ok"}]
    report = analyse_file(_write_jsonl(tmp_path / "dup.jsonl", records), CLI_LIMITS, "gpt-oss-20b")
    assert report.duplicates["exact"] == 1 and report.duplicates["exact_lines"] == [2]
    assert report.duplicates["near"] == 2 and report.duplicates["near_lines"] == [3, 5]
    assert report.short_examples == {"count": 1, "lines": [7]}


def test_personal_data_is_counted_by_kind_and_masked(tmp_path):
    records = [
        _chat("Numaram 0532 123 45 67, e-postam ayse.kaya@ornek.com.tr", "Teşekkürler, kaydettik."),
        _chat("کد ملی من را نمی‌خواهید؟ شماره‌ام ۰۹۱۲۳۴۵۶۷۸۹ است", "خیر، فقط شمارهٔ سفارش کافی است."),
        _chat("TC kimlik numaram 10000000146, IBAN TR33 0006 1005 1978 6457 8413 26", "Bilgileriniz alındı."),
        _chat("My card is 4111 1111 1111 1111", "Please never share card numbers here."),
        _chat("Adresim Atatürk Caddesi No: 12 Kadıköy", "Kargonuz bu adrese gelecek."),
    ]
    path = _write_jsonl(tmp_path / "pii.jsonl", records)
    report = analyse_file(path, CLI_LIMITS, "qwen2.5-7b")
    assert report.pii == {"phone": 2, "email": 1, "tc_kimlik": 1, "iban": 1, "card": 1, "address": 1}
    masked = tmp_path / "masked.jsonl"
    assert write_masked_copy(path, str(masked), "jsonl", CLI_LIMITS) == 5
    text = masked.read_text(encoding="utf-8")
    for secret in ("0532 123 45 67", "ayse.kaya", "۰۹۱۲۳۴۵۶۷۸۹", "10000000146", "TR33", "4111 1111", "No: 12"):
        assert secret not in text
    assert "[PHONE]" in text and "[ADDRESS]" in text
    assert analyse_file(str(masked), CLI_LIMITS, "qwen2.5-7b").pii == {}


def test_csv_with_persian_headers_and_turkish_csv_with_semicolons(tmp_path):
    fa = tmp_path / "fa.csv"
    fa.write_text("پرسش,پاسخ\n" + f"\"{FA_Q}\",\"{FA_A}\"\n" + f"\"{FA_Q}\",\n", encoding="utf-8")
    report = analyse_file(str(fa), CLI_LIMITS, "qwen2.5-7b")
    assert (report.file_kind, report.examples, report.problems) == ("csv", 1, {"empty_field": [3]})
    assert report.formats == {"qa": 1} and report.chat_template == "chatml"
    tr = tmp_path / "tr.csv"
    tr.write_text("Kategori;Soru;Cevap\nİade;" + TR_Q + ";" + TR_A
                  + "\nKargo;Kargom ne zaman gelir?;Yarın teslim edilecek.\n", encoding="utf-8")
    report = analyse_file(str(tr), CLI_LIMITS, "llama-3.1-8b")
    assert report.examples == 2 and report.languages == {"tr": 2}


def test_csv_whose_columns_cannot_be_told_apart_asks_for_them(tmp_path):
    path = tmp_path / "cols.csv"
    path.write_text("a,b,c\n1,2,3\n", encoding="utf-8")
    with pytest.raises(ColumnsNeeded) as caught:
        analyse_file(str(path), CLI_LIMITS, "qwen2.5-7b")
    assert caught.value.count == 3
    report = analyse_file(str(path), CLI_LIMITS, "qwen2.5-7b", columns=(0, 2))
    assert report.examples == 1


def _xlsx(path, rows, formula_row=None):
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    for row in rows:
        sheet.append(row)
    if formula_row:
        sheet.append(formula_row)
    workbook.save(path)
    return str(path)


def test_xlsx_is_read_and_formula_cells_are_reported_not_evaluated(tmp_path):
    path = _xlsx(tmp_path / "tr.xlsx", [["Soru", "Cevap"], [TR_Q, TR_A], [EN_Q, EN_A]],
                 formula_row=["=1+1", '=HYPERLINK("http://127.0.0.1/x","y")'])
    report = analyse_file(path, CLI_LIMITS, "mistral-small-3.1-24b")
    assert report.file_kind == "xlsx" and report.examples == 2
    assert report.problems == {"formula_cell": [4]}
    assert report.tokenizer["id"] == "tekken"


@pytest.mark.parametrize("name,content,code", [
    ("photo.jsonl", b"\x89PNG\r\n\x1a\n" + b"\x00" * 100, "binary_file"),
    ("data.csv", b"%PDF-1.7\n...", "binary_file"),
    ("utf16.jsonl", '{"text": "merhaba"}\n'.encode("utf-16"), "not_utf8"),
    ("latin5.csv", "soru,cevap\nçalışma saatleri?,hafta içi\n".encode("iso-8859-9"), "not_utf8"),
    ("empty.jsonl", b"", "empty_file"),
])
def test_refused_files_get_a_reason(tmp_path, name, content, code):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(FileRejected) as caught:
        analyse_file(str(path), CLI_LIMITS, "qwen2.5-7b")
    assert caught.value.code == code
    for lang in ("fa", "tr"):
        assert KB.text(f"reject_{code}", lang, **caught.value.params)


def test_a_zip_bomb_named_xlsx_is_refused_before_it_is_opened(tmp_path):
    path = tmp_path / "bomb.xlsx"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("xl/workbook.xml", "<workbook/>")
        archive.writestr("xl/worksheets/sheet1.xml", b"\x00" * 50_000_000)
    with pytest.raises(FileRejected) as caught:
        analyse_file(str(path), CLI_LIMITS, "qwen2.5-7b")
    assert caught.value.code == "zip_bomb"


def test_a_file_over_the_channel_limit_is_refused_without_reading(tmp_path):
    path = tmp_path / "big.jsonl"
    with open(path, "wb") as handle:
        handle.truncate(KB.limits["telegram"].max_bytes + 1)  # sparse: no disk used
    with pytest.raises(FileRejected) as caught:
        analyse_file(str(path), KB.limits["telegram"].read_limits(), "qwen2.5-7b")
    assert caught.value.code == "too_large" and caught.value.params == {"limit_mb": 20}


def test_sequence_length_cover_and_truncation(tmp_path):
    records = [{"text": " ".join(["kelime"] * n)} for n in range(1, 201)]
    report = analyse_file(_write_jsonl(tmp_path / "lengths.jsonl", records), CLI_LIMITS, "gpt-oss-20b",
                          seq_len=100)
    counts = sorted(counter_for_model("gpt-oss-20b").count_examples(
        [Example("text", (("text", r["text"]),)) for r in records]))
    assert report.tokens["max"] == counts[-1] and report.tokens["total"] == sum(counts)
    assert report.seq_len_cover["95"] == counts[189] and report.seq_len_cover["99"] == counts[197]
    assert report.truncated == sum(1 for c in counts if c > 100)
    assert report.tokens_per_epoch == sum(min(c, 100) for c in counts)
    assert report.validation == {"validation": 20, "train": 180}


# ------------------------------------------------------------------------------------------ CLI


def _cli(*args):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "bot.cli", "dataset", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120)


def test_cli_json_has_the_figures_and_the_estimate(tmp_path):
    records = [_chat(TR_Q, TR_A)] * 3 + [_chat(FA_Q, FA_A + " 0912 345 6789"), "{bozuk", _chat(EN_Q, EN_A)]
    path = _write_jsonl(tmp_path / "cli.jsonl", records)
    done = _cli(path, "--model", "qwen 7b", "--method", "qlora", "--epochs", "3", "--budget", "50", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["examples"] == 5 and data["invalid_lines"] == [5]
    assert data["duplicates"]["exact"] == 2 and data["duplicates"]["near"] == 0
    assert data["pii"] == {"phone": 1}
    assert set(data["tokens"]) >= {"median", "p95", "max", "total"}
    assert set(data["seq_len_cover"]) == {"95", "99"}
    assert data["tokenizer"]["id"] == "qwen2" and data["tokenizer"]["model"] == "qwen2.5-7b"
    estimate = data["estimate"]
    assert estimate["seq_len"] == data["seq_len"] == 256
    assert estimate["volume_tokens"] == data["tokens_per_epoch"] * 3
    assert estimate["card"] and estimate["hours"] is not None and estimate["budget_verdict"] == "fits"
    assert "0912 345 6789" not in done.stdout and FA_Q not in done.stdout


def test_cli_refusal_is_one_line_in_the_language(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"\x7fELF\x02\x01\x01" + b"\x00" * 64)
    done = _cli(str(path), "--model", "llama-3.1-8b", "--lang", "tr")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "JSONL, CSV veya XLSX" in done.stderr


def test_cli_text_summary_in_persian(tmp_path):
    path = _write_jsonl(tmp_path / "fa.jsonl", [_chat(FA_Q, FA_A), _chat(FA_Q, FA_A)])
    done = _cli(path, "--model", "gemma-3-4b", "--lang", "fa", "--chart", str(tmp_path / "h.png"))
    assert done.returncode == 0, done.stderr
    assert "نمونهٔ قابل استفاده" in done.stdout and "جای آن شمرده است" in done.stdout
    assert (tmp_path / "h.png").read_bytes()[:4] == b"\x89PNG"
    assert FA_Q not in done.stdout


def test_two_processes_give_the_figures_of_one_pass(tmp_path):
    """A large JSONL is measured in two halves (bot/dataset/parallel.py): same report, same line numbers."""
    from bot.dataset import analysis
    from bot.dataset.parallel import analyse_jsonl_in_parallel
    from bot.dataset.reader import line_starts

    records = []
    for index in range(300):
        q, a = [(FA_Q, FA_A), (TR_Q, TR_A), (EN_Q, EN_A)][index % 3]
        records.append(_chat(q, a + (" 0532 111 22 33" if index == 7 else f" ({index % 40})")))
        if index % 50 == 0:
            records.append("{broken")
    path = _write_jsonl(tmp_path / "big.jsonl", records)
    ranges = line_starts(path, 2)
    assert len(ranges) == 2 and ranges[0][0] == 0 and ranges[1][1] == os.path.getsize(path)
    with open(path, "rb") as handle:
        assert handle.read()[ranges[1][0] - 1:ranges[1][0]] == b"\n"  # the cut is at a line start
    single = analyse_file(path, CLI_LIMITS, "llama-3.1-8b")
    state = analyse_jsonl_in_parallel(path, CLI_LIMITS, "llama-3.1-8b", KB, 2)
    parallel = analysis._report("jsonl", state, KB, "llama-3.1-8b", None)
    assert parallel.to_json() == single.to_json()
    assert single.duplicates["exact"] > 0 and single.problems["bad_json"][:2] == [2, 53]
