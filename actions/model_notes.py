"""What the answer says about the model itself: a name we do not know (issue 9 #7) and a pasted config.json (#8).

No silent substitutes: when the customer named a model no preset matches, the form keeps the name as typed in the
slot ``model_unrecognised`` and computes with the stand-in the shared resolver gives
(bot.advisor.knowledge.resolve_model(..., allow_substitute=True): the same family of the nearest size, else the
reference preset of that size). The estimate then says which name was not recognised, which model was used instead
and how it may differ, and widens the range to what the known architectures around that size need.
"""
from __future__ import annotations

import math
import re
from typing import Any, Dict, List, Optional, Text

# Presets whose size is within this factor of the stand-in's count as "about this size" when the range is widened:
# the stand-in's own family (same-family case) or every family (no family known). 1.6 is the factor
# bot.advisor.advice.SIZE_MATCH_FACTOR uses for "a model of about this size".
RANGE_SIZE_FACTOR = 1.6


def stand_in(query: Text, size_b: Optional[float], kb: Any = None) -> Optional[Dict[Text, Any]]:
    """Slot values for a model name we do not know: the stand-in preset, the name kept as typed.

    A name the shared resolver does know (it reads more spellings than the message parser) is used by name.
    """
    from bot.advisor.knowledge import InputError, resolve_model

    try:
        resolved = resolve_model(query, kb, allow_substitute=True)
    except InputError:
        resolved = None
    if resolved is not None and not resolved.by_size and not resolved.unrecognised:
        preset = resolved.preset
        return {"model": preset.id, "model_id": preset.id, "model_size_b": preset.size_b,
                "model_unrecognised": None, "model_version_assumed": True if resolved.version_assumed else None}
    if resolved is None or resolved.by_size:
        if not size_b:
            return None
        try:
            resolved = resolve_model(float(size_b), kb)
        except InputError:
            return None
    return {"model": query, "model_id": resolved.preset.id, "model_size_b": resolved.preset.size_b,
            "model_unrecognised": query}


def version_note(preset_id: Text, lang: Text, kb: Any = None) -> Optional[Text]:
    """The line said after an estimate whose model was named by a family and a size without a version ("qwen 14b"):
    which release was used (the newest of that size, bot.advisor.knowledge.newest_release) and that another
    version can be named. None when the preset is unknown."""
    from bot.advisor.knowledge import load_knowledge

    kb = kb or load_knowledge()
    try:
        preset = kb.model(preset_id)
    except KeyError:
        return None
    family = kb.families.get(preset.family)
    return kb.text("model_version_assumed", lang, model=preset.display,
                   family=family.display if family else preset.family)


def display_name(query: Text) -> Text:
    """A model name we do not know, as an answer writes it: "falcon3 10b" -> "Falcon3 10B", "zephyr 7b" ->
    "Zephyr 7B" - the family and the size the customer typed, never "a 10B model" (blind round 2). Words in
    another script are left as typed."""
    from bot.advisor.knowledge import load_knowledge

    # a Hub id's name ("olmo-2-0425-1b-instruct") is read as words; a family we know is written as its family is
    families = {family_id: family.display for family_id, family in load_knowledge().families.items()}
    words = []
    for word in re.split(r"[\s_]+|-(?=\w)", str(query)):
        if not word:
            continue
        if re.fullmatch(r"\d+(?:[.,]\d+)?[bm]", word):
            words.append(word[:-1] + word[-1].upper())
        elif word in families:
            words.append(families[word])
        elif word[:1].isascii() and word[:1].isalpha():
            words.append(word[:1].upper() + word[1:])
        else:
            words.append(word)
    return " ".join(words)


def unrecognised_note(query: Text, advice: Any, fields: Dict[Text, Any], lang: Text, kb: Any = None
                      ) -> Optional[Text]:
    """The lines said after the estimate for a model computed with a stand-in (None when nothing to say)."""
    from bot.advisor.knowledge import InputError, load_knowledge, resolve_model, substitute_differences
    from bot.present.render import gb

    kb = kb or load_knowledge()
    preset = advice.preset
    try:
        resolved = resolve_model(query, kb, allow_substitute=True)
        same_family = bool(resolved.unrecognised) and resolved.preset.id == preset.id
    except InputError:
        same_family = False
    lines: List[Text] = [kb.text("model_unrecognised", lang, query=display_name(query))]
    if same_family and "unknown_model_stand_in" in kb.texts:
        codes = substitute_differences(preset, kb)
        differences = kb.text("list_separator", lang).join(
            kb.text(f"model_difference_{code}", lang) for code in codes if f"model_difference_{code}" in kb.texts)
        lines.append(kb.text("unknown_model_stand_in", lang, model=preset.display, differences=differences))
    else:
        lines.append(kb.text("model_unrecognised_other_family", lang, model=preset.display,
                             size=f"{preset.size_b:g}"))
    low, high = widened_range(advice, fields, same_family, kb)
    lines.append(kb.text("model_unrecognised_range", lang, low=gb(low, lang), high=gb(high, lang)))
    return " ".join(lines)


def widened_range(advice: Any, fields: Dict[Text, Any], same_family: bool, kb: Any) -> tuple:
    """Lowest and highest estimate (GiB per GPU) over the known presets about the stand-in's size: of its family,
    or of every family when the family is unknown. Always contains the stand-in's own range."""
    from bot.advisor.advice import AdviceRequest, advise

    preset = advice.preset
    low, high = float(advice.estimate.low_gib), float(advice.estimate.high_gib)
    for other in kb.models:
        if other.id == preset.id or (same_family and other.family != preset.family):
            continue
        if abs(math.log(other.size_b / preset.size_b)) > math.log(RANGE_SIZE_FACTOR):
            continue
        try:
            estimate = advise(AdviceRequest(**{**fields, "model": other.id, "size_b": None}), kb).estimate
        except ValueError:  # a plan this preset cannot take (e.g. a LoRA rank above its width): not a bound
            continue
        low, high = min(low, float(estimate.low_gib)), max(high, float(estimate.high_gib))
    return low, high


def config_read_note(custom_arch: Dict[Text, Any], lang: Text, kb: Any = None) -> Optional[Text]:
    """ "I read these values from your config.json: 36 layers, hidden size 4096, ..." in the customer's language
    (the values bot.advisor.hf_config.describe lists for the CLI)."""
    from bot.advisor.knowledge import load_knowledge
    from bot.advisor.schema import ModelArch
    from bot.present.render import number

    kb = kb or load_knowledge()
    try:
        arch = ModelArch(**custom_arch)
    except (TypeError, ValueError):
        return None
    items = [kb.text("config_value_layers", lang, n=arch.layers),
             kb.text("config_value_hidden", lang, n=arch.hidden),
             kb.text("config_value_heads", lang, heads=arch.heads, kv=arch.kv_heads,
                     head_dim=arch.head_dim or arch.hidden // arch.heads),
             kb.text("config_value_mlp", lang, n=arch.intermediate),
             kb.text("config_value_vocab", lang, n=arch.vocab)]
    if arch.moe:
        items.append(kb.text("config_value_moe", lang, experts=arch.moe.experts, active=arch.moe.experts_per_token))
    if arch.sliding_window:
        items.append(kb.text("config_value_window", lang, n=arch.sliding_window))
    if arch.params:
        items.append(kb.text("config_value_params", lang, n=number(arch.params / 1e9, lang, 2)))
    return kb.text("config_read", lang, values=kb.text("list_separator", lang).join(items))


def config_error_message(text: Text, lang: Text, kb: Any = None) -> Text:
    """The reason a pasted config.json could not be read, naming the missing key, in the customer's language."""
    from bot.advisor.hf_config import read_hf_config
    from bot.advisor.knowledge import InputError
    from bot.present.render import render_error
    from bot.text.parse import split_pasted_config

    _, config = split_pasted_config(text)
    try:
        read_hf_config(config)
    except InputError as error:
        return render_error(error, lang, kb)
    except Exception as error:  # noqa: BLE001 - any other failure is still an unreadable config, said as such
        return render_error(error, lang, kb)
    return render_error(ValueError("config"), lang, kb)
