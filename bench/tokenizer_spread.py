"""Which tokenizer counts for each model family, and how far the shipped tokenizers differ on our own samples.

Gemma's and Llama 4's own tokenizers are not shipped (no PyPI package carries them: Google DeepMind's `gemma` 4.0.1
fetches tokenizer_gemma3.model from gs://gemma-data at run time), so o200k_base stands in for them
(knowledge/dataset.yml `models`, `stand_in: true`). Their own counts cannot be measured here; what can be measured is
how far the real tokenizers shipped here differ from the stand-in on the same Persian, Turkish and English sentences
(tests/data/dataset/samples.json): the scale of the error a stand-in may carry.

    .venv/bin/python bench/tokenizer_spread.py     -> bench/results/tokenizers.md
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Dict

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.results_io import ROOT, write_results  # noqa: E402

LANGS = ("fa", "tr", "en")
STAND_IN = "o200k_harmony"


def sample_counts() -> Dict[str, Dict[str, int]]:
    """Tokenizer id -> language -> tokens of the samples."""
    from bot.dataset.texts import load_dataset_knowledge
    from bot.dataset.tokens import _encoder

    samples = json.loads((ROOT / "tests" / "data" / "dataset" / "samples.json").read_text(encoding="utf-8"))
    return {spec["id"]: {lang: sum(len(_encoder(spec["id"]).encode(text)) for text in samples[lang])
                         for lang in LANGS} for spec in load_dataset_knowledge().tokenizers}


def stand_in_spread(counts: Dict[str, Dict[str, int]]) -> Dict[str, int]:
    """Language -> the largest difference (per cent, rounded) from the stand-in among the real tokenizers of 128k
    tokens or more (Mistral v3's 32k SentencePiece is a generation older: it is left out)."""
    base = counts[STAND_IN]
    modern = [tokenizer_id for tokenizer_id in counts if tokenizer_id not in (STAND_IN, "mistral_v3")]
    return {lang: round(max(abs(counts[t][lang] / base[lang] - 1) for t in modern) * 100) for lang in LANGS}


def main() -> None:
    from bot.dataset.texts import load_dataset_knowledge

    kb = load_dataset_knowledge()
    samples = json.loads((ROOT / "tests" / "data" / "dataset" / "samples.json").read_text(encoding="utf-8"))
    counts = sample_counts()
    base = counts[STAND_IN]
    lines = ["# Tokenizers of the data check (bench/tokenizer_spread.py)", "",
             "Which tokenizer counts for each model family (knowledge/dataset.yml `models`, the first prefix that "
             "starts the model id wins):", "", "| model id starts with | tokenizer | chat template | own or stand-in |",
             "|---|---|---|---|"]
    for entry in kb.models:
        lines.append(f"| `{entry['prefix'] or '(anything else)'}` | {kb.tokenizer(entry['tokenizer'])['display']} | "
                     f"{entry['template']} | {'**stand-in**' if entry.get('stand_in') else 'own'} |")
    lines += ["", "Tokens for the same sentences (tests/data/dataset/samples.json, five own sentences per language; "
              f"{', '.join(f'{lang} {sum(map(len, samples[lang]))}' for lang in LANGS)} characters), and the "
              f"difference from the stand-in {STAND_IN}:", "",
              "| tokenizer | fa | tr | en |", "|---|---|---|---|"]
    for tokenizer_id, row in counts.items():
        cells = [f"{row[lang]} ({(row[lang] / base[lang] - 1) * 100:+.0f} %)" for lang in LANGS]
        lines.append(f"| {tokenizer_id} | " + " | ".join(cells) + " |")
    spread = stand_in_spread(counts)
    lines += ["", "Gemma's and Llama 4's own counts are not measured (their tokenizers are not available offline). "
              "Among the real tokenizers of 128k tokens or more shipped here, counts differ from the stand-in by up "
              f"to {spread['fa']:.0f} % on Persian, {spread['tr']:.0f} % on Turkish and {spread['en']:.0f} % on "
              "English: that is the scale a stand-in's figures may be off by, and the answer says so.", "",
              "Command: `.venv/bin/python bench/tokenizer_spread.py`"]
    write_results(ROOT / "bench" / "results" / "tokenizers.md", lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
