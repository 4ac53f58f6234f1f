"""A model named by its Hugging Face id or page URL is answered from its config.json, fetched from a fake Hub on
loopback (tests/fake_hf_hub.py; never the network), in the chat parser, the advice and the CLI; offline, the answer
falls back to the preset list and the config-paste option."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.advisor import hf_hub
from bot.advisor.advice import AdviceRequest, advise
from bot.present.render import render_advice
from bot.text.parse import parse_values
from tests.fake_hf_hub import fake_hub

REPO = Path(__file__).resolve().parents[1]
GEMMA_270M_PARAMS = 268_098_176   # google/gemma-3-270m: published parameter count of the checkpoint


@pytest.fixture()
def hub(tmp_path, monkeypatch):
    with fake_hub() as (url, requests):
        monkeypatch.setenv("HF_ENDPOINT", url)
        monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
        hf_hub.forget()
        yield url, requests
    hf_hub.forget()


@pytest.mark.parametrize("text,repo_id", [
    ("https://huggingface.co/google/gemma-3-270m", "google/gemma-3-270m"),
    ("bu modeli eğiteceğiz: Qwen/Qwen3.5-4B, QLoRA", "Qwen/Qwen3.5-4B"),
    ("مدل HuggingFaceTB/SmolLM3-3B را می‌خواهیم", "HuggingFaceTB/SmolLM3-3B"),
    ("LoRA/QLoRA hangisi?", None),
    ("TRL/PEFT ile", None),
    ("A100/H100 fiyatı", None),
    ("2/3 epoch", None),
])
def test_model_ids_in_messages(text, repo_id):
    assert hf_hub.model_id_in(text) == repo_id


def test_a_non_preset_hub_model_is_read_from_its_config():
    from bot.advisor.knowledge import UnknownModel, resolve_model

    with pytest.raises(UnknownModel):
        resolve_model("HuggingFaceTB/SmolLM3-3B")


def test_a_hub_model_is_read_from_its_fetched_config_and_cached(hub):
    _, requests = hub
    arch = hf_hub.arch_from_hub("google/gemma-3-270m")
    assert arch is not None and arch.name == "google/gemma-3-270m" and arch.params == GEMMA_270M_PARAMS
    assert arch.layer_pattern == "SSSSSF" and arch.tied_embeddings
    count = len(requests)
    assert hf_hub.arch_from_hub("google/gemma-3-270m") is not None and len(requests) == count   # remembered
    assert hf_hub.arch_from_hub("nobody/missing-model-7b") is None


@pytest.mark.parametrize("lang,text", [
    ("fa", "می‌خواهیم https://huggingface.co/google/gemma-3-270m را با LoRA و طول توالی ۱۰۲۴ آموزش بدهیم"),
    ("tr", "google/gemma-3-270m modelini QLoRA ile 2048 token uzunlukla eğitmek istiyoruz"),
])
def test_the_chat_answers_a_hub_model_from_its_config(hub, lang, text):
    parsed = parse_values(text)
    assert parsed.custom_arch_label == "google/gemma-3-270m" and parsed.model_id is None
    advice = advise(AdviceRequest(method=parsed.method, seq_len=parsed.seq_len, custom_arch=parsed.custom_arch))
    assert advice.preset.display == "google/gemma-3-270m" and advice.plan.model.params == GEMMA_270M_PARAMS
    assert advice.recommended_card is not None
    assert "google/gemma-3-270m" in render_advice(advice, lang)


def _cli(env, *args):
    return subprocess.run([sys.executable, "-m", "bot.cli", "estimate", *args], capture_output=True, text=True,
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO), **env}, timeout=120)


def test_the_cli_answers_a_hub_model_and_falls_back_offline(hub, tmp_path):
    """SmolLM3 is not a preset: online its config.json answers, offline the preset list and the config option do."""
    url, _ = hub
    online = _cli({"HF_ENDPOINT": url, "HF_HUB_CACHE": str(tmp_path / "c1")}, "--model",
                  "https://huggingface.co/HuggingFaceTB/SmolLM3-3B", "--method", "lora", "--seq-len", "1024",
                  "--lang", "tr")
    assert online.returncode == 0 and "HuggingFaceTB/SmolLM3-3B" in online.stdout
    offline = _cli({"HF_ENDPOINT": url, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp_path / "empty")},
                   "--model", "HuggingFaceTB/SmolLM3-3B", "--method", "lora", "--seq-len", "1024", "--lang", "en")
    assert offline.returncode != 0 and "config.json" in offline.stderr + offline.stdout


def test_a_lower_cased_id_reaches_the_canonical_repo_and_the_cache_answers_offline(hub, monkeypatch):
    """Chat messages arrive lower-cased (the NLU normaliser); the Hub redirects to the canonical name. Once fetched,
    the cached config answers with no network at all."""
    _, requests = hub
    arch = hf_hub.arch_from_hub("huggingfacetb/smollm3-3b")
    assert arch is not None and arch.layers == 36 and arch.tied_embeddings
    hf_hub.forget()
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")   # nothing listens there
    count = len(requests)
    assert hf_hub.arch_from_hub("huggingfacetb/smollm3-3b") is not None and len(requests) == count
