"""The data check on a generated 100,000-example JSONL (~50 MB): wall time and peak memory of one analysis.

Targets (issue 23): under 30 s and under 400 MB on the 2-core development machine. The file is generated in a
temporary folder from own Persian, Turkish and English sentences (chat format, some duplicates, some personal data)
and deleted afterwards; the analysis runs in a fresh process so its peak RSS is its own.

    .venv/bin/python bench/bench_dataset.py [--examples 100000] [--model qwen2.5-7b]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.results_io import ROOT, machine_speed_s, write_results  # noqa: E402

SENTENCES = {
    "fa": ["سفارش شما امروز از انبار خارج شد و فردا به دستتان می‌رسد.",
           "برای تغییر نشانی تحویل با پشتیبانی تماس بگیرید.",
           "هزینهٔ ارسال برای خریدهای بالای پانصد هزار تومان رایگان است.", "رمز عبور جدید به ایمیل شما فرستاده شد."],
    "tr": ["Siparişiniz bugün depodan çıktı ve yarın elinizde olacak.",
           "Teslimat adresini değiştirmek için bizi arayın.",
           "Beş yüz liranın üzerindeki alışverişlerde kargo ücretsizdir.",
           "Yeni şifreniz e-posta adresinize gönderildi."],
    "en": ["Your order left the warehouse today and arrives tomorrow.", "Call support to change the delivery address.",
           "Shipping is free on orders over fifty dollars.", "A new password was sent to your e-mail address."],
}
TARGET_BYTES_PER_EXAMPLE = 500  # 100,000 examples -> about 50 MB


def generate(path: Path, examples: int, seed: int = 23) -> int:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as handle:
        for index in range(examples):
            lang = rng.choice(("fa", "tr", "en"))
            question = " ".join(rng.choices(SENTENCES[lang], k=2))
            answer_parts = []
            while sum(len(part.encode()) for part in answer_parts) < TARGET_BYTES_PER_EXAMPLE - 200:
                answer_parts.append(rng.choice(SENTENCES[lang]))
            if index % 50 == 0:
                answer_parts.append(f"0532 {rng.randrange(100, 999)} {rng.randrange(10, 99)} {rng.randrange(10, 99)}")
            answer = " ".join(answer_parts) + f" #{index}" * (index % 7 != 0)  # every 7th repeats a text
            record = {"messages": [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]}
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path.stat().st_size


CHILD = """
import json, resource, sys, time
started = time.perf_counter()
from bot.dataset.analysis import analyse_file
from bot.dataset.texts import load_dataset_knowledge
kb = load_dataset_knowledge()
report = analyse_file(sys.argv[1], kb.limits["cli"].read_limits(), sys.argv[2])
elapsed = time.perf_counter() - started
own, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"seconds": elapsed, "peak_mb": own.ru_maxrss / 1024, "worker_peak_mb": workers.ru_maxrss / 1024,
                  "cpu_s": own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime,
                  "examples": report.examples, "total": report.tokens["total"], "exact": report.duplicates["exact"],
                  "near": report.duplicates["near"], "pii": report.pii, "cover": report.seq_len_cover}))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--examples", type=int, default=100_000)
    parser.add_argument("--model", default="qwen2.5-7b")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.jsonl"
        size = generate(path, args.examples)
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        done = subprocess.run([sys.executable, "-c", CHILD, str(path), args.model], capture_output=True, text=True,
                              env=env, cwd=ROOT, check=True)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    load = os.getloadavg()[0]
    speed = machine_speed_s()
    # The parent and its (at most two) workers run together: their peaks added up bound the memory used at once.
    memory_bound = figures["peak_mb"] + 2 * figures["worker_peak_mb"]
    lines = [
        "# The data check on a generated JSONL (bench/bench_dataset.py)",
        "",
        f"{args.examples:,} chat examples, {size / 1e6:.1f} MB, model {args.model}; one run in a fresh process "
        f"(start-up and tokenizer loading included); a fixed pure-Python loop took {speed:.2f} s "
        "(bench/results_io.machine_speed_s).",
        "",
        "| figure | measured | target |",
        "|---|---|---|",
        f"| wall time | {figures['seconds']:.1f} s | < 30 s |",
        f"| CPU time, all processes | {figures['cpu_s']:.1f} s | - |",
        f"| peak memory: parent + 2 x largest worker (max RSS) | {figures['peak_mb']:.0f} + 2 x "
        f"{figures['worker_peak_mb']:.0f} = {memory_bound:.0f} MB | < 400 MB |",
        "",
        f"Load average (1 min) when the run ended: {load:.1f} on {os.cpu_count()} cores; on a shared machine the wall "
        "time grows with it, the CPU time does not.",
        "",
        f"Found: {figures['examples']:,} examples, {figures['total']:,} tokens, {figures['exact']:,} exact and "
        f"{figures['near']:,} near duplicates, personal data {figures['pii']}, cover {figures['cover']}.",
        "The generator draws every text from four sentences per language, so nearly every example is a near copy of "
        "an earlier one (MinHash over word pairs, Jaccard >= 0.6; bot/dataset/duplicates.py): the costliest case for "
        "the near-duplicate clustering, whose candidate pairs grow with the copies.",
        "",
        f"Command: `.venv/bin/python bench/bench_dataset.py --examples {args.examples} --model {args.model}`",
    ]
    write_results(ROOT / "bench" / "results" / "dataset.md", lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
