"""Transcripts for native-speaker review: a fixed set of our own conversations per language, sent over the REST
channel to the real Rasa and action servers, written to docs/review/transcript-<lang>.md (issue 14 #8).

    .venv/bin/python bench/review_transcripts.py            # both languages
    .venv/bin/python bench/review_transcripts.py --lang tr

The servers are the ones the end-to-end tests use (tests/servers.py: the model is retrained when domain/, data/ or
config.yml changed). The conversations cover every item of the December 2026 reviews: one recommendation first,
tight fits, dominated cards, alternatives, tiny budgets, the hourly cap, comparisons, the customer's own card, FAQ
answers with computed figures, the KVKK notice in a handoff, greetings, thanks and goodbyes. A reviewer reads the file
top to bottom; rerun the script after a wording change and commit the new transcripts.
"""
from __future__ import annotations

import argparse
import datetime as dt
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.conftest import post_json  # noqa: E402
from tests.servers import ensure_model, start_action_server, start_rasa_server  # noqa: E402

OUT_DIR = ROOT / "docs" / "review"

# (title, [customer messages]) per language. Our own sentences; none is an NLU training example.
CONVERSATIONS: Dict[str, List[tuple]] = {
    "fa": [
        ("Formal greeting, then the whole job in one message", [
            "با سلام، وقت بخیر",
            "می‌خواهیم Llama 3.1 8B را با QLoRA و طول توالی 2048 فاین‌تیون کنیم؛ بودجه حدود 50 دلار است",
            "با LoRA چطور؟",
            "ممنون از راهنمایی‌تان",
        ]),
        ("A tight fit (upper bound above 80 GB cards) and a comparison", [
            "Qwen2.5 32B با LoRA، طول توالی 2048، محدودیت بودجه نداریم",
            "H100 یا A100 برای این کار؟",
        ]),
        ("Full fine-tuning of 8B: cheaper single-GPU routes", [
            "آموزش کامل Llama 3.1 8B با 2048 توکن، بودجه 300 دلار در ماه",
        ]),
        ("Full fine-tuning of 70B: multi-GPU plan and quote", [
            "آموزش کامل Llama 3.1 70B با 4096 توکن، هزینه مهم نیست",
        ]),
        ("A two-dollar budget", [
            "Qwen2.5 32B با LoRA و 2048 توکن، کل بودجه‌ام فقط ۲ دلار است",
        ]),
        ("An hourly price cap no card meets", [
            "Llama 3.1 70B با QLoRA و 2048 توکن؛ ساعتی حداکثر ۱ دلار می‌توانیم بپردازیم",
        ]),
        ("The customer's own card", [
            "Mistral 7B با LoRA و 4096 توکن، بودجه 20 دلار",
            "من خودم یک RTX 4090 دارم؛ این کار روی آن جا می‌شود؟",
        ]),
        ("FAQ answers", [
            "مدل 13B روی کارت 24 گیگ جا می‌شود؟",
            "فرق H100 و A100 چیست و کدام به‌صرفه‌تر است؟",
            "سرورهایتان کجاست؟ داده‌های مشتری‌هایمان را می‌توانیم بفرستیم؟",
            "اگر سرور خاموش شود چک‌پوینت‌ها پاک می‌شوند؟",
        ]),
        ("Handoff with the KVKK notice, then goodbye", [
            "لطفاً من را به یک کارشناس وصل کنید",
            "نه، راه تماس نمی‌دهم",
            "خدانگهدار، روز خوبی داشته باشید",
        ]),
    ],
    "tr": [
        ("Formal greeting, then the whole job in one message", [
            "İyi günler, kolay gelsin",
            "Llama 3.1 8B modelini QLoRA ile 2.048 token dizi uzunluğunda eğitmek istiyoruz, bütçemiz 50 dolar civarı",
            "LoRA ile olursa?",
            "Çok teşekkürler",
        ]),
        ("A tight fit (upper bound above 80 GB cards) and a comparison", [
            "Qwen2.5 32B, LoRA, 2048 token, bütçe kısıtımız yok",
            "LoRA mı QLoRA mı daha ucuz?",
        ]),
        ("Full fine-tuning of 8B: cheaper single-GPU routes", [
            "Llama 3.1 8B tam ince ayar, 2048 token, aylık 300 dolar bütçe",
        ]),
        ("Full fine-tuning of 70B: multi-GPU plan and quote", [
            "Llama 3.1 70B'ye tam ince ayar yapacağız, 4096 token, para sorun değil",
        ]),
        ("A three-dollar budget", [
            "Llama 3.1 8B tam ince ayar 2048 token, toplam 3 dolarım var",
        ]),
        ("An hourly price cap no card meets", [
            "Llama 3.1 70B, QLoRA, 2048 token; saatte en fazla 1 dolar ödeyebiliriz",
        ]),
        ("The customer's own card", [
            "Mistral 7B, LoRA, 4096 token, bütçe 20 dolar",
            "Evde RTX 3090 var, bu iş ona sığar mı?",
        ]),
        ("FAQ answers", [
            "13B'lik bir model 24 GB'lık karta sığar mı?",
            "Sunucularınız Türkiye'de mi? Müşteri verisi yükleyebilir miyiz?",
            "Sunucu kapanınca checkpoint'ler silinir mi?",
            "Veriyi hangi formatta hazırlamalıyım?",
        ]),
        ("Handoff with the KVKK notice, then goodbye", [
            "Beni bir müşteri temsilcisine bağlar mısınız?",
            "Hayır, iletişim bilgisi vermeden devam edelim",
            "Teşekkürler, iyi akşamlar",
        ]),
    ],
}


def _turn(server, sender: str, text: str) -> List[str]:
    _, replies = post_json(f"{server.url}/webhooks/rest/webhook", {"sender": sender, "message": text}, timeout=60)
    lines = []
    for reply in replies or []:
        if reply.get("text"):
            lines.append(reply["text"])
        if reply.get("image"):
            lines.append("[chart image]")
        if reply.get("buttons"):
            lines.append("Buttons: " + " | ".join(b.get("title", "") for b in reply["buttons"]))
    return lines


def _quote(text: str) -> str:
    return "\n".join("> " + line if line else ">" for line in text.split("\n"))


def transcript(server, lang: str) -> str:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    parts = [f"# Transcript for native review ({lang})", "",
             f"Written by `bench/review_transcripts.py` on {dt.datetime.utcnow():%Y-%m-%d %H:%M} UTC from commit "
             f"`{commit.strip()}`, over the REST channel against the real Rasa and action servers. Every customer "
             "message is our own sentence (none is an NLU training example). Rerun the script after a wording change.",
             ""]
    for number, (title, messages) in enumerate(CONVERSATIONS[lang], start=1):
        sender = f"review-{lang}-{number}-{uuid.uuid4().hex[:6]}"
        parts += [f"## {number}. {title}", ""]
        for message in messages:
            parts += [f"**Customer:** {message}", ""]
            for line in _turn(server, sender, message):
                parts += ["**Bot:**", "", _quote(line), ""]
    return "\n".join(parts).rstrip() + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lang", choices=sorted(CONVERSATIONS), action="append")
    args = parser.parse_args(argv)
    ensure_model()
    action = start_action_server()
    rasa = start_rasa_server(action.port)
    try:
        OUT_DIR.mkdir(parents=True, exist_ok=True)
        for lang in args.lang or sorted(CONVERSATIONS):
            path = OUT_DIR / f"transcript-{lang}.md"
            path.write_text(transcript(rasa, lang), encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    finally:
        rasa.stop()
        action.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
