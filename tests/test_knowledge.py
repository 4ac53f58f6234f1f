"""Knowledge base: the catalogue matches the seed article, presets match config.json/calibration, the loader
refuses broken files with the file, field and reason, and model names resolve the way users type them."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from bot.present.render import faq_text
from bot.advisor.knowledge import (
    DEFAULT_ROOT,
    InputError,
    KnowledgeError,
    UnknownModel,
    count_params,
    load_knowledge,
    resolve_model,
)

REPO = Path(__file__).resolve().parents[1]
SEED = REPO / "tests" / "data" / "seed_gpu_table.md"          # the source article's GPU table, copied verbatim
CASES = REPO / "knowledge" / "calibration" / "vram_cases.yaml"


@pytest.fixture(scope="module")
def kb():
    return load_knowledge()


# ---------------------------------------------------------------------------------------------- catalogue


def seed_catalogue():
    """(name, VRAM GB, $/h) rows of the seed article's GPU table."""
    rows = re.findall(r"^\| ([A-Z0-9][A-Za-z0-9 ]+?) \| (\d+) GB \| \$(\d+\.\d+) \|", SEED.read_text("utf-8"), re.M)
    return [(name.strip(), int(vram), float(price)) for name, vram, price in rows]


def test_catalogue_is_the_seed_table(kb):
    seed = seed_catalogue()
    assert len(seed) == 9
    assert [(g.name, int(g.vram_gb), g.price_usd_hour) for g in kb.gpus] == seed


def test_gpu_ids_are_ascii_and_usable_memory_below_marketed(kb):
    assert [g.id for g in kb.gpus] == ["l4", "rtx4090", "a40", "l40s", "rtx-pro-6000", "a100", "h100", "h200", "b200"]
    for card in kb.gpus:
        assert card.id.isascii()
        assert 0.9 * card.vram_gb < card.usable_gib <= card.vram_gb
        assert card.typical_use.fa and card.typical_use.tr


def test_hardware_figures_from_gpu_facts(kb):
    # gpu-facts.md §1.1: dense BF16 with FP32 accumulate (never the sparse or FP16-accumulate figure)
    assert kb.gpu("rtx4090").bf16_tflops == pytest.approx(165.2)
    assert kb.gpu("h100").bf16_tflops == kb.gpu("h200").bf16_tflops == 989
    assert kb.gpu("a100").usable_gib == 80.0
    assert kb.gpu("l4").usable_gib == 22.5
    assert not kb.gpu("l40s").nvlink and kb.gpu("h100").nvlink


def test_vat_is_twenty_percent(kb):
    assert kb.pricing.vat_rate == 0.20
    assert kb.pricing.with_vat(4.99) == pytest.approx(5.988)


def test_loaded_once(kb):
    assert load_knowledge() is kb
    assert load_knowledge(DEFAULT_ROOT) is kb


# ---------------------------------------------------------------------------------------------- presets

REQUIRED_PRESETS = [
    "llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3-8b", "llama-3-70b", "llama-3.1-8b", "llama-3.1-70b",
    "llama-3.2-1b", "llama-3.2-3b", "mistral-7b", "qwen2.5-0.5b", "qwen2.5-1.5b", "qwen2.5-3b", "qwen2.5-7b",
    "qwen2.5-14b", "qwen2.5-32b", "qwen2.5-72b", "gemma-2-2b", "gemma-2-9b", "gemma-2-27b", "phi-3-mini",
    "phi-3-medium", "yi-34b", "codellama-34b",
]

# Parameter counts as published on the models' Hugging Face pages / safetensors metadata.
PUBLISHED_PARAMS = {
    "llama-2-7b": 6_738_415_616, "llama-3.1-8b": 8_030_261_248, "llama-3.1-70b": 70_553_706_496,
    "llama-3.2-1b": 1_235_814_400, "mistral-7b": 7_241_732_096, "qwen2.5-0.5b": 494_032_768,
    "qwen2.5-7b": 7_615_616_512, "qwen2.5-72b": 72_706_203_648, "gemma-2-9b": 9_241_705_984,
    "gemma-2-27b": 27_227_128_320, "phi-3-mini": 3_821_079_552, "yi-34b": 34_388_917_248,
}


def test_all_required_presets_present(kb):
    assert set(REQUIRED_PRESETS) <= {m.id for m in kb.models}


@pytest.mark.parametrize("preset_id,params", sorted(PUBLISHED_PARAMS.items()))
def test_params_computed_from_shapes_match_published_counts(kb, preset_id, params):
    assert kb.model(preset_id).arch.params == params


def test_presets_agree_with_calibration_cases(kb):
    names = {"Llama-2-7B": "llama-2-7b", "Llama-2-13B": "llama-2-13b", "Llama-2-70B": "llama-2-70b",
             "Llama-3-8B": "llama-3-8b", "Meta-Llama-3-8B-Instruct": "llama-3-8b", "Llama-3.1-8B": "llama-3.1-8b",
             "Llama-3.1-70B": "llama-3.1-70b", "Mistral-7B-v0.1": "mistral-7b", "Llama-3.2-3B": "llama-3.2-3b"}
    cases = yaml.safe_load(CASES.read_text("utf-8"))["cases"]
    compared = 0
    for case in cases:
        model = case["plan"]["model"]
        if model["name"] not in names:
            continue
        preset = kb.model(names[model["name"]]).arch
        if model["tied_embeddings"] != preset.tied_embeddings:
            continue  # litgpt keeps a separate LM head copy (the case's note says so)
        for field in ("params", "layers", "hidden", "heads", "kv_heads", "intermediate", "vocab", "mlp"):
            assert getattr(preset, field) == model[field], (case["id"], field)
        compared += 1
    assert compared >= 40


def test_representative_sizes_point_to_presets(kb):
    reps = kb.representative_by_size
    assert reps[7] in ("mistral-7b", "llama-2-7b")
    assert (reps[8], reps[13], reps[14], reps[32], reps[34], reps[70], reps[72]) == (
        "llama-3.1-8b", "llama-2-13b", "qwen2.5-14b", "qwen2.5-32b", "yi-34b", "llama-3.1-70b", "qwen2.5-72b")


# ---------------------------------------------------------------------------------------------- resolution


@pytest.mark.parametrize("query,expected", [
    ("llama3 8b", "llama-3-8b"), ("llama-3.1-8b", "llama-3.1-8b"), ("llama 8b", "llama-3.1-8b"),
    ("Llama-3.1-8B-Instruct", "llama-3.1-8b"), ("meta-llama/Llama-2-7b-hf", "llama-2-7b"),
    ("qwen 14b", "qwen3-14b"), ("Qwen2.5-7B-Instruct", "qwen2.5-7b"), ("mistral-7b", "mistral-7b"),
    ("Mistral-7B-v0.1", "mistral-7b"), ("mistral", "mistral-7b"), ("gemma2 9b", "gemma-2-9b"),
    ("gemma-2-27b-it", "gemma-2-27b"), ("phi3 mini", "phi-3-mini"), ("Phi-3-medium-4k-instruct", "phi-3-medium"),
    ("yi 34b", "yi-34b"), ("codellama 34b", "codellama-34b"), ("llama 70b", "llama-3.3-70b"),
    ("LLAMA 2 13B", "llama-2-13b"), ("qwen 500m", "qwen2.5-0.5b"),
])
def test_names_resolve(query, expected):
    resolved = resolve_model(query)
    assert resolved.preset.id == expected
    assert resolved.by_size is False


@pytest.mark.parametrize("size,expected", [
    (7, "mistral-7b"), (8, "llama-3.1-8b"), (13, "llama-2-13b"), ("13b", "llama-2-13b"), ("14B", "qwen2.5-14b"),
    (32, "qwen2.5-32b"), (34, "yi-34b"), (70, "llama-3.1-70b"), (72, "qwen2.5-72b"),
    (6, "mistral-7b"), (12, "llama-2-13b"), (65, "llama-3.1-70b"), (0.4, "qwen2.5-0.5b"),
])
def test_sizes_resolve_to_representatives(size, expected):
    resolved = resolve_model(size)
    assert resolved.preset.id == expected
    assert resolved.by_size is True
    assert resolved.requested_size_b == float(str(size).lower().rstrip("b"))


def test_unknown_model_suggests_closest():
    with pytest.raises(UnknownModel) as info:
        resolve_model("lama 3 8b")
    assert info.value.suggestions and info.value.suggestions[0] in ("llama-3-8b", "llama-3.1-8b")
    assert isinstance(info.value, ValueError) and info.value.field == "model"


def test_ambiguous_name_lists_candidates_representative_first():
    with pytest.raises(UnknownModel) as info:
        resolve_model("llama")
    assert len(info.value.suggestions) >= 3
    assert info.value.suggestions[0] in load_knowledge().representative_by_size.values()


def test_nonsense_has_no_suggestions():
    with pytest.raises(UnknownModel) as info:
        resolve_model("xyzzy")
    assert info.value.suggestions == []


@pytest.mark.parametrize("bad", [0, -7, float("nan"), float("inf")])
def test_bad_sizes_rejected(bad):
    with pytest.raises(InputError) as info:
        resolve_model(bad)
    assert info.value.field == "size_b"


def test_count_params_handles_bias_headdim_and_gemma_norms(kb):
    gemma = kb.model("gemma-2-2b")
    assert gemma.arch.head_dim == 256 and gemma.arch.norms_per_layer == 4
    assert kb.model("qwen2.5-0.5b").arch.qkv_bias
    assert count_params(gemma.arch) == gemma.arch.params


# Every preset of issue 9 (item 5), by id.
NEW_PRESETS = [
    "qwen3-0.6b", "qwen3-1.7b", "qwen3-4b", "qwen3-8b", "qwen3-14b", "qwen3-32b", "qwen3-30b-a3b", "qwen3-235b-a22b",
    "qwen3.5-9b", "qwen3.5-27b", "qwen3.5-35b-a3b", "gemma-3-1b", "gemma-3-4b", "gemma-3-12b", "gemma-3-27b",
    "gemma-4-31b", "gemma-4-26b-a4b", "llama-3.3-70b", "llama-4-scout", "llama-4-maverick", "gpt-oss-20b",
    "gpt-oss-120b", "mistral-small-3.1-24b", "mistral-small-3.2-24b", "magistral-small", "mixtral-8x7b",
    "mixtral-8x22b", "phi-4", "phi-4-mini", "deepseek-r1-distill-qwen-1.5b", "deepseek-r1-distill-qwen-7b",
    "deepseek-r1-distill-qwen-14b", "deepseek-r1-distill-qwen-32b", "deepseek-r1-distill-llama-8b",
    "deepseek-r1-distill-llama-70b",
]


def test_new_presets_present_with_family_and_source(kb):
    ids = {m.id for m in kb.models}
    assert set(NEW_PRESETS) <= ids
    for preset in kb.models:
        assert preset.family in kb.families and preset.source and preset.published_source


@pytest.mark.parametrize("preset_id", REQUIRED_PRESETS + NEW_PRESETS)
def test_computed_params_within_half_a_percent_of_published(kb, preset_id):
    preset = kb.model(preset_id)
    computed = preset.arch.params + (preset.arch.vision_params if preset.published_includes_vision else 0)
    assert abs(computed - preset.published_params) <= 0.005 * preset.published_params, (
        preset_id, computed, preset.published_params)


def test_exact_counts_of_the_new_architectures(kb):
    # keras-hub exact counts (models-2026.md §1.6): head_dim != hidden/heads, QK-norm, MoE, gpt-oss biases and sinks
    assert kb.model("qwen3-0.6b").arch.params == 596_049_920
    assert kb.model("qwen3-30b-a3b").arch.params == 30_532_122_624
    assert kb.model("gpt-oss-20b").arch.params == 20_914_757_184
    assert kb.model("gpt-oss-120b").arch.params == 116_829_156_672
    assert kb.model("mixtral-8x7b").arch.params == 46_702_792_704
    assert kb.model("magistral-small").arch.params == 23_572_403_200
    # Qwen3.5: Gated DeltaNet + gated attention; text + vision tower equals keras-hub's total within 10k params
    q = kb.model("qwen3.5-35b-a3b").arch
    assert abs(q.params + q.vision_params - 35_107_181_936) < 10_000


def test_architecture_fields_of_the_new_families(kb):
    gemma3 = kb.model("gemma-3-12b").arch
    assert gemma3.layer_pattern == "SSSSSF" and gemma3.sliding_window == 1024 and gemma3.vocab >= 262_144
    assert gemma3.head_dim == 256 and gemma3.qk_norm and gemma3.final_logit_softcap is None
    assert kb.model("gemma-4-31b").arch.final_logit_softcap == 30.0
    oss = kb.model("gpt-oss-20b").arch
    assert oss.moe.experts == 32 and oss.moe.experts_per_token == 4 and oss.moe.expert_dtype == "mxfp4"
    assert oss.layer_pattern == "SF" and oss.sliding_window == 128 and oss.attention_sinks
    maverick = kb.model("llama-4-maverick").arch
    assert maverick.moe.every == 2 and maverick.moe.shared_experts == 1 and maverick.intermediate == 16384
    assert kb.model("qwen3.5-27b").arch.layer_pattern == "LLLF"
    assert kb.model("qwen3.5-27b").arch.linear_attention.value_heads == 48


@pytest.mark.parametrize("query,expected", [
    ("qwen3 8b", "qwen3-8b"), ("Qwen3-8B", "qwen3-8b"), ("qwen 3 8b instruct", "qwen3-8b"), ("Qwen3'ü 8B", "qwen3-8b"),
    ("کوئن ۳ ۸ بی", "qwen3-8b"), ("Qwen3-30B-A3B", "qwen3-30b-a3b"), ("qwen3 30b a3b", "qwen3-30b-a3b"),
    ("qwen3-235b-a22b", "qwen3-235b-a22b"), ("Qwen3.5-27B", "qwen3.5-27b"), ("qwen 3.5 35b a3b", "qwen3.5-35b-a3b"),
    ("qwen3-4b-instruct-2507", "qwen3-4b"), ("gemma-3-12b-it", "gemma-3-12b"), ("gemma3:12b", "gemma-3-12b"),
    ("جما ۳ ۱۲b", "gemma-3-12b"), ("Gemma 3 1B", "gemma-3-1b"), ("gemma 4 31b", "gemma-4-31b"),
    ("gemma-4-26b-a4b-it", "gemma-4-26b-a4b"), ("gpt-oss-20b", "gpt-oss-20b"), ("gpt oss 120b", "gpt-oss-120b"),
    ("oss 20b", "gpt-oss-20b"), ("llama 4 scout", "llama-4-scout"), ("scout", "llama-4-scout"),
    ("Llama-4-Scout-17B-16E-Instruct", "llama-4-scout"), ("maverick", "llama-4-maverick"),
    ("mixtral 8x7b", "mixtral-8x7b"), ("Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"),
    ("mixtral 8 x 22b", "mixtral-8x22b"),
    ("میکسترال 8x7b", "mixtral-8x7b"), ("phi-4", "phi-4"), ("phi4", "phi-4"), ("Phi-4-mini-instruct", "phi-4-mini"),
    ("DeepSeek-R1-Distill-Qwen-7B", "deepseek-r1-distill-qwen-7b"),
    ("deepseek r1 70b", "deepseek-r1-distill-llama-70b"), ("r1 distill llama 8b", "deepseek-r1-distill-llama-8b"),
    ("DeepSeek-R1-Distill-Qwen-1.5B", "deepseek-r1-distill-qwen-1.5b"),
    ("mistral small 3.1", "mistral-small-3.1-24b"), ("Mistral-Small-3.2-24B-Instruct-2506", "mistral-small-3.2-24b"),
    ("magistral", "magistral-small"), ("Magistral-Small-2506", "magistral-small"), ("llama 3.3 70b", "llama-3.3-70b"),
    ("Llama-3.3-70B-Instruct", "llama-3.3-70b"), ("لاما ۳.۳ ۷۰ بی", "llama-3.3-70b"), ("qwen3 14b yi", "qwen3-14b"),
    ("Llama-3.1-8B'yi", "llama-3.1-8b"), ("کوئن3 14b رو", "qwen3-14b"),
])
def test_new_names_resolve_by_name(query, expected):
    resolved = resolve_model(query)
    assert (resolved.preset.id, resolved.by_size) == (expected, False)


def test_turkish_suffix_after_a_size_is_never_the_model_yi():
    resolved = resolve_model("14b yi")
    assert resolved.by_size and resolved.preset.id != "yi-34b"


def test_unknown_name_of_a_known_family_carries_the_stand_in_not_a_size():
    with pytest.raises(UnknownModel) as info:
        resolve_model("qwen4 8b")
    err = info.value
    assert err.family == "qwen" and err.substitute == "qwen3-8b" and err.requested_size_b == 8
    assert {"version", "vocab", "moe"} <= set(err.differences)
    resolved = resolve_model("qwen4 8b", allow_substitute=True)
    assert resolved.preset.id == "qwen3-8b" and resolved.by_size is False
    assert resolved.unrecognised == "qwen4 8b" and "moe" in resolved.differences
    with pytest.raises(UnknownModel) as info:
        resolve_model("xyzzy 7b", allow_substitute=True)
    assert info.value.substitute is None


# ---------------------------------------------------------------------------------------------- broken files


@pytest.fixture()
def knowledge_copy(tmp_path):
    target = tmp_path / "knowledge"
    shutil.copytree(DEFAULT_ROOT, target)
    return target


def _edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text("utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, count), "utf-8")


def _error(root: Path) -> KnowledgeError:
    with pytest.raises(KnowledgeError) as info:
        load_knowledge(root)
    return info.value


def test_negative_price_names_file_and_field(knowledge_copy):
    _edit(knowledge_copy / "gpus.yml", "price_usd_hour: 0.74", "price_usd_hour: -0.74")
    error = _error(knowledge_copy)
    assert error.file == "knowledge/gpus.yml"
    assert error.field == "gpus.0.price_usd_hour"
    assert "greater than 0" in error.reason


def test_missing_turkish_use_is_refused(knowledge_copy):
    _edit(knowledge_copy / "gpus.yml", "      tr: Küçük modellerde QLoRA denemeleri\n", "")
    error = _error(knowledge_copy)
    assert (error.file, error.field) == ("knowledge/gpus.yml", "gpus.0.typical_use.tr")


def test_wrong_shape_is_caught_by_the_params_check(knowledge_copy):
    _edit(knowledge_copy / "models.yml", "intermediate: 11008", "intermediate: 11009")
    error = _error(knowledge_copy)
    assert error.file == "knowledge/models.yml"
    assert error.field.startswith("models.0")
    assert "does not match" in error.reason


def test_release_dates_are_required_and_well_formed(knowledge_copy):
    _edit(knowledge_copy / "models.yml", 'released: "2025-04"', 'released: "2025-4"')
    error = _error(knowledge_copy)
    assert error.file == "knowledge/models.yml" and error.field.endswith("released")


def test_two_releases_of_one_family_and_size_in_one_month_need_days(knowledge_copy):
    _edit(knowledge_copy / "models.yml", 'released: "2025-06-10"', 'released: "2025-06"')
    error = _error(knowledge_copy)
    assert "magistral-small" in error.reason and "mistral-small-3.2-24b" in error.reason


def test_an_alias_may_not_bypass_the_newest_release(knowledge_copy):
    # "qwen 14b" on Qwen2.5 14B would skip the rule (and the note that a version was assumed)
    _edit(knowledge_copy / "models.yml", "aliases: [qwen2.5 14b]", "aliases: [qwen2.5 14b, qwen 14b]")
    error = _error(knowledge_copy)
    assert "qwen 14b" in error.reason and "qwen3-14b" in error.reason


@pytest.mark.parametrize("query, expected", [
    ("qwen 14b", "qwen3-14b"), ("gemma 27b", "gemma-3-27b"), ("llama 70b", "llama-3.3-70b"), ("phi 14b", "phi-4"),
    ("llama 8b", "llama-3.1-8b"), ("qwen 32b", "qwen3-32b"), ("phi 3.8b", "phi-4-mini"),
    ("mistral 24b", "mistral-small-3.2-24b"), ("mistral small 24b", "mistral-small-3.2-24b"),
    ("جما ۲۷ بی", "gemma-3-27b"), ("Qwen 14B'yi", "qwen3-14b"),
])
def test_family_and_size_without_a_version_is_the_newest_release(kb, query, expected):
    resolved = resolve_model(query)
    assert (resolved.preset.id, resolved.by_size, resolved.version_assumed) == (expected, False, True)
    family = [p for p in kb.models if p.family == resolved.preset.family and p.size_b == resolved.preset.size_b]
    assert all(p.released <= resolved.preset.released for p in family)


@pytest.mark.parametrize("query, expected", [
    ("qwen2.5 14b", "qwen2.5-14b"), ("gemma 2 27b", "gemma-2-27b"), ("llama 3.1 70b", "llama-3.1-70b"),
    ("phi 3 medium", "phi-3-medium"), ("qwen 7b", "qwen2.5-7b"), ("magistral 24b", "magistral-small"),
    ("gemma 12b", "gemma-3-12b"), ("deepseek 14b", "deepseek-r1-distill-qwen-14b"),
])
def test_a_named_version_or_a_single_release_is_not_an_assumption(query, expected):
    resolved = resolve_model(query)
    assert (resolved.preset.id, resolved.version_assumed) == (expected, False)


def test_a_bare_size_keeps_the_representative(kb):
    resolved = resolve_model("14b")
    assert resolved.by_size and resolved.preset.id == kb.representative_by_size[14] and not resolved.version_assumed


def test_newest_release_is_one_rule(kb):
    from bot.advisor.knowledge import newest_release

    assert newest_release("qwen", 14, kb).preset.id == "qwen3-14b"
    assert newest_release("qwen", 14, kb, among=["qwen2.5-14b"]).version_assumed is False
    assert newest_release("mistral", 24, kb).preset.id == "mistral-small-3.2-24b"  # 2025-06-20 after 2025-06-10
    assert newest_release("qwen", 13, kb) is None


def test_representative_must_name_a_preset(knowledge_copy):
    _edit(knowledge_copy / "models.yml", "13: llama-2-13b", "13: llama-2-13b-typo")
    error = _error(knowledge_copy)
    assert error.file == "knowledge/models.yml" and "llama-2-13b-typo" in error.reason


def test_unknown_perf_class_is_refused(knowledge_copy):
    _edit(knowledge_copy / "gpus.yml", "perf_class: hopper", "perf_class: quantum")
    error = _error(knowledge_copy)
    assert error.field.endswith("perf_class") and "quantum" in error.reason


def test_vat_above_one_is_refused(knowledge_copy):
    _edit(knowledge_copy / "pricing.yml", "vat_rate: 0.20", "vat_rate: 20")
    error = _error(knowledge_copy)
    assert (error.file, error.field) == ("knowledge/pricing.yml", "vat_rate")


def test_text_missing_a_language_is_refused(knowledge_copy):
    path = knowledge_copy / "texts.yml"
    data = yaml.safe_load(path.read_text("utf-8"))
    del data["texts"]["memory_line"]["tr"]
    path.write_text(yaml.safe_dump(data, allow_unicode=True), "utf-8")
    error = _error(knowledge_copy)
    assert (error.file, error.field) == ("knowledge/texts.yml", "texts.memory_line.tr")


def test_text_placeholders_must_agree(knowledge_copy):
    path = knowledge_copy / "texts.yml"
    data = yaml.safe_load(path.read_text("utf-8"))
    data["texts"]["memory_line"]["fa"] = data["texts"]["memory_line"]["fa"].replace("{low}", "{lo}")
    path.write_text(yaml.safe_dump(data, allow_unicode=True), "utf-8")
    error = _error(knowledge_copy)
    assert error.field == "texts.memory_line" and "placeholders differ" in error.reason


def test_faq_topic_needs_persian_and_turkish(knowledge_copy):
    (knowledge_copy / "faq.yml").write_text("topics:\n  vram:\n    fa: 'پاسخ'\n    tr: ''\n", "utf-8")
    error = _error(knowledge_copy)
    assert (error.file, error.field) == ("knowledge/faq.yml", "topics.vram.tr")
    assert "non-empty" in error.reason


def test_invalid_yaml_and_missing_file(knowledge_copy):
    (knowledge_copy / "pricing.yml").write_text("currency: [USD\n", "utf-8")
    error = _error(knowledge_copy)
    assert error.file == "knowledge/pricing.yml" and "invalid YAML" in error.reason
    (knowledge_copy / "pricing.yml").unlink()
    assert "not found" in _error(knowledge_copy).reason


def test_faq_is_loaded_when_present(kb):
    if not (DEFAULT_ROOT / "faq.yml").exists():
        pytest.fail("knowledge/faq.yml is part of the product")
    assert kb.faq and all(topic.fa.strip() and topic.tr.strip() for topic in kb.faq.values())


# ---------------------------------------------------------------------------------------------- texts


def test_texts_use_ascii_digits_and_proper_persian_letters(kb):
    for key, text in kb.texts.items():
        for lang in ("fa", "tr", "en"):
            value = getattr(text, lang)
            assert not re.search(r"[\u06f0-\u06f9\u0660-\u0669]", value), (key, lang)
            assert not re.search(r"[\u064a\u0643]", value), (key, lang)  # Arabic yeh/kaf instead of Persian


def test_error_texts_exist_for_every_error_key():
    import bot.advisor.advice as advice

    source = Path(advice.__file__).read_text("utf-8") + Path(__file__).parents[1].joinpath(
        "bot", "advisor", "knowledge.py").read_text("utf-8")
    keys = set(re.findall(r'"(bad_\w+|size_out_of_range|rank_\w+|missing_model|unknown_model)"',
                          source))
    texts = load_knowledge().texts
    assert keys and all(f"error_{key}" in texts for key in keys), sorted(k for k in keys if f"error_{k}" not in texts)


# a USD amount as the FAQ writes it: "$0.74", "0.74 دلار", "0,74 $", "4,99 $", "14.80 dolar", "2.24 USD"
# (a number glued to letters is a card name: the "100" of "H100 $4.99" is not an amount)
_USD_AMOUNT_RE = re.compile(r"\$\s?(\d+(?:[.,]\d+)?)|(?<![\w.,])(\d+(?:[.,]\d+)?)\s?(?:\$|دلار|dolar|USD)")
# a worked example "20 × 0.74 = 14.80 دلار" / "20 x 0.74 = $14.80"
_WORKED_EXAMPLE_RE = re.compile(r"(\d+)\s?[×x]\s?\$?(\d+(?:[.,]\d+)?)\s?(?:dolar|دلار)?\s?=\s?\$?(\d+(?:[.,]\d+)?)")


def _amount(text: str) -> float:
    return float(text.replace(",", "."))


def test_faq_prices_are_catalogue_prices(kb):
    """Every dollar amount in an FAQ answer is a catalogue hourly price, that price with VAT, or the total of a
    worked example whose hourly price is from the catalogue and whose product is right: a price changed in
    gpus.yml and forgotten in faq.yml would quote the user a wrong price."""
    prices = {card.price_usd_hour for card in kb.gpus}
    allowed = prices | {round(kb.pricing.with_vat(price), 2) for price in prices}
    found, wrong = 0, []
    for topic_id, topic in kb.faq.items():
        for lang in ("fa", "tr", "en"):
            # as the customer reads it: prices are filled from the catalogue (knowledge/faq_figures.yml)
            text = faq_text(topic_id, lang, kb) or ""
            totals = set()
            for hours, hourly, total in _WORKED_EXAMPLE_RE.findall(text):
                found += 1
                if _amount(hourly) not in prices or round(int(hours) * _amount(hourly), 2) != _amount(total):
                    wrong.append((topic_id, lang, f"{hours} x {hourly} = {total}"))
                totals.add(_amount(total))
                totals.add(round(_amount(total) * (1 + kb.pricing.vat_rate), 2))  # the same total with KDV
            for match in _USD_AMOUNT_RE.finditer(text):
                found += 1
                value = _amount(match.group(1) or match.group(2))
                if value not in allowed | totals:
                    wrong.append((topic_id, lang, match.group(0)))
    assert not wrong
    # the FAQ quotes prices in all three texts (prices_vat, h100_vs_a100, cost_control): the check has work to do
    assert found >= 15


def test_every_preset_resolves_by_every_name_it_lists(kb):
    # id, display name, each alias, the id with spaces and in capitals: always that preset, never "only a size"
    for preset in kb.models:
        for name in [preset.id, preset.display, *preset.aliases, preset.id.replace("-", " "), preset.id.upper()]:
            resolved = resolve_model(name)
            assert (resolved.preset.id, resolved.by_size) == (preset.id, False), name
