"""action_dataset_check: the data check's answer and the estimate's slots from the figures a channel measured.

The channel (bot/dataset/channel_check.py) read the uploaded file, deleted it and sent the payload
/dataset_upload{"dataset_report": {...}} (or {"dataset_rejected": {"code": ...}}). This action renders the summary
in the conversation's language, draws the length histogram, and sets seq_len and total_tokens (tokens per epoch)
so that the estimate form (run next by data/rules/dataset.yml) estimates with the measured length and volume.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Text

from rasa_sdk import Action, Tracker
from rasa_sdk.events import SlotSet
from rasa_sdk.executor import CollectingDispatcher

from actions.common import conversation_language, payload_entities

logger = logging.getLogger(__name__)


def _report(data: Dict[str, Any]):
    from bot.dataset.analysis import DatasetReport

    fields = {name: data[name] for name in DatasetReport.__dataclass_fields__ if name in data}
    return DatasetReport(**fields)


def dataset_summary_slot(report) -> Dict[str, Any]:
    """What the conversation (and so a ticket) keeps of the file: figures only."""
    return {"examples": report.examples, "invalid": len(report.invalid_lines), "tokens": report.tokens,
            "seq_len_cover": report.seq_len_cover, "seq_len": report.seq_len,
            "tokens_per_epoch": report.tokens_per_epoch, "duplicates": {
                "exact": report.duplicates["exact"], "near": report.duplicates["near"]},
            "pii": report.pii, "languages": report.languages, "tokenizer": report.tokenizer["id"]}


def _histogram_url(report, lang: Text) -> Optional[Text]:
    from actions.estimate import DEFAULT_CHART_DIR, DEFAULT_PUBLIC_URL
    from bot.dataset.report import render_histogram

    chart_dir = Path(os.environ.get("ADVISOR_CHART_DIR") or DEFAULT_CHART_DIR)
    public_url = (os.environ.get("ADVISOR_PUBLIC_URL") or DEFAULT_PUBLIC_URL).rstrip("/")
    key = json.dumps([report.histogram, report.seq_len, report.seq_len_cover, lang], sort_keys=True)
    name = "lengths-" + hashlib.sha256(key.encode()).hexdigest()[:16] + ".png"
    try:
        chart_dir.mkdir(parents=True, exist_ok=True)
        if not (chart_dir / name).exists():
            render_histogram(report, lang, chart_dir / name)
    except Exception:  # the picture is an extra: the figures are already in the text
        logger.exception("histogram rendering failed")
        return None
    return f"{public_url}/charts/{name}"


class ActionDatasetCheck(Action):
    def name(self) -> Text:
        return "action_dataset_check"

    async def run(self, dispatcher: CollectingDispatcher, tracker: Tracker,
                  domain: Dict[Text, Any]) -> List[Dict[Text, Any]]:
        from bot.dataset.report import render_summary
        from bot.dataset.texts import load_dataset_knowledge

        kb = load_dataset_knowledge()
        lang = conversation_language(tracker)
        entities = payload_entities(tracker)
        rejected = entities.get("dataset_rejected")
        data = entities.get("dataset_report")
        if not isinstance(data, dict):
            code = rejected.get("code") if isinstance(rejected, dict) else "not_a_file"
            params = rejected.get("params") if isinstance(rejected, dict) else {}
            key = f"reject_{code}" if f"reject_{code}" in kb.texts else "reject_binary_file"
            try:
                dispatcher.utter_message(text=kb.text(key, lang, **(params or {})))
            except (KeyError, IndexError):
                dispatcher.utter_message(text=kb.text("reject_binary_file", lang))
            return []
        report = _report(data)
        # The payload went through the NLU pipeline's normaliser (lower case): names come from the knowledge again
        report.tokenizer["name"] = kb.tokenizer(report.tokenizer["id"])["display"]
        model_display = None
        if report.tokenizer.get("model"):
            from bot.advisor.knowledge import load_knowledge

            try:
                model_display = load_knowledge().model(report.tokenizer["model"]).display
            except Exception:  # an id the catalogue no longer has: the id itself is shown
                model_display = report.tokenizer["model"]
        lines = [render_summary(report, lang, model_display, kb), kb.text("summary_deleted", lang)]
        dispatcher.utter_message(text="\n".join(lines))
        if not report.examples:
            return []
        image = _histogram_url(report, lang)
        if image:
            dispatcher.utter_message(image=image)
        return [SlotSet("seq_len", float(report.seq_len)), SlotSet("total_tokens", float(report.tokens_per_epoch)),
                SlotSet("examples", None), SlotSet("avg_tokens", None),
                SlotSet("dataset_summary", dataset_summary_slot(report))]
