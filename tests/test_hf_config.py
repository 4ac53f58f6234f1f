"""Bring your own config: config.json dicts (values from the models' published config files, as recorded in the
project's research notes models-2026.md §1.2-1.5) read into the same architecture as the presets."""
from __future__ import annotations

import json

import pytest

from bot.advisor.estimator import estimate_memory
from bot.advisor.hf_config import describe, read_hf_config
from bot.advisor.knowledge import InputError, load_knowledge
from bot.advisor.plans import default_plan

KB = load_knowledge()

QWEN3_8B = {
    "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 4096, "intermediate_size": 12288,
    "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
    "vocab_size": 151936, "tie_word_embeddings": False, "attention_bias": False, "hidden_act": "silu",
    "max_position_embeddings": 40960, "rope_theta": 1000000, "torch_dtype": "bfloat16",
}
QWEN3_30B_A3B = {
    "model_type": "qwen3_moe", "hidden_size": 2048, "intermediate_size": 6144, "moe_intermediate_size": 768,
    "num_hidden_layers": 48, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
    "num_experts": 128, "num_experts_per_tok": 8, "decoder_sparse_step": 1, "mlp_only_layers": [],
    "norm_topk_prob": True, "vocab_size": 151936, "tie_word_embeddings": False,
}
GPT_OSS_20B = {
    "model_type": "gpt_oss", "hidden_size": 2880, "intermediate_size": 2880, "num_hidden_layers": 24,
    "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "num_local_experts": 32,
    "num_experts_per_tok": 4, "vocab_size": 201088, "tie_word_embeddings": False, "attention_bias": True,
    "sliding_window": 128, "layer_types": ["sliding_attention", "full_attention"] * 12,
    "quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn"]},
}
# The multimodal Gemma 3 checkpoints write only a few text keys; the rest are Gemma3TextConfig defaults.
GEMMA3_4B = {
    "architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
    "text_config": {"model_type": "gemma3_text", "hidden_size": 2560, "intermediate_size": 10240,
                    "num_hidden_layers": 34, "sliding_window": 1024},
    "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 1152, "intermediate_size": 4304,
                      "num_hidden_layers": 27, "num_attention_heads": 16, "patch_size": 14},
}
QWEN35_27B = {
    "model_type": "qwen3_5",
    "text_config": {"model_type": "qwen3_5_text", "hidden_size": 5120, "intermediate_size": 17408,
                    "num_hidden_layers": 64, "num_attention_heads": 24, "num_key_value_heads": 4, "head_dim": 256,
                    "vocab_size": 248320, "tie_word_embeddings": False, "full_attention_interval": 4,
                    "linear_num_key_heads": 16, "linear_num_value_heads": 48, "linear_key_head_dim": 128,
                    "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4},
}
LLAMA4_SCOUT = {
    "model_type": "llama4",
    "text_config": {"model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192,
                    "intermediate_size_mlp": 16384, "num_hidden_layers": 48, "num_attention_heads": 40,
                    "num_key_value_heads": 8, "head_dim": 128, "num_local_experts": 16, "num_experts_per_tok": 1,
                    "interleave_moe_layer_step": 1, "vocab_size": 202048, "tie_word_embeddings": False,
                    "attention_chunk_size": 8192, "no_rope_layer_interval": 4, "use_qk_norm": True},
}
MIXTRAL = {
    "model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "num_local_experts": 8, "num_experts_per_tok": 2,
    "vocab_size": 32000, "tie_word_embeddings": False,
}


@pytest.mark.parametrize("config,preset_id", [
    (QWEN3_8B, "qwen3-8b"), (QWEN3_30B_A3B, "qwen3-30b-a3b"), (GPT_OSS_20B, "gpt-oss-20b"),
    (GEMMA3_4B, "gemma-3-4b"), (QWEN35_27B, "qwen3.5-27b"), (LLAMA4_SCOUT, "llama-4-scout"),
    (MIXTRAL, "mixtral-8x7b"),
])
def test_config_reads_to_the_preset_architecture(config, preset_id):
    arch = read_hf_config(json.loads(json.dumps(config)))
    preset = KB.model(preset_id).arch
    assert arch.params == preset.params
    for field in ("layers", "hidden", "heads", "kv_heads", "vocab", "tied_embeddings", "layer_pattern"):
        assert getattr(arch, field) == getattr(preset, field), field
    assert (arch.moe is None) == (preset.moe is None)
    if arch.moe:
        assert (arch.moe.experts, arch.moe.experts_per_token, arch.moe.expert_intermediate) == (
            preset.moe.experts, preset.moe.experts_per_token, preset.moe.expert_intermediate)


def test_llama4_config_routes_every_token_through_every_expert():
    """Transformers' Llama4TextMoe repeats each token for all experts; other MoE families dispatch sparsely."""
    assert read_hf_config(LLAMA4_SCOUT).moe.dense_dispatch and KB.model("llama-4-scout").arch.moe.dense_dispatch
    assert KB.model("llama-4-maverick").arch.moe.dense_dispatch
    assert not read_hf_config(QWEN3_30B_A3B).moe.dense_dispatch and not read_hf_config(MIXTRAL).moe.dense_dispatch


def test_head_dim_is_read_not_derived():
    arch = read_hf_config(GPT_OSS_20B)
    assert arch.head_dim == 64 and arch.hidden // arch.heads == 45
    assert arch.moe.expert_dtype == "mxfp4" and arch.attention_sinks and arch.qkv_bias and arch.o_bias


def test_multimodal_config_counts_its_vision_tower_as_frozen_weights():
    arch = read_hf_config(GEMMA3_4B)
    assert 0.3e9 < arch.vision_params < 0.6e9
    assert arch.layer_pattern == "SSSSSF" and arch.sliding_window == 1024 and arch.qk_norm


def test_a_config_gives_the_same_estimate_as_the_preset():
    from_config = estimate_memory(default_plan(read_hf_config(QWEN3_30B_A3B), "lora", 2048))
    from_preset = estimate_memory(default_plan(KB.model("qwen3-30b-a3b").arch, "lora", 2048))
    assert from_config.per_gpu_gib == pytest.approx(from_preset.per_gpu_gib, rel=1e-6)


def test_describe_lists_the_values_read():
    items = " | ".join(describe(read_hf_config(QWEN3_30B_A3B)))
    assert "layers 48" in items and "experts 128 top-8 width 768" in items and "head_dim 128" in items


@pytest.mark.parametrize("missing", ["num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size"])
def test_missing_key_is_named(missing):
    config = {k: v for k, v in QWEN3_8B.items() if k != missing}
    with pytest.raises(InputError) as info:
        read_hf_config(config)
    assert info.value.key == "config_missing_key" and info.value.params["name"] == missing
    for lang in ("fa", "tr", "en"):
        assert missing in KB.text("error_config_missing_key", lang, **info.value.params)


def test_missing_linear_attention_key_is_named():
    text = {k: v for k, v in QWEN35_27B["text_config"].items() if k != "linear_num_value_heads"}
    with pytest.raises(InputError) as info:
        read_hf_config({"model_type": "qwen3_5", "text_config": text})
    assert info.value.params["name"] == "linear_num_value_heads"


@pytest.mark.parametrize("bad", [None, [], "config", 7, {}])
def test_not_an_object(bad):
    with pytest.raises(InputError) as info:
        read_hf_config(bad)
    assert info.value.key == "config_not_object"
    assert KB.text("error_config_not_object", "fa")


@pytest.mark.parametrize("value", [-1, 0, 1.5, "big", True, float("nan"), 10 ** 5000],
                         ids=["negative", "zero", "fraction", "text", "bool", "nan", "5000-digits"])
def test_bad_values_are_named(value):
    with pytest.raises(InputError) as info:
        read_hf_config({**QWEN3_8B, "hidden_size": value})
    assert info.value.key == "config_bad_value" and info.value.params["name"] == "hidden_size"
    assert "hidden_size" in KB.text("error_config_bad_value", "tr", **info.value.params)


def test_inconsistent_heads_are_a_bad_value():
    with pytest.raises(InputError) as info:
        read_hf_config({**QWEN3_8B, "num_key_value_heads": 7})
    assert info.value.key == "config_bad_value"
