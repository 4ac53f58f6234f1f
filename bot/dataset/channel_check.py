"""The data check as the channels run it: an uploaded file in, the Rasa payload with its aggregate figures out.

It runs in the Rasa server's process, where the channels receive files, and not in an action: the action server
gives an action 6 s (bot/assistant/action_timeout.py) and a 20 MB file takes longer. The analysis runs in one
worker process, so the server's event loop keeps answering the other conversations meanwhile. The model whose
tokenizer counts is the conversation's (the tracker's `model_id` slot); the file is deleted when the check ends,
whatever happens. The payload carries only figures, kinds and line numbers (compact_report), which
action_dataset_check (actions/dataset.py) turns into the answer and the estimate's slots.
"""
from __future__ import annotations

import asyncio
import json
import logging
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Dict, Optional

from bot.dataset import uploads

logger = logging.getLogger(__name__)
REPORT_ENTITY = "dataset_report"
_POOL: Optional[ProcessPoolExecutor] = None


def _pool() -> ProcessPoolExecutor:
    global _POOL
    if _POOL is None:
        import multiprocessing

        # spawn: a fork of the Rasa server would copy its event loop, threads and TensorFlow state
        _POOL = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
    return _POOL


def compact_report(data: Dict[str, Any], lines_shown: int) -> Dict[str, Any]:
    """The report with its line lists cut to what a chat answer shows (the counts stay exact)."""
    out = dict(data)
    out["invalid_lines"] = data["invalid_lines"][:lines_shown]
    out["problems"] = {code: lines[:lines_shown] for code, lines in data["problems"].items()}
    out["mixed_format_lines"] = data["mixed_format_lines"][:lines_shown]
    out["duplicates"] = {**data["duplicates"], "exact_lines": data["duplicates"]["exact_lines"][:lines_shown],
                         "near_lines": data["duplicates"]["near_lines"][:lines_shown]}
    out["short_examples"] = {**data["short_examples"], "lines": data["short_examples"]["lines"][:lines_shown]}
    return out


def analyse_in_worker(path: str, limits_key: str, model_id: Optional[str],
                      masked_path: Optional[str] = None) -> Dict[str, Any]:
    """Run in the worker process: {"report": ..., "masked": bool} or {"rejected": code, "params": ...}. With
    `masked_path`, a file with personal data also gets its masked copy written there."""
    from bot.dataset.analysis import analyse_file
    from bot.dataset.reader import ColumnsNeeded, FileRejected
    from bot.dataset.texts import load_dataset_knowledge

    kb = load_dataset_knowledge()
    limits = kb.limits[limits_key].read_limits()
    try:
        report = analyse_file(path, limits, model_id=model_id)
    except FileRejected as exc:
        return {"rejected": exc.code, "params": exc.params}
    except ColumnsNeeded as exc:
        return {"rejected": "columns_needed", "params": {"count": exc.count}}
    masked = False
    if masked_path and report.pii and report.examples:
        from bot.dataset.masking import write_masked_copy

        try:
            masked = write_masked_copy(path, masked_path, report.file_kind, limits) > 0
        except Exception:  # the figures stand without the copy; the copy's file is deleted by the caller
            logger.exception("masked copy failed")
    return {"report": compact_report(report.to_json(), kb.analysis["problem_lines_shown"]), "masked": masked}


async def check_upload(name: str, input_channel: str, model_id: Optional[str], original_name: Optional[str] = None,
                       conversation: Optional[str] = None) -> str:
    """The Rasa payload for a stored upload; the file is deleted before this returns. With `conversation`, a file
    with personal data leaves a masked copy registered for it (bot/dataset/uploads.py), which the channel then
    offers (widget) or sends (Telegram); the report says so in `extra.masked_copy`."""
    path = uploads.path_of(name)
    if path is None:
        return rejected_payload("binary_file")
    copy_id, masked_path = uploads.new_masked("jsonl") if conversation else (None, None)
    try:
        loop = asyncio.get_running_loop()
        result = await loop.run_in_executor(_pool(), analyse_in_worker, str(path), uploads.limits_key(input_channel),
                                            model_id, str(masked_path) if masked_path else None)
    except Exception:  # a crash in the analysis must not leave the file nor cost the conversation
        logger.exception("data check failed")
        result = {"rejected": "binary_file", "params": {}}
    finally:
        Path(path).unlink(missing_ok=True)
    if copy_id and masked_path and conversation and result.get("masked"):
        if result["report"]["file_kind"] not in ("jsonl", "json"):  # CSV and XLSX are masked into a CSV
            masked_path = masked_path.rename(masked_path.with_suffix(".csv"))
        uploads.offer_masked(copy_id, conversation, masked_path, original_name)
        channel = uploads.limits_key(input_channel)
        result["report"]["extra"] = {**result["report"].get("extra", {}), "masked_copy": {
            "channel": channel, "minutes": uploads.MASKED_MAX_AGE_S // 60}}
    elif masked_path:
        masked_path.unlink(missing_ok=True)
    if "report" in result:
        return "/" + uploads.PAYLOAD_INTENT + json.dumps({REPORT_ENTITY: result["report"]}, ensure_ascii=False)
    return rejected_payload(result["rejected"], result.get("params") or {})


def rejected_payload(code: str, params: Optional[Dict[str, Any]] = None) -> str:
    return "/" + uploads.PAYLOAD_INTENT + json.dumps({"dataset_rejected": {"code": code, "params": params or {}}})


async def conversation_model(sender_id: str) -> Optional[str]:
    """The model_id slot of the conversation, from the tracker store; None when unknown or unreadable."""
    try:
        from sanic import Sanic

        agent = Sanic.get_app().ctx.agent
        tracker = await agent.tracker_store.retrieve(sender_id)
        return tracker.get_slot("model_id") if tracker is not None else None
    except Exception:  # the check still runs, with the stand-in tokenizer, and says so
        logger.warning("data check: could not read the conversation's model", exc_info=True)
        return None


async def receive(chunks, file_name: Optional[str], input_channel: str, sender_id: str) -> str:
    """Store, check and delete an upload; the payload to send Rasa for it."""
    try:
        name = await uploads.store(chunks, file_name, uploads.max_bytes(input_channel))
    except uploads.TooLarge:
        limit = uploads.max_bytes(input_channel)
        return rejected_payload("too_large", {"limit_mb": limit // 1_000_000})
    return await check_upload(name, input_channel, await conversation_model(sender_id), file_name, sender_id)
