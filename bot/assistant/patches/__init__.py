"""Every change this project makes to Rasa's own code at run time, in one place, with its reason and its gain.

Importing `bot.assistant` (which every Rasa process of the project does: config.yml and endpoints.yml name classes in
it) imports this package, which installs the patches below, each the moment Rasa loads the module it patches
(import_hooks.when_imported: importing this package does not import Rasa). Rasa's public extension points hold the
rest of the project's Rasa code: the NLU components (config.yml), the tracker store (endpoints.yml), the channels
(credentials.yml). What is here has no such extension point in Rasa 3.6: private methods of RemoteAction,
RulePolicy, the processor, the graph runner.

Off switch: `ADVISOR_RASA_PATCHES=off` in the environment leaves Rasa exactly as shipped (nothing replaced, no import
hook). tests/servers.py passes it to the servers the tests start; `make check-unpatched` runs the conversation
suites that way (.ci/run does too).

Version guard: the patches were written against and tested with Rasa RASA_VERSION only. On any other version none is
installed and a warning says so: the product then runs as Rasa ships (slower; an action-server outage is answered by
Rasa's own handling, i.e. silence after 5 minutes).

| patch | replaces (Rasa 3.6.21) | why | measured gain (bench/results/, git log) |
|---|---|---|---|
| fast_validation | RemoteAction._validate_action_result | jsonschema re-checked the 23-event schema on every action call | 73 % of Rasa's CPU under load (py-spy); 21 -> 0.17 ms per call (vs_starter.md) |
| fast_events | Event.resolve_by_type | every event deserialised walked all Event subclasses | 9 % of Rasa's CPU (py-spy, issue 10); gain not re-measured alone |
| fast_model | GraphSchema.minimal_graph_schema, the `dask` of rasa.engine.runner.dask, LogisticRegressionClassifier.load and ._create_X | the sub-graph walked, dask's scheduler and a 4 MB weight copy on every message | 4 % + 8 % of busy time (py-spy); classifier 0.23 -> 0.03 ms per message; one-row input 7 % of a turn (cProfile), 26.7 -> 28.2 turns/s (vs_starter.md) |
| fast_rules | RulePolicy._get_possible_keys | the rule lookup walked the whole conversation for every turn | rule matching 21 % of an advice turn (py-spy); turn 300 within +5 % of turn 1 (vs_starter.md); not re-measured alone |
| fast_states | DialogueStateTracker.past_states | every policy replayed the tracker's events: 7 replays per turn, 3 distinct | not re-measured alone (part of turn 300 vs turn 1) |
| fast_copies | the `copy` of 4 Rasa modules, Slot.__copy__ | deep copies made only for debug lines; slot copies through __reduce_ex__ | 5 % and 9 % of a turn (py-spy, cProfile); closed loop 27.8 turns/s, no change beyond noise (vs_starter.md) |
| action_keepalive | EndpointConfig.session | a new HTTP client and TCP connection per action call; call JSON by ujson | 5 % + 5 % of Rasa's CPU (py-spy); closed loop unchanged by the kept-alive connections (27.4 vs 28.3 turns/s, vs_starter.md) |
| action_payload | RemoteAction._action_call_format | the domain's 76 KB of responses and every event sent with each call | 17.8 -> 13.9 KB per call (vs_starter.md, bench_load) |
| validation_once | ActionExtractSlots._execute_validation_action | the slot-mapping validation asked twice when a form starts | 1.26 -> 1.00 calls per turn (vs_starter.md) |
| in_process_actions | RemoteAction.run | the two pure validation actions over HTTP on every message | action-server calls 2.26 -> 0.64 per turn; CPU per turn 0.62x -> 0.57x the starter's; cluster 1.39x -> 1.73-1.86x (load.md, git 33c80fb, cf229d8) |
| action_timeout | RemoteAction.run, MessageProcessor._run_action | Rasa waits 5 minutes for an action and then answers nothing | behaviour: an outage is answered within 6 s (tests/test_cluster_parts.py) |
| store_unavailable | MessageProcessor.handle_message, FailSafeTrackerStore.retrieve | a database failure started a blank conversation or answered nothing | behaviour: answered in the customer's language (tests/test_cluster_parts.py) |

Rasa bodies copied into this package (kept in step with RASA_VERSION by the version guard and the equivalence tests
in tests/test_rasa_patches.py): `RemoteAction._action_call_format` (action_payload._recent_call_format) and the
answer handling of `RemoteAction.run` (in_process_actions.run_in_process).

`bench/bench_vs_starter.py --patches off` measures the advisor without them (re-measuring each one needs a quiet
machine).
"""
from __future__ import annotations

import importlib
import importlib.metadata
import logging
import os
from typing import NamedTuple, Optional, Tuple

logger = logging.getLogger(__name__)

RASA_VERSION = "3.6.21"
SWITCH = "ADVISOR_RASA_PATCHES"
OFF_VALUES = ("off", "0", "false", "no")


class Patch(NamedTuple):
    module: str  # under bot.assistant.patches
    replaces: Tuple[str, ...]  # "rasa module:attribute path", as import_hooks.replace records it


PATCHES: Tuple[Patch, ...] = (
    Patch("fast_validation", ("rasa.core.actions.action:RemoteAction._validate_action_result",)),
    Patch("fast_events", ("rasa.shared.core.events:Event.resolve_by_type",)),
    Patch("fast_model", ("rasa.engine.graph:GraphSchema.minimal_graph_schema", "rasa.engine.runner.dask:dask",
                         "rasa.nlu.classifiers.logistic_regression_classifier:LogisticRegressionClassifier.load",
                         "rasa.nlu.classifiers.logistic_regression_classifier:LogisticRegressionClassifier._create_X")),
    Patch("fast_rules", ("rasa.core.policies.rule_policy:RulePolicy._get_possible_keys",)),
    Patch("fast_states", ("rasa.shared.core.trackers:DialogueStateTracker.past_states",)),
    Patch("fast_copies", ("rasa.core.policies.memoization:copy", "rasa.core.policies.rule_policy:copy",
                          "rasa.core.processor:copy", "rasa.core.actions.forms:copy",
                          "rasa.shared.core.slots:Slot.__copy__")),
    Patch("action_keepalive", ("rasa.utils.endpoints:EndpointConfig.session",)),
    Patch("action_payload", ("rasa.core.actions.action:RemoteAction._action_call_format",)),
    Patch("validation_once", ("rasa.core.actions.action:ActionExtractSlots._execute_validation_action",)),
    Patch("in_process_actions", ("rasa.core.actions.action:RemoteAction.run",)),
    Patch("action_timeout", ("rasa.core.actions.action:RemoteAction.run",
                             "rasa.core.processor:MessageProcessor._run_action")),
    Patch("store_unavailable", ("rasa.core.processor:MessageProcessor.handle_message",
                                "rasa.core.tracker_store:FailSafeTrackerStore.retrieve")),
)


def switched_on() -> bool:
    return os.environ.get(SWITCH, "on").strip().lower() not in OFF_VALUES


def installed_rasa_version() -> Optional[str]:
    try:
        return importlib.metadata.version("rasa")
    except importlib.metadata.PackageNotFoundError:
        return None


def install() -> bool:
    """Install every patch (each when Rasa loads its module); False, and nothing touched, when switched off or on
    another Rasa version than RASA_VERSION."""
    if not switched_on():
        logger.info("Rasa runs as shipped: %s=%s", SWITCH, os.environ.get(SWITCH))
        return False
    version = installed_rasa_version()
    if version != RASA_VERSION:
        logger.warning("Rasa %s is installed, the patches in bot/assistant/patches were written for %s: none is "
                       "installed, Rasa runs as shipped (slower; action-server and database outages get Rasa's own "
                       "handling). Check each patch against this version, then update RASA_VERSION.",
                       version, RASA_VERSION)
        return False
    for patch in PATCHES:
        importlib.import_module(f"{__name__}.{patch.module}").install()
    return True


INSTALLED = install()
