"""A Hugging Face config.json pasted into the chat: found, read, or named as unreadable."""
from __future__ import annotations

import re
from typing import Dict, Optional, Tuple

# Keys only a Hugging Face model config.json has; a JSON object with one of them is taken for a config.
CONFIG_MARKERS = ("model_type", "architectures", "num_hidden_layers", "hidden_size", "text_config",
                  "num_attention_heads", "vocab_size")
_SMART_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u00ab": '"', "\u00bb": '"',
                               "\u2018": "'", "\u2019": "'"})


def split_pasted_config(text: str) -> Tuple[str, Optional[object]]:
    """A config.json pasted into the chat: (the text around it, the JSON object), or (text, None).

    The object runs from the first "{" to the last "}"; chat apps turn quotes into typographic ones, which are put
    back first. An object that is not valid JSON but looks like a config is returned as the string "json" so the
    reply can say it could not be read."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0:
        return text, None
    if end <= start:
        # cut off before its closing brace (a message length limit): unreadable, and its numbers are no values
        return (text[:start], "json") if any(f'"{m}"' in text[start:] for m in CONFIG_MARKERS) else (text, None)
    body = text[start:end + 1]
    if not any(marker in body for marker in CONFIG_MARKERS):
        return text, None
    import json

    rest = text[:start] + " " + text[end + 1:]
    try:
        data = json.loads(body.translate(_SMART_QUOTES))
    except (ValueError, RecursionError):
        return rest, "json"
    return rest, data if isinstance(data, dict) else "json"


def read_pasted_config(config: object) -> Dict[str, object]:
    """ParsedValues fields from a pasted config: custom_arch (+ label and size), or config_error naming the missing
    key ("json" when it is not valid JSON)."""
    if not isinstance(config, dict):
        return {"config_error": "json"}
    try:
        from bot.advisor.hf_config import read_hf_config
    except ImportError:  # the reader is not installed in this build: treat the paste as unreadable
        return {"config_error": "json"}
    try:
        arch = read_hf_config(config)
    except Exception as error:  # the reader names what is missing; any other failure is "unreadable"
        return {"config_error": _missing_key(error)}
    data = arch.dict() if hasattr(arch, "dict") else dict(arch)
    name = config.get("_name_or_path") or (config.get("architectures") or [None])[0] or config.get("model_type")
    label = f"config.json ({str(name)[:60]})" if name else "config.json"
    values: Dict[str, object] = {"custom_arch": data, "custom_arch_label": label}
    params = data.get("params")
    if isinstance(params, (int, float)) and params > 0:
        values["model_size_b"] = round(float(params) / 1e9, 2)
    return values


def _missing_key(error: Exception) -> str:
    name = (getattr(error, "params", None) or {}).get("name")
    if isinstance(name, str) and name and name != "-":
        return name  # bot.advisor.hf_config names the key in its InputError
    for attribute in ("missing", "field"):
        value = getattr(error, attribute, None)
        if isinstance(value, str) and value:
            return value
    match = re.search(r"['\"`]([A-Za-z_][A-Za-z0-9_.]*)['\"`]", str(error))
    return match.group(1) if match else "json"
