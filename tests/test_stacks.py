"""Training stacks (knowledge/stacks.yml): what each changes, which one the advice picks, how the answer says it,
how a customer's words name one, and multi-GPU layouts (DDP when the model fits each card)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bot.advisor.advice import AdviceRequest, advise
from bot.advisor.knowledge import load_knowledge
from bot.advisor.schema import STACK_IDS
from bot.advisor.stacks import DEFAULT_PATH, load_stacks
from bot.present.render import gb, render_advice
from bot.text.parse import parse_values
from bot.text.stack_names import read_stack

KB = load_knowledge()
STACKS = load_stacks()
REPO = Path(__file__).resolve().parents[1]


def _usable(card_id):
    return KB.gpu(card_id).usable_gib


# ---------------------------------------------------------------------------------------------- the data file


def test_every_stack_effect_has_a_source_and_a_quote():
    assert set(STACKS.stacks) == set(STACK_IDS) and STACKS.default == "hf"
    for stack in STACKS.stacks.values():
        assert stack.effects and all(e.source and e.quote for e in stack.effects)
    assert STACKS.get("unsloth").plan.qlora_moe_experts == "nf4" == STACKS.get("axolotl").plan.qlora_moe_experts
    assert STACKS.get("hf").plan.qlora_moe_experts == "bf16"


@pytest.mark.parametrize("breakage", ["no_source", "placeholders", "unknown_field"])
def test_a_broken_stacks_file_is_refused(tmp_path, breakage):
    data = yaml.safe_load(DEFAULT_PATH.read_text(encoding="utf-8"))
    if breakage == "no_source":
        data["stacks"]["axolotl"]["effects"][0]["source"] = ""
    elif breakage == "placeholders":
        data["texts"]["layout_ddp"]["tr"] += " {gpus}"
    else:
        data["stacks"]["unsloth"]["plan"]["qlora_moe_expert"] = "nf4"
    bad = tmp_path / "stacks.yml"
    bad.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(ValueError):
        load_stacks(bad)


# ---------------------------------------------------------------------------------------------- MoE QLoRA


@pytest.mark.parametrize("model,seq_len", [("qwen3-30b-a3b", 2048), ("llama-4-scout", 4096), ("gpt-oss-120b", 2048),
                                           ("mixtral-8x7b", 2048)])
def test_moe_qlora_lands_on_a_card_its_4bit_expert_stack_fits(model, seq_len):
    advice = advise(AdviceRequest(model=model, method="qlora", seq_len=seq_len))
    assert advice.plan.stack in ("unsloth", "axolotl") and advice.plan.qlora_moe_experts == "nf4"
    card = advice.recommended_card
    assert card is not None and advice.estimate.per_gpu_gib <= _usable(card.card_id)
    plain = advice.stack_choice.plain
    assert plain is not None and plain.stack == "hf" and plain.per_gpu_gib > 2 * advice.estimate.per_gpu_gib


@pytest.mark.parametrize("lang", ["fa", "tr"])
def test_moe_qlora_too_big_for_any_card_is_sharded_under_its_4bit_expert_stack(lang):
    """Llama 4 Maverick QLoRA fits no single card under any stack: the stacks are then compared sharded, and the one
    that quantizes the experts needs half the GPUs plain PEFT needs (Axolotl's published run: 4 x H100)."""
    advice = advise(AdviceRequest(model="llama-4-maverick", method="qlora", seq_len=2048))
    assert advice.recommended_card is None and advice.plan.qlora_moe_experts == "nf4"
    assert advice.plan.stack == "axolotl"                    # Unsloth runs one GPU or DDP only (knowledge/stacks.yml)
    multi, plain = advice.multi_gpu, advice.stack_choice.plain
    assert multi is not None and multi.count <= 4 and multi.per_gpu_gib <= _usable(multi.card_id)
    hf = advise(AdviceRequest(model="llama-4-maverick", method="qlora", seq_len=2048, stack="hf"))
    assert hf.multi_gpu is None or hf.multi_gpu.price_usd_hour_total > multi.price_usd_hour_total
    text = render_advice(advice, lang)
    assert STACKS.get("axolotl").name in text and plain.name in text and gb(plain.per_gpu_gib, lang) in text
    assert gb(multi.per_gpu_gib, lang) in text and f"{multi.count} × {multi.name}" in text


@pytest.mark.parametrize("lang", ["fa", "tr"])
def test_the_moe_answer_names_the_stack_and_gives_the_plain_peft_figure(lang):
    advice = advise(AdviceRequest(model="qwen3-30b-a3b", method="qlora", seq_len=2048))
    text = render_advice(advice, lang)
    first_bubble = text.split("\n\n")[0]
    assert STACKS.get(advice.plan.stack).name in first_bubble and "Transformers + PEFT + TRL" in first_bubble
    assert gb(advice.estimate.per_gpu_gib, lang) in first_bubble
    assert gb(advice.stack_choice.plain.per_gpu_gib, lang) in first_bubble
    assert advice.stack_choice.plain.per_gpu_gib > 50 > advice.estimate.per_gpu_gib


@pytest.mark.parametrize("lang", ["fa", "tr"])
def test_a_customer_on_plain_peft_gets_the_16bit_figure_and_the_4bit_route(lang):
    advice = advise(AdviceRequest(model="qwen3-30b-a3b", method="qlora", seq_len=2048, stack="hf"))
    assert advice.plan.qlora_moe_experts == "bf16" and advice.estimate.per_gpu_gib > 50
    four_bit = advice.stack_choice.four_bit
    assert four_bit is not None and four_bit.per_gpu_gib < 30
    text = render_advice(advice, lang)
    assert gb(four_bit.per_gpu_gib, lang) in text and STACKS.text("stack_named", lang, stack=STACKS.get("hf").name) \
        in text


def test_a_named_stack_changes_what_it_changes():
    base = dict(model="llama-3.1-8b", method="qlora", seq_len=8192)
    plain = advise(AdviceRequest(**base, stack="hf"))
    fused = advise(AdviceRequest(**base, stack="axolotl"))
    assert (plain.plan.cross_entropy, fused.plan.cross_entropy) == ("standard", "fused")
    assert fused.estimate.components_gib["logits"] < plain.estimate.components_gib["logits"]
    assert fused.estimate.components_gib["weights"] == plain.estimate.components_gib["weights"]
    # speed: the stack's factor from knowledge/calibration/throughput_model.yml
    h100 = {c.card_id: c for c in fused.cards}["h100"], {c.card_id: c for c in plain.cards}["h100"]
    assert h100[0].tokens_per_second > h100[1].tokens_per_second


def test_an_unknown_stack_is_refused_with_the_field_named():
    from bot.advisor.knowledge import InputError

    with pytest.raises(InputError) as err:
        advise(AdviceRequest(model="llama-3.1-8b", method="lora", seq_len=2048, stack="deepspeed-chat"))
    assert err.value.field == "stack"


# ---------------------------------------------------------------------------------------------- the customer's words


@pytest.mark.parametrize("text,stack", [
    ("fine-tuning'i Axolotl üzerinden yürütüyoruz", "axolotl"),
    ("şirkette düz TRL + PEFT var", "hf"),
    ("Unsloth'u denemek istiyoruz, 30B MoE için", "unsloth"),
    ("ما با اکسولوتل مدل را آموزش می‌دهیم", "axolotl"),
    ("روی آنسلوث تنظیم دقیق انجام می‌دهیم", "unsloth"),
    ("torchtune ile 8B eğitiyoruz", "torchtune"),
    ("Unsloth mu Axolotl mu daha iyi?", None),          # a question naming two: no stack
    ("llama 8b lora 2048 بودجه ۱۰۰ دلار", None),
    ("nemonic words and a peftless sentence", None),    # no whole-word match
])
def test_stack_names_in_persian_and_turkish_messages(text, stack):
    assert read_stack(text) == stack
    assert parse_values(text).stack == stack


def test_the_slot_reaches_the_advice_request():
    from actions.estimate import CONTRACT_FIELDS
    from actions.common import CONTRACT_SLOTS

    assert "stack" in CONTRACT_SLOTS and CONTRACT_FIELDS["stack"] == "stack"
    domain = yaml.safe_load((REPO / "domain" / "stacks.yml").read_text(encoding="utf-8"))
    assert "stack" in domain["slots"]


# ---------------------------------------------------------------------------------------------- multi-GPU layouts


@pytest.mark.parametrize("lang", ["fa", "tr"])
def test_a_job_that_fits_one_card_on_several_gpus_is_planned_as_ddp(lang):
    advice = advise(AdviceRequest(model="llama-3.1-8b", method="lora", seq_len=2048, gpus=2))
    assert advice.plan.sharding == "ddp" and "ddp_replicated" in advice.estimate.assumptions
    assert STACKS.text("layout_ddp", lang) in render_advice(advice, lang)


@pytest.mark.parametrize("lang", ["fa", "tr"])
def test_a_job_too_big_for_one_card_is_sharded_and_says_why(lang):
    advice = advise(AdviceRequest(model="llama-3.1-70b", method="lora", seq_len=2048, gpus=4, stack="hf"))
    assert advice.plan.sharding == "zero3"
    text = render_advice(advice, lang)
    link = STACKS.text("link_nvlink" if KB.gpu(advice.recommended_card.card_id).nvlink else "link_pcie", lang)
    assert STACKS.text("layout_sharded", lang, layout="ZeRO-3", link=link) in text


# ---------------------------------------------------------------------------------------------- CLI


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "bot.cli", *args], capture_output=True, text=True, cwd=REPO,
                          timeout=120)


def test_cli_takes_a_stack_and_a_plan_file_takes_one(tmp_path):
    from bot.cli import STACK_CHOICES

    assert tuple(STACK_CHOICES) == tuple(STACK_IDS)
    out = _cli("estimate", "--model", "qwen3-30b-a3b", "--method", "qlora", "--seq-len", "2048", "--stack", "hf",
               "--json")
    data = json.loads(out.stdout)
    assert data["plan"]["stack"] == "hf" and data["plan"]["qlora_moe_experts"] == "bf16"
    plan = tmp_path / "plan.yaml"
    plan.write_text("model: qwen3-30b-a3b\nmethod: qlora\nseq_len: 2048\nstack: axolotl\n", "utf-8")
    data = json.loads(_cli("estimate", "--plan", str(plan), "--json").stdout)
    assert data["plan"]["stack"] == "axolotl" and data["plan"]["qlora_moe_experts"] == "nf4"
    assert data["plan"]["cross_entropy"] == "fused"
    bad = _cli("estimate", "--model", "llama-3.1-8b", "--method", "lora", "--seq-len", "2048", "--stack", "colab")
    assert bad.returncode != 0 and "stack" in bad.stderr


def test_every_card_names_its_interconnect_with_a_source(tmp_path):
    import shutil

    from bot.advisor.knowledge import KnowledgeError

    for card in KB.gpus:
        assert card.interconnect == ("nvlink" if card.nvlink else "pcie") and "NVIDIA" in card.interconnect_source
    root = tmp_path / "knowledge"
    shutil.copytree(REPO / "knowledge", root)
    text = (root / "gpus.yml").read_text(encoding="utf-8")
    (root / "gpus.yml").write_text(text.replace("interconnect: nvlink", "interconnect: pcie", 1), encoding="utf-8")
    with pytest.raises(KnowledgeError, match="interconnect"):
        load_knowledge(root)


@pytest.mark.parametrize("preset_id,query", [("gemma-3-270m", "gemma 3 270m"), ("gemma-3-270m", "Gemma-3-270M")])
def test_new_small_and_open_presets_resolve_and_match_their_published_size(preset_id, query):
    from bot.advisor.knowledge import resolve_model

    preset = resolve_model(query, KB).preset
    assert preset.id == preset_id and preset.source and preset.published_source
    # published as a rounded size ("270 million")
    assert abs(preset.arch.params - preset.published_params) <= 0.03 * preset.published_params
    assert parse_values(f"{query} ile LoRA 2048 token").model_id == preset_id


@pytest.mark.parametrize("lang", ["fa", "tr"])
def test_a_card_without_published_speed_is_said_to_be_estimated(lang):
    a40 = advise(AdviceRequest(model="llama-3.1-8b", method="qlora", seq_len=2048))
    assert a40.recommended_card.card_id == "a40"
    assert STACKS.text("speed_estimated", lang, card="A40") in render_advice(a40, lang)
    a100 = advise(AdviceRequest(model="qwen3-30b-a3b", method="qlora", seq_len=2048, stack="hf"))
    assert a100.recommended_card.card_id == "a100"   # A100 speed rests on published runs
    assert STACKS.text("speed_estimated", lang, card="A100") not in render_advice(a100, lang)


def test_with_a_known_volume_the_stack_is_chosen_by_total_cost_and_the_other_route_is_given():
    """4-bit experts save memory but cost speed (the published Axolotl Scout QLoRA run): with a volume the total cost
    decides, and the answer still gives the other stack's figure."""
    advice = advise(AdviceRequest(model="qwen3-30b-a3b", method="qlora", seq_len=2048, total_tokens=10_000_000))
    others = {}
    for stack in ("hf", "unsloth", "axolotl"):
        named = advise(AdviceRequest(model="qwen3-30b-a3b", method="qlora", seq_len=2048, total_tokens=10_000_000,
                                     stack=stack))
        others[stack] = named.recommended_card.cost_usd_with_vat
    assert advice.recommended_card.cost_usd_with_vat == pytest.approx(min(others.values()))
    if advice.plan.qlora_moe_experts == "bf16":
        assert advice.stack_choice.four_bit is not None
    else:
        assert advice.stack_choice.plain is not None
