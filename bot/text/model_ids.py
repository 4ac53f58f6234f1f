"""A Hugging Face model id or page URL in a chat message: the model's config.json fetched from the Hub
(bot/advisor/hf_hub.py) and read like a pasted config (``custom_arch`` / ``custom_arch_label``). A model that cannot
be fetched leaves the message to the preset names and the config-paste option."""
from __future__ import annotations

from typing import Dict


def read_hub_model(text: str) -> Dict[str, object]:
    from bot.advisor.hf_hub import arch_from_hub, model_id_in

    repo_id = model_id_in(text)
    if repo_id is None:
        return {}
    arch = arch_from_hub(repo_id)
    if arch is None:
        return {}
    assert arch.params is not None  # ModelArch's validator counts it when the config does not state it
    return {"custom_arch": arch.dict(), "custom_arch_label": repo_id, "model_id": None, "model_query": None,
            "model_family": None, "model_size_b": round(arch.params / 1e9, 2)}
