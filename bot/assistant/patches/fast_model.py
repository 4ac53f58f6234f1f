"""Inference of the loaded model without repeated work: the graph runner reuses the sub-graph it needs for a target
and runs it without dask's scheduler.

1. Every message parse and every next-action prediction runs the model graph (`DaskGraphRunner.run`), which first
calls `GraphSchema.minimal_graph_schema(targets)`: a recursive walk that lists each node once per path to it, with
no memo. A loaded model's graph never changes, so the answer for the same targets is always the same; here it is
computed once per graph and target list (the runner only reads the sub-graph). It was 4 % of the Rasa server's CPU
time on advice turns in a py-spy profile (issue 10).

2. The graph is then handed to dask's synchronous scheduler (`dask.get`), whose bookkeeping (ordering, state,
callbacks) for the dozen nodes of a prediction cost more than the nodes themselves in places: 8 % of the Rasa
server's busy time on advice turns. `run_in_order` evaluates the same dask graph (https://docs.dask.org/en/latest/
spec.html: a task is a tuple whose first item is callable, its arguments are keys, lists or literals) depth-first,
each key once, in this thread, as `get_sync` does, and returns the same results; exceptions propagate unchanged.

The classifier's own savings (weights laid out for scoring, its one-row input) are in its component,
bot/assistant/intent_classifier.py, named in config.yml.

Installed by bot/assistant/patches/__init__.py.
"""
from __future__ import annotations

import logging
import sys
from typing import Any, Dict, List, Optional, Text, Tuple

from bot.assistant.patches.import_hooks import replace, when_imported

logger = logging.getLogger(__name__)

GRAPH_MODULE = "rasa.engine.graph"
RUNNER_MODULE = "rasa.engine.runner.dask"
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
    replace(schema_class, "minimal_graph_schema", minimal_graph_schema)
    logger.debug("Minimal graph schemas are computed once per target list (bot.assistant.patches.fast_model)")


def run_in_order(graph: Dict[Any, Any], targets: List[Any]) -> Tuple[Any, ...]:
    """`dask.get(graph, targets)` for a graph of tasks, keys and literals, evaluated depth-first in this thread."""
    results: Dict[Any, Any] = {}

    def evaluate(item: Any) -> Any:
        if isinstance(item, list):
            return [evaluate(element) for element in item]
        if type(item) is tuple and item and callable(item[0]):
            return item[0](*[evaluate(argument) for argument in item[1:]])
        try:
            is_key = item in graph
        except TypeError:  # unhashable: a literal
            return item
        if not is_key:
            return item
        if item not in results:
            results[item] = evaluate(graph[item])
        return results[item]

    return tuple(evaluate(target) for target in targets)


class InOrderDask:
    """The `dask` module as Rasa's graph runner module sees it, except that `get` is `run_in_order`: Rasa's own
    `DaskGraphRunner.run` (it calls `dask.get(run_graph, run_targets)`) then evaluates the graph in this thread."""

    get = staticmethod(run_in_order)

    def __init__(self, dask_module: Any) -> None:
        self._dask = dask_module

    def __getattr__(self, name: str) -> Any:
        return getattr(self._dask, name)


def patch_runner(module: Any) -> None:
    if not isinstance(getattr(module, "dask", None), InOrderDask):
        replace(module, "dask", InOrderDask(module.dask))


def is_installed() -> bool:
    graph = sys.modules.get(GRAPH_MODULE)
    runner = sys.modules.get(RUNNER_MODULE)
    return (graph is not None and getattr(graph.GraphSchema.minimal_graph_schema, PATCH_MARKER, False)
            and (runner is None or isinstance(runner.dask, InOrderDask)))


def install() -> None:
    when_imported(GRAPH_MODULE, patch_graph)
    when_imported(RUNNER_MODULE, patch_runner)
