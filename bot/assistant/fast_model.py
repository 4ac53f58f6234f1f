"""Rasa's graph runner reuses the sub-graph it needs for a target instead of working it out on every run.

Every message parse and every next-action prediction runs the model graph (`DaskGraphRunner.run`), which first
calls `GraphSchema.minimal_graph_schema(targets)`: a recursive walk that lists each node once per path to it, with
no memo. A loaded model's graph never changes, so the answer for the same targets is always the same; here it is
computed once per graph and target list (the runner only reads the sub-graph). It was 4 % of the Rasa server's CPU time on advice turns in a py-spy
profile (issue 10). Installed by importing `bot.assistant`.
"""
from __future__ import annotations

import logging
import sys
from typing import Any, Dict, List, Optional, Text, Tuple

from bot.assistant.import_hooks import when_imported

logger = logging.getLogger(__name__)

GRAPH_MODULE = "rasa.engine.graph"
PATCH_MARKER = "_advisor_minimal_schema_memo"


def patch_graph(module: Any) -> None:
    schema_class = module.GraphSchema
    original = schema_class.minimal_graph_schema
    if getattr(original, PATCH_MARKER, False):
        return

    # Kept outside the schema objects, so that a deep copy (training prunes a copy in place) starts without one;
    # each entry holds its schema, so its id is not reused while the entry exists.
    schemas: Dict[int, Tuple[Any, Dict[Optional[Tuple[Text, ...]], Any]]] = {}

    def minimal_graph_schema(self: Any, targets: Optional[List[Text]] = None) -> Any:
        key = tuple(targets) if targets else None
        _, cache = schemas.setdefault(id(self), (self, {}))
        if key not in cache:
            cache[key] = original(self, targets)
        return cache[key]

    setattr(minimal_graph_schema, PATCH_MARKER, True)
    minimal_graph_schema.__wrapped__ = original  # type: ignore[attr-defined]
    schema_class.minimal_graph_schema = minimal_graph_schema
    logger.debug("Minimal graph schemas are computed once per target list (bot.assistant.fast_graph)")


def is_installed() -> bool:
    module = sys.modules.get(GRAPH_MODULE)
    return module is not None and getattr(module.GraphSchema.minimal_graph_schema, PATCH_MARKER, False)


def install() -> None:
    when_imported(GRAPH_MODULE, patch_graph)


install()
