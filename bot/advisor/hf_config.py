"""Read a Hugging Face ``config.json`` (a dict) into a :class:`bot.advisor.schema.ModelArch`.

Handles the layouts of the families the advisor knows (see knowledge/models.yml for the key mapping):
dense decoders (Llama, Mistral, Qwen2/3, Phi-3/4, Gemma 2/3), Mixture-of-Experts (Mixtral, Qwen MoE, gpt-oss,
Llama 4, DeepSeek-style ``n_routed_experts``), hybrid attention (``layer_types``, ``sliding_window_pattern``,
``full_attention_interval``, Gated DeltaNet ``linear_*`` keys) and multimodal checkpoints whose language model sits
under ``text_config``. Nothing is downloaded; the caller passes the parsed JSON.

A config that cannot be read raises :class:`bot.advisor.knowledge.InputError` with key ``config_missing_key``
(``params["name"]`` names the missing config.json key), ``config_bad_value`` or ``config_not_object``; their texts are
``error_<key>`` in knowledge/texts.yml, in Persian, Turkish and English. :func:`describe` lists the values read, so
the answer can say which ones it used.
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Literal, Mapping, Optional, overload

from pydantic import ValidationError

from bot.advisor.knowledge import InputError
from bot.advisor.schema import ATTENTION_KINDS, LinearAttention, ModelArch, MoESpec

# model_type values whose configs omit tie_word_embeddings because their config class defaults it to True
# (transformers Gemma*Config, Phi-3 small models keep it False explicitly in config.json).
_TIED_BY_DEFAULT = ("gemma", "gemma2", "gemma3", "gemma3_text", "gemma4", "gemma4_text")
# model_type values with per-head RMSNorm on q and k (their modelling code has q_norm/k_norm).
_QK_NORM = ("qwen3", "qwen3_moe", "qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text",
            "gemma3", "gemma3_text", "gemma4", "gemma4_text", "olmo2", "olmo3")
# Qwen2-style attention: biases on q, k and v but not on o (no config key says so).
_QKV_BIAS = ("qwen2", "qwen2_moe", "qwen2_5_vl_text")
# Pre- and post-norms around attention and MLP.
_FOUR_NORMS = ("gemma2", "gemma3", "gemma3_text", "gemma4", "gemma4_text")
_GATED_ATTENTION = ("qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text")
_GELU_MLP = ("gpt2", "gpt_neox", "gptj", "phi", "falcon", "starcoder2", "bloom", "opt")
_LAYER_TYPES = {"full_attention": "F", "sliding_attention": "S", "sliding_window": "S", "local": "S",
                "chunked_attention": "C", "linear_attention": "L", "global": "F"}
MAX_CONFIG_KEYS = 2000
# Values some published config.json files leave to their config class (the multimodal Gemma 3 checkpoints write only
# hidden_size, intermediate_size, num_hidden_layers and sliding_window in text_config). Copied from
# transformers/models/gemma3/configuration_gemma3.py Gemma3TextConfig.__init__ defaults.
_CLASS_DEFAULTS = {
    "gemma3_text": {"vocab_size": 262_208, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
                    "sliding_window_pattern": 6, "tie_word_embeddings": True},
}


def _short(value: Any) -> str:
    """A printable excerpt of a bad value (a 5,000-digit number must not raise while being shown)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10 ** 18:
        return "a very large number"
    return repr(value)[:40]


def _error(key: str, text_key: str, message: str, **params: Any) -> InputError:
    return InputError("config", text_key, message, name=key, **params)


def _text_part(config: Mapping[str, Any]) -> Mapping[str, Any]:
    text = config.get("text_config")
    if isinstance(text, Mapping) and text:
        merged = dict(config)
        merged.update(text)   # the language model's keys win over the wrapper's
        merged.setdefault("model_type", config.get("model_type"))
        if "tie_word_embeddings" in config and "tie_word_embeddings" not in text:
            merged["tie_word_embeddings"] = config["tie_word_embeddings"]
        return merged
    return config


# A required key, or one with a whole-number default, always gives a number (a missing required key raises).
@overload
def _int(config: Mapping[str, Any], *keys: str, required: bool = ..., default: int) -> int: ...
@overload
def _int(config: Mapping[str, Any], *keys: str, required: Literal[True] = ..., default: None = ...) -> int: ...
@overload
def _int(config: Mapping[str, Any], *keys: str, required: bool, default: Optional[int] = ...) -> Optional[int]: ...


def _int(config: Mapping[str, Any], *keys: str, required: bool = True, default: Optional[int] = None) -> Optional[int]:
    for key in keys:
        if key in config and config[key] is not None:
            value = config[key]
            ok = isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 10 ** 7
            if isinstance(value, float) and math.isfinite(value) and value.is_integer() and 0 < value <= 10 ** 7:
                ok = True
            if not ok:
                shown = _short(value)
                raise _error(key, "config_bad_value", f"{key}: expected a positive whole number, got {shown}",
                             value=shown)
            return int(value)
    if required and default is None:
        raise _error(keys[0], "config_missing_key", f"config.json has no {keys[0]!r}")
    return default


def _pattern(cfg: Mapping[str, Any], layers: int, model_type: str) -> str:
    types = cfg.get("layer_types")
    if isinstance(types, list) and types:
        letters = "".join(_LAYER_TYPES.get(str(t), "F") for t in types[:layers])
        for size in range(1, len(letters) + 1):   # shortest cycle that repeats into the list
            if len(letters) % size == 0 and letters[:size] * (len(letters) // size) == letters:
                return letters[:size]
        return letters[:64] if len(letters) <= 64 else _dominant_cycle(letters)
    if cfg.get("full_attention_interval"):
        n = int(cfg["full_attention_interval"])
        return "L" * (n - 1) + "F"
    if cfg.get("sliding_window_pattern") and cfg.get("sliding_window"):
        n = int(cfg["sliding_window_pattern"])
        return "S" * (n - 1) + "F"
    if model_type.startswith("llama4") and cfg.get("attention_chunk_size"):
        n = int(cfg.get("no_rope_layer_interval") or 4)
        return "C" * (n - 1) + "F"
    if model_type == "gemma2" and cfg.get("sliding_window"):
        return "SF"
    return "F"


def _dominant_cycle(letters: str) -> str:
    counts = {k: letters.count(k) for k in ATTENTION_KINDS if k in letters}
    full = counts.get("F", 0) or 1
    other = max((k for k in counts if k != "F"), key=counts.__getitem__, default="F")
    ratio = max(round((len(letters) - full) / full), 0)
    return (other * ratio + "F")[:64]


def _moe(cfg: Mapping[str, Any], layers: int, hidden: int, model_type: str) -> Optional[MoESpec]:
    experts = _int(cfg, "num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts", required=False)
    if not experts or experts <= 1:
        return None
    top_k = _int(cfg, "num_experts_per_tok", "num_experts_per_token", "moe_top_k", "top_k")
    width = _int(cfg, "moe_intermediate_size", "expert_intermediate_size", "intermediate_size")
    shared = _int(cfg, "n_shared_experts", "num_shared_experts", required=False, default=0) or 0
    shared_width = _int(cfg, "shared_expert_intermediate_size", required=False)
    if shared_width and not shared:
        shared = 1
    if model_type.startswith("llama4"):
        shared, shared_width = 1, _int(cfg, "intermediate_size")
    every = _int(cfg, "interleave_moe_layer_step", "decoder_sparse_step", "moe_layer_freq", required=False,
                 default=1) or 1
    first_dense = _int(cfg, "first_k_dense_replace", required=False, default=0) or 0
    quant_config = cfg.get("quantization_config")
    quant = quant_config if isinstance(quant_config, Mapping) else {}
    mxfp4 = str(quant.get("quant_method", "")).lower() == "mxfp4"
    if top_k > experts:
        raise _error("num_experts_per_tok", "config_bad_value",
                     f"num_experts_per_tok {top_k} is more than the {experts} experts", value=str(top_k))
    return MoESpec(experts=experts, experts_per_token=top_k, expert_intermediate=width, shared_experts=shared,
                   shared_intermediate=shared_width,
                   shared_expert_gate=model_type.startswith(("qwen2_moe", "qwen3_next", "qwen3_5")) and bool(shared),
                   every=every, first_dense=first_dense,
                   router_bias=model_type == "gpt_oss", expert_bias=model_type == "gpt_oss",
                   expert_dtype="mxfp4" if mxfp4 else "bf16", dequantize_for_training=True,
                   dense_dispatch=model_type.startswith("llama4"))


def _vision_params(config: Mapping[str, Any], text_hidden: int) -> int:
    """A rough count of a ViT-style vision tower from its config (frozen weights; only its memory matters):
    per layer 4*h^2 attention + MLP (2 or 3 matrices), plus a projector to the text width."""
    vision = config.get("vision_config")
    if not isinstance(vision, Mapping):
        return 0
    try:
        h = int(vision.get("hidden_size") or vision.get("embed_dim") or vision.get("width") or 0)
        depth = int(vision.get("num_hidden_layers") or vision.get("depth") or vision.get("layers") or 0)
        inter = int(vision.get("intermediate_size") or vision.get("mlp_dim") or 4 * h)
    except (TypeError, ValueError):
        return 0
    if h <= 0 or depth <= 0 or h > 65536 or depth > 1000 or inter > 10 ** 6:
        return 0
    return depth * (4 * h * h + 2 * h * inter) + h * text_hidden


def read_hf_config(mapping: Any) -> ModelArch:
    """The architecture a Hugging Face config.json describes (see the module docstring)."""
    if not isinstance(mapping, Mapping) or not mapping:
        raise _error("-", "config_not_object", "config.json must be a JSON object with the model's settings")
    if len(mapping) > MAX_CONFIG_KEYS:
        raise _error("-", "config_not_object", "config.json has too many keys to be a model configuration")
    cfg = dict(_text_part(mapping))
    model_type = str(cfg.get("model_type") or "").lower()
    for key, value in _CLASS_DEFAULTS.get(model_type, {}).items():
        cfg.setdefault(key, value)
    layers = _int(cfg, "num_hidden_layers", "n_layer", "num_layers", "n_layers")
    hidden = _int(cfg, "hidden_size", "n_embd", "d_model", "dim")
    heads = _int(cfg, "num_attention_heads", "n_head", "num_heads", "n_heads")
    kv_heads = _int(cfg, "num_key_value_heads", "num_kv_heads", "n_kv_heads", required=False, default=heads)
    vocab = _int(cfg, "vocab_size", "padded_vocab_size")
    moe = _moe(cfg, layers, hidden, model_type)
    intermediate: Optional[int]
    if model_type.startswith("llama4") and moe is not None:
        intermediate = _int(cfg, "intermediate_size_mlp", "intermediate_size")
    else:
        intermediate = _int(cfg, "intermediate_size", "n_inner", "ffn_dim", "moe_intermediate_size",
                            required=moe is None, default=moe.expert_intermediate if moe else None)
    tied = cfg.get("tie_word_embeddings")
    if tied is None:
        tied = model_type in _TIED_BY_DEFAULT
    if not isinstance(tied, bool):
        raise _error("tie_word_embeddings", "config_bad_value", "tie_word_embeddings must be true or false",
                     value=_short(tied))
    head_dim = _int(cfg, "head_dim", required=False)
    pattern = _pattern(cfg, layers, model_type)
    window = _int(cfg, "sliding_window", "attention_chunk_size", required=False) if set(pattern) & set("SC") else None
    if set(pattern) & set("SC") and window is None:
        raise _error("sliding_window", "config_missing_key", "layer_types name sliding layers but config.json has "
                     "no 'sliding_window'")
    linear = None
    if "L" in pattern:
        linear = LinearAttention(
            key_heads=_int(cfg, "linear_num_key_heads"), value_heads=_int(cfg, "linear_num_value_heads"),
            key_head_dim=_int(cfg, "linear_key_head_dim"), value_head_dim=_int(cfg, "linear_value_head_dim"),
            conv_kernel=_int(cfg, "linear_conv_kernel_dim", required=False, default=4))
    attention_bias = bool(cfg.get("attention_bias", False))
    softcap = cfg.get("final_logit_softcapping")
    fields: Dict[str, Any] = dict(
        name=str(cfg.get("_name_or_path") or mapping.get("_name_or_path") or model_type or "config.json")[:80],
        layers=layers, hidden=hidden, heads=heads, kv_heads=kv_heads, intermediate=intermediate, vocab=vocab,
        tied_embeddings=tied, mlp="gelu" if model_type in _GELU_MLP else "swiglu", head_dim=head_dim,
        qkv_bias=attention_bias or model_type in _QKV_BIAS, o_bias=attention_bias,
        qk_norm=model_type in _QK_NORM, norms_per_layer=4 if model_type in _FOUR_NORMS else 2,
        attention_sinks=model_type == "gpt_oss", attention_output_gate=bool(cfg.get("attn_output_gate",
                                                                                  model_type in _GATED_ATTENTION)),
        layer_pattern=pattern, sliding_window=window,
        global_head_dim=_int(cfg, "global_head_dim", required=False),
        global_kv_heads=_int(cfg, "num_global_key_value_heads", required=False),
        global_shared_kv=bool(cfg.get("attention_k_eq_v", False)),
        linear_attention=linear, moe=moe, vision_params=_vision_params(mapping, hidden),
        final_logit_softcap=float(softcap) if isinstance(softcap, (int, float)) and softcap > 0 else None,
    )
    try:
        return ModelArch(**fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"] if p != "__root__") or "-"
        raise _error(loc, "config_bad_value", f"{loc}: {first['msg']}", value=loc) from None


def describe(arch: ModelArch) -> List[str]:
    """The values read, as short 'key value' items for the answer (numbers and config names, no prose)."""
    items = [f"layers {arch.layers}", f"hidden {arch.hidden}", f"heads {arch.heads}/{arch.kv_heads}",
             f"head_dim {arch.head_dim or arch.hidden // arch.heads}", f"intermediate {arch.intermediate}",
             f"vocab {arch.vocab}", f"tied {str(arch.tied_embeddings).lower()}"]
    if arch.layer_pattern != "F":
        items.append(f"layers {arch.layer_pattern}" + (f" window {arch.sliding_window}" if arch.sliding_window else ""))
    if arch.moe:
        items.append(f"experts {arch.moe.experts} top-{arch.moe.experts_per_token} width {arch.moe.expert_intermediate}"
                     + (f" shared {arch.moe.shared_experts}" if arch.moe.shared_experts else ""))
    if arch.vision_params:
        items.append(f"vision ~{arch.vision_params / 1e9:.2f}B")
    assert arch.params is not None      # ModelArch's validator counts it when the config does not state it
    items.append(f"params {arch.params / 1e9:.2f}B")
    return items
