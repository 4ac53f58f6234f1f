"""Every knowledge file and its schema: file name (under knowledge/) -> the pydantic model that validates it.

The schemas stay beside the code that reads them; they are named here by dotted path and imported only when the file
is loaded, so this package imports nothing else of bot/ and every group may use it. tests/test_knowledge_layer.py
checks that every file under knowledge/ is listed here and loads.
"""
from __future__ import annotations

import importlib
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Optional, Union

from pydantic import BaseModel

from bot.knowledge.files import KNOWLEDGE_DIR, parse_file

SCHEMAS: Dict[str, str] = {
    # the advisor's catalogue, presets, prices and answers (bot/advisor/knowledge.py load_knowledge)
    "gpus.yml": "bot.advisor.knowledge:GpusFile",
    "models.yml": "bot.advisor.knowledge:ModelsFile",
    "pricing.yml": "bot.advisor.knowledge:Pricing",
    "faq.yml": "bot.advisor.knowledge:FaqFile",
    "texts.yml": "bot.advisor.knowledge:TextsFile",
    "glossary.yml": "bot.advisor.glossary:Glossary",
    "faq_figures.yml": "bot.advisor.faq_figures:FiguresFile",
    "own_gpus.yml": "bot.advisor.own_gpus:OwnGpusFile",
    "stacks.yml": "bot.advisor.stacks:Stacks",
    "calibration/throughput_model.yml": "bot.advisor.throughput:SpeedModel",
    "calibration/throughput_cases.yaml": "bot.knowledge.schemas:ThroughputCasesFile",
    "calibration/vram_cases.yaml": "bot.knowledge.schemas:VramCasesFile",
    "calibration/vram_cases_2025.yaml": "bot.knowledge.schemas:VramCasesFile",
    "calibration/case_settings.yaml": "bot.knowledge.schemas:CaseSettingsFile",
    # reading what people type (bot/text)
    "lexicon.yml": "bot.knowledge.schemas:LexiconFile",
    "followups.yml": "bot.knowledge.schemas:FollowupWords",
    # the data check (bot/dataset/texts.py)
    "dataset.yml": "bot.dataset.texts:DatasetKnowledge",
    # personal data (bot/privacy/address.py)
    "privacy.yml": "bot.knowledge.schemas:PrivacyWords",
    # the channels, the handoff and the actions
    "channels.yml": "bot.knowledge.schemas:ChannelTexts",
    "rate_limits.yml": "bot.knowledge.schemas:RateLimits",
    "handoff.yml": "bot.knowledge.schemas:HandoffFile",
    "dialogue.yml": "bot.knowledge.schemas:DialogueTexts",
    "social.yml": "bot.knowledge.schemas:SocialFile",
}


def schema_for(name: str) -> type:
    """The schema class of ``name`` ("stacks.yml", "calibration/vram_cases.yaml"); KeyError for an unknown file."""
    module, _, attr = SCHEMAS[name].partition(":")
    return getattr(importlib.import_module(module), attr)


def knowledge_files(root: Optional[Path] = None) -> List[str]:
    """The data files under ``root`` (knowledge/ by default) as registry names."""
    root = root or KNOWLEDGE_DIR
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.suffix in (".yml", ".yaml"))


def load(name: str, root: Union[str, Path, None] = None) -> BaseModel:
    """``knowledge/<name>`` (or ``<root>/<name>``) validated against its schema, read once per process."""
    return _load(name, Path(root).resolve() if root else KNOWLEDGE_DIR)


@lru_cache(maxsize=64)
def _load(name: str, root: Path) -> BaseModel:
    return parse_file(schema_for(name), root / name)
