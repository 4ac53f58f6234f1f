"""End-to-end (REST, real servers), Persian and Turkish: the training stack in the answer (issue 22).

* a Mixture-of-Experts QLoRA job gets a card its 4-bit-expert stack fits, the stack named and the plain-PEFT figure
  beside it;
* a customer who names a stack gets that stack's figures;
* a job that fits one card, asked for on several GPUs, is planned as DDP and the answer says so;
* a model named by its Hugging Face id is answered from its config.json (a fake Hub on loopback).
Sentences of our own, written as customers type."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from bot.advisor.advice import AdviceRequest, advise
from bot.advisor.hf_config import read_hf_config
from bot.advisor.stacks import load_stacks
from bot.present.render import gb
from tests.conftest import Conversation
from tests.e2e.helpers import assert_language, joined
from tests.fake_hf_hub import fake_hub
from tests.servers import ensure_model, start_action_server, start_rasa_server

pytestmark = pytest.mark.e2e
STACKS = load_stacks()


@pytest.fixture(scope="module")
def chat():
    """Servers whose Hub is the fake one (the parser runs in Rasa's in-process validation and in the actions)."""
    ensure_model()
    with fake_hub() as (url, _):
        env = {"HF_ENDPOINT": url, "HF_HUB_CACHE": tempfile.mkdtemp(prefix="hub-")}
        actions = start_action_server(env=env)
        try:
            rasa = start_rasa_server(actions.port, env=env)
            try:
                yield lambda: Conversation(rasa)
            finally:
                rasa.stop()
        finally:
            actions.stop()


MOE = [("fa", "Qwen3 30B-A3B را با QLoRA و طول توالی ۲۰۴۸ آموزش می‌دهیم، بودجه ۶۰ دلار"),
       ("tr", "Qwen3 30B-A3B modelini QLoRA ile 2048 token uzunlukta eğiteceğiz, bütçemiz 60 dolar")]


@pytest.mark.parametrize("lang,message", MOE)
def test_moe_qlora_names_the_4bit_stack_and_the_plain_peft_figure(chat, lang, message):
    replies = chat().say(message)
    assert_language(replies, lang)
    text = joined(replies)
    advice = advise(AdviceRequest(model="qwen3-30b-a3b", method="qlora", seq_len=2048, budget_usd=60))
    assert advice.plan.qlora_moe_experts == "nf4"
    assert STACKS.get(advice.plan.stack).name in text and "Transformers + PEFT + TRL" in text
    assert gb(advice.estimate.per_gpu_gib, lang) in text and gb(advice.stack_choice.plain.per_gpu_gib, lang) in text
    assert f"{advice.recommended_card.name} (" in text


MAVERICK = [("fa", "می‌خواهیم Llama 4 Maverick را با QLoRA و توالی ۲۰۴۸ توکنی فاین‌تیون کنیم"),
            ("tr", "Llama 4 Maverick'e QLoRA uygulayacağız, dizi uzunluğu 2048 token olacak")]


@pytest.mark.parametrize("lang,message", MAVERICK)
def test_moe_qlora_on_several_cards_names_the_4bit_stack_and_the_plain_peft_figure(chat, lang, message):
    """No single card holds Maverick even with 4-bit experts: the sharded plan is made under the stack that quantizes
    them, and the answer says so beside the plain-PEFT figure."""
    replies = chat().say(message)
    assert_language(replies, lang)
    text = joined(replies)
    advice = advise(AdviceRequest(model="llama-4-maverick", method="qlora", seq_len=2048))
    multi, plain = advice.multi_gpu, advice.stack_choice.plain
    assert advice.plan.qlora_moe_experts == "nf4" and multi is not None and plain is not None
    assert STACKS.get(advice.plan.stack).name in text and plain.name in text
    assert gb(multi.per_gpu_gib, lang) in text and gb(plain.per_gpu_gib, lang) in text
    assert f"{multi.count} × {multi.name}" in text


NAMED = [("fa", "Qwen3 30B-A3B با QLoRA و ۲۰۴۸ توکن، بودجه ۶۰ دلار؛ ما با پفت و TRL معمولی کار می‌کنیم", "hf"),
         ("tr", "Qwen3 30B-A3B, QLoRA, 2048 token, bütçe 60 dolar; eğitimi Axolotl üzerinden yürütüyoruz", "axolotl")]


@pytest.mark.parametrize("lang,message,stack", NAMED)
def test_a_named_stack_gets_that_stacks_figures(chat, lang, message, stack):
    text = joined(chat().say(message))
    advice = advise(AdviceRequest(model="qwen3-30b-a3b", method="qlora", seq_len=2048, budget_usd=60, stack=stack))
    assert gb(advice.estimate.per_gpu_gib, lang) in text
    assert STACKS.text("stack_named", lang, stack=STACKS.get(stack).name) in text


DDP = [("fa", "Llama 3.1 8B با LoRA و ۲۰۴۸ توکن روی ۲ GPU، بودجه ۴۰ دلار"),
       ("tr", "Llama 3.1 8B'yi LoRA ile 2048 token, 2 GPU üzerinde eğitmek istiyoruz, bütçe 40 dolar")]


@pytest.mark.parametrize("lang,message", DDP)
def test_several_gpus_for_a_job_that_fits_one_card_is_ddp(chat, lang, message):
    text = joined(chat().say(message))
    assert STACKS.text("layout_ddp", lang) in text
    advice = advise(AdviceRequest(model="llama-3.1-8b", method="lora", seq_len=2048, gpus=2, budget_usd=40))
    assert advice.plan.gpus == 2 and advice.plan.sharding == "ddp"


HUB = [("fa", "مدل google/gemma-3-270m را با LoRA و طول توالی ۱۰۲۴ آموزش می‌دهیم، بودجه ۱۰ دلار",
        "google/gemma-3-270m"),
       ("tr", "https://huggingface.co/HuggingFaceTB/SmolLM3-3B modelini LoRA ile 1024 token eğiteceğiz, bütçe 10 dolar",
        "HuggingFaceTB/SmolLM3-3B")]   # SmolLM3 is no preset: only its fetched config can answer


@pytest.mark.parametrize("lang,message,repo_id", HUB)
def test_a_hub_model_id_is_answered_from_its_config(chat, lang, message, repo_id):
    text = joined(chat().say(message))
    assert repo_id.lower() in text.lower()   # the NLU normaliser lower-cases the message; the Hub resolves any case
    config = json.loads((Path(__file__).resolve().parents[1] / "data" / "hf_hub" / repo_id / "config.json")
                        .read_text(encoding="utf-8"))
    arch = read_hf_config(config).copy(update={"name": repo_id})
    advice = advise(AdviceRequest(method="lora", seq_len=1024, budget_usd=10, custom_arch=arch.dict()))
    assert gb(advice.estimate.per_gpu_gib, lang) in text
