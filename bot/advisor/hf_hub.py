"""A model named by its Hugging Face id ("Qwen/Qwen3.5-4B") or page URL: its config.json from the Hub.

I/O lives here, not in the estimator: ``huggingface_hub.hf_hub_download`` fetches config.json from ``$HF_ENDPOINT``
(default huggingface.co) into the library's cache (``$HF_HUB_CACHE`` / ``$HF_HOME``), with a short timeout; with
``HF_HUB_OFFLINE=1`` or no network it answers from the cache or not at all. A model that cannot be fetched gives
None, and the caller answers as before (the preset list and the config-paste option). Results are remembered per
process (failures for a minute, so a flaky network is retried).
"""
from __future__ import annotations

import json
import os
import re
import time
from typing import Dict, Optional, Tuple

from bot.advisor.schema import ModelArch

# Seconds to wait for the Hub's answer to the metadata request (huggingface_hub etag_timeout); the download itself
# follows HF_HUB_DOWNLOAD_TIMEOUT (library default 10 s). A chat turn must not hang on a slow Hub.
HUB_TIMEOUT_S = 3.0
FAILURE_MEMORY_S = 60.0
MAX_ID_PART = 96   # Hub names are at most 96 characters per part (huggingface_hub validate_repo_id)

_URL = re.compile(r"https?://(?:www\.)?(?:huggingface\.co|hf\.co)/(?:models/)?([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)")
# A bare "org/name": both parts start with a letter, the name carries a digit or a hyphen (model names do:
# "Qwen3.5-4B", "gemma-3-270m"), so "LoRA/QLoRA", "TRL/PEFT" or "fa/tr" are not read as ids.
_BARE = re.compile(r"(?<![\w./-])([A-Za-z][\w.-]{1,%d}/[A-Za-z][\w.-]*[\d-][\w.-]*)(?![\w/])" % MAX_ID_PART)

_results: Dict[Tuple[str, str], Tuple[float, Optional[dict]]] = {}


def model_id_in(text: Optional[str]) -> Optional[str]:
    """The Hub model id a message or argument names (a page URL or a bare org/name), or None."""
    if not text or not isinstance(text, str):
        return None
    match = _URL.search(text) or _BARE.search(text)
    if not match:
        return None
    repo_id = match.group(1).rstrip(".-")
    org, _, name = repo_id.partition("/")
    if not (0 < len(org) <= MAX_ID_PART and 0 < len(name) <= MAX_ID_PART) or ".." in repo_id:
        return None
    if not re.search(r"[A-Za-z]{2}", name):  # "A100/H100" is two cards, not a model
        return None
    return repo_id


def fetch_config(repo_id: str) -> Optional[dict]:
    """config.json of ``repo_id`` as a dict, or None when the Hub (or the cache, offline) does not have it."""
    endpoint = os.environ.get("HF_ENDPOINT") or ""
    key = (endpoint, repo_id)
    cached = _results.get(key)
    if cached is not None and (cached[1] is not None or time.monotonic() - cached[0] < FAILURE_MEMORY_S):
        return cached[1]
    data = _download(repo_id, endpoint)
    _results[key] = (time.monotonic(), data)
    return data


def _download(repo_id: str, endpoint: str) -> Optional[dict]:
    """The cached copy first (no network: configs do not change under a name), then one short reachability probe
    (huggingface_hub retries connection errors with back-off for half a minute; a chat turn cannot wait that long),
    then the download into the cache."""
    try:
        from huggingface_hub import hf_hub_download, hf_hub_url, try_to_load_from_cache
    except ImportError:  # the library is a dependency; without it the config-paste option remains
        return None
    cache_dir = os.environ.get("HF_HUB_CACHE") or None
    try:
        path = try_to_load_from_cache(repo_id, "config.json", cache_dir=cache_dir)
        if not isinstance(path, str):
            if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
                return None
            if not _reachable(hf_hub_url(repo_id, "config.json", endpoint=endpoint or None)):
                return None
            path = hf_hub_download(repo_id, "config.json", endpoint=endpoint or None, cache_dir=cache_dir,
                                   etag_timeout=HUB_TIMEOUT_S)
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except Exception:  # not found, gated, offline without a cached copy, a timeout, a bad file: all mean "no config"
        return None
    return data if isinstance(data, dict) else None


def _reachable(url: str) -> bool:
    """One HEAD request with the short timeout and no retry: does the Hub answer for this file?"""
    import requests

    try:
        response = requests.head(url, timeout=HUB_TIMEOUT_S, allow_redirects=True)
    except requests.RequestException:
        return False
    return response.status_code < 400


def arch_from_hub(repo_id: str) -> Optional[ModelArch]:
    """The model's architecture read from its fetched config.json (named by its id), or None."""
    from bot.advisor.hf_config import read_hf_config
    from bot.advisor.knowledge import InputError

    data = fetch_config(repo_id)
    if data is None:
        return None
    try:
        arch = read_hf_config(data)
    except InputError:
        return None
    return arch.copy(update={"name": repo_id})


def forget() -> None:
    """Drop what this process remembers (tests switch hubs)."""
    _results.clear()
