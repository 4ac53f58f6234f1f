"""Every change this project makes to Rasa's own code at run time, in one place, with its reason and its gain.

Importing `bot.assistant` (which every Rasa process of the project does: config.yml and endpoints.yml name classes in
it) imports this package, which installs the patches below, each the moment Rasa loads the module it patches
(import_hooks.when_imported: importing this package does not import Rasa). Rasa's public extension points hold the
rest of the project's Rasa code: the NLU components and the intent classifier (config.yml:
bot/assistant/intent_classifier.py took over the classifier's two patches), the tracker store (endpoints.yml), the
channels (credentials.yml). What is here has no such extension point in Rasa 3.6:
- RemoteAction, ActionExtractSlots, MessageProcessor, EndpointConfig, DialogueStateTracker, Event, the graph runner:
  Rasa builds them itself; no setting names a class of ours (endpoints.yml has no action timeout either: Rasa passes
  its 300 s constant to every call).
- RulePolicy: a subclass named in config.yml would train and run, but Rasa 3.6 recognises the rule policy by exact
  class (the recipe validator's `node.uses == RulePolicy`: it would warn that no RulePolicy is configured and skip
  the domain check) and by name (the ensemble's "_RulePolicy" suffix for memorised predictions); so the bounded
  lookup stays a patch.

Switch: `ADVISOR_RASA_PATCHES=off` in the environment leaves Rasa exactly as shipped (nothing replaced, no import
hook); `on` (or unset) installs every patch; a comma-separated list of `-name` items installs all but those (e.g.
`ADVISOR_RASA_PATCHES=-fast_rules,-fast_copies`). Any other value, or a name not in PATCHES, stops the process at
start (importing bot.assistant raises PatchSwitchError naming the patches). tests/servers.py passes the variable to
the servers the tests start; `make check-unpatched` runs the conversation suites with `off` (.ci/run does too);
bench/bench_patches.py measures each speed patch left out, against all on, in one run.

Version guard: the patches were written against and tested with Rasa RASA_VERSION only. On any other version none is
installed and a warning says so: the product then runs as Rasa ships (slower; an action-server outage is answered by
Rasa's own handling, i.e. silence after 5 minutes).

The table (PATCHES below; `python -m bot.assistant.patches` prints it as Markdown) gives for each patch what it
replaces, why, and its measured gain: for a speed patch, the CPU time an advice turn costs more when that one patch
is left out and every other is on (bench/bench_patches.py, bench/results/patches.md). A speed patch whose gain is
within that bench's noise is removed; the behaviour patches (action_timeout, store_unavailable, payload_depth) stay
for what they do.

Rasa bodies copied into this package (kept in step with RASA_VERSION by the version guard and the equivalence tests
in tests/test_rasa_patches.py): `RemoteAction._action_call_format` (action_payload._recent_call_format) and the
answer handling of `RemoteAction.run` (in_process_actions.run_in_process).

`bench/bench_vs_starter.py --patches off` measures the advisor without any of them; `bench/bench_patches.py` each
speed patch left out alone, in one run.
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
ON_VALUES = ("on", "1", "true", "yes", "")


class Patch(NamedTuple):
    module: str  # under bot.assistant.patches
    replaces: Tuple[str, ...]  # "rasa module:attribute path", as import_hooks.replace records it
    why: str
    gain: str


# Gains: bench/bench_patches.py, 2026-12-03 (bench/results/patches.md; patches_confirm.md re-ran the closest calls):
# each speed patch left out of the product as shipped, against all on (30.6 ms CPU per advice turn, Rasa server +
# action server), same run, alternating; ± is the 95 % interval; the two all-on servers differed by -0.35 ± 1.07 ms.
# Late turns: the last 10 of a 60-what-if conversation (all on: 24.7 ms). Removed for gains within noise:
# fast_states (DialogueStateTracker.past_states kept per tracker state: +0.5 ± 0.9 and +0.2 ± 0.7 ms per advice
# turn, +0.4 ± 1.6 ms at turn 150; git log).
PATCHES: Tuple[Patch, ...] = (
    Patch("fast_validation", ("rasa.core.actions.action:RemoteAction._validate_action_result",),
          "jsonschema re-checked the 23-event response schema and built a validator on every action call",
          "+77.8 ± 4.3 ms CPU per advice turn without it (3.5x the turn's 30.6 ms); p50 119-132 -> 472 ms"),
    Patch("fast_events", ("rasa.shared.core.events:Event.resolve_by_type",),
          "every event read walked all Event subclasses",
          "+1.9 ± 0.9 ms CPU per advice turn without it (6 %); +3.7 ± 1.2 ms per late turn"),
    Patch("fast_model", ("rasa.engine.graph:GraphSchema.minimal_graph_schema", "rasa.engine.runner.dask:dask"),
          "every message and prediction walked the graph for its sub-graph and ran dask's scheduler",
          "+2.5 ± 0.8 ms CPU per advice turn without it (8 %); +2.4 ± 1.9 ms per late turn"),
    Patch("fast_rules", ("rasa.core.policies.rule_policy:RulePolicy._get_possible_keys",),
          "the rule lookup walked the whole conversation and every rule on every prediction",
          "+3.0 ± 1.0 ms CPU per advice turn without it (10 %); +2.5 ± 0.8 ms per late turn"),
    Patch("fast_copies", ("rasa.core.policies.memoization:copy", "rasa.core.policies.rule_policy:copy",
                          "rasa.core.processor:copy", "rasa.core.actions.forms:copy",
                          "rasa.shared.core.slots:Slot.__copy__"),
          "deep copies made for debug lines at every log level; slot copies through __reduce_ex__",
          "+2.2 ± 1.0 ms CPU per advice turn without it (7 %); +2.0 ± 1.6 ms per late turn"),
    Patch("action_keepalive", ("rasa.utils.endpoints:EndpointConfig.session",),
          "a new HTTP client and TCP connection per action call; the call JSON by the standard library",
          "+0.8 ± 1.0 and +1.4 ± 0.8 ms CPU per advice turn without it in two runs (about 4 %, the smallest "
          "kept); +1.9 ± 1.2 and +1.8 ± 1.7 ms per late turn"),
    Patch("action_payload", ("rasa.core.actions.action:RemoteAction._action_call_format",),
          "the domain's 76 KB of responses and every event held sent with each action call",
          "+4.8 ± 1.4 ms CPU per advice turn without it (16 %); +5.5 ± 1.5 ms per late turn; 17.8 -> 13.9 KB "
          "per call (vs_starter.md)"),
    Patch("validation_once", ("rasa.core.actions.action:ActionExtractSlots._execute_validation_action",),
          "the slot-mapping validation asked twice when a form starts on a message",
          "+1.8 ± 1.1 and +1.4 ± 0.8 ms CPU per advice turn without it in two runs (5 %); 1.26 -> 1.00 "
          "validation calls per turn (vs_starter.md)"),
    Patch("in_process_actions", ("rasa.core.actions.action:RemoteAction.run",),
          "the two pure validation actions went over HTTP on every message",
          "+3.5 ± 0.9 ms CPU per advice turn without it (11 %); +3.2 ± 1.4 ms per late turn; action-server calls "
          "2.26 -> 0.64 per turn; cluster 1.39x -> 1.73-1.86x (load.md)"),
    Patch("action_timeout", ("rasa.core.actions.action:RemoteAction.run",
                             "rasa.core.processor:MessageProcessor._run_action"),
          "Rasa waits 5 minutes for an action server, then answers nothing",
          "behaviour, not speed: an outage answered within 6 s (tests/test_cluster_parts.py)"),
    Patch("store_unavailable", ("rasa.core.processor:MessageProcessor.handle_message",
                                "rasa.core.tracker_store:FailSafeTrackerStore.retrieve"),
          "a database failure started a blank conversation or answered nothing",
          "behaviour, not speed: answered in the customer's language (tests/test_cluster_parts.py)"),
    Patch("payload_depth", ("rasa.shared.core.training_data.story_reader.yaml_story_reader:"
                            "YAMLStoryReader._entities_from_regex_match",),
          "a '/intent{...}' payload nested about a thousand levels deep raised RecursionError, which failed the "
          "whole NLU graph: the message got no answer",
          "behaviour, not speed: such a payload is answered, without entities (tests/test_payload_depth.py)"),
)


def table() -> str:
    """PATCHES as a Markdown table."""
    rows = ["| patch | replaces (Rasa " + RASA_VERSION + ") | why | measured gain |", "|---|---|---|---|"]
    def shown(entry: str) -> str:  # a class attribute as Class.name, a module's global as module.name
        module, path = entry.split(":")
        return path if "." in path else f"{module}.{path}"

    rows += [f"| {p.module} | {', '.join(shown(r) for r in p.replaces)} | {p.why} | {p.gain} |" for p in PATCHES]
    return "\n".join(rows)


class PatchSwitchError(ValueError):
    """ADVISOR_RASA_PATCHES holds something other than on, off or a list of -name items of known patches."""


def selected(value: Optional[str] = None) -> Tuple[str, ...]:
    """The patch modules that `value` (default: ADVISOR_RASA_PATCHES from the environment) switches on, in PATCHES
    order: every one for on/unset, none for off, all but the named ones for '-name,-name'."""
    raw = os.environ.get(SWITCH, "on") if value is None else value
    text = raw.strip().lower()
    every = tuple(patch.module for patch in PATCHES)
    if text in ON_VALUES:
        return every
    if text in OFF_VALUES:
        return ()
    items = [item.strip() for item in text.split(",") if item.strip()]
    malformed = [item for item in items if not item.startswith("-")]
    unknown = [item for item in items if item.startswith("-") and item[1:] not in every]
    if malformed or unknown or not items:
        raise PatchSwitchError(
            f"{SWITCH}={raw!r}: " + (f"unknown patch {', '.join(repr(i[1:]) for i in unknown)}; " if unknown else "")
            + (f"{', '.join(repr(i) for i in malformed)} is not -name; " if malformed else "")
            + "expected on, off or a comma-separated list of -name items (all but those) with names among: "
            + ", ".join(every))
    left_out = {item[1:] for item in items}
    return tuple(name for name in every if name not in left_out)


def switched_on() -> bool:
    return bool(selected())


def installed_rasa_version() -> Optional[str]:
    try:
        return importlib.metadata.version("rasa")
    except importlib.metadata.PackageNotFoundError:
        return None


def install() -> Tuple[str, ...]:
    """Install the patches the switch selects (each when Rasa loads its module) and name them; none, and nothing
    touched, when switched off or on another Rasa version than RASA_VERSION. An invalid switch raises
    PatchSwitchError before anything is installed."""
    chosen = selected()
    if not chosen:
        logger.info("Rasa runs as shipped: %s=%s", SWITCH, os.environ.get(SWITCH))
        return ()
    version = installed_rasa_version()
    if version != RASA_VERSION:
        logger.warning("Rasa %s is installed, the patches in bot/assistant/patches were written for %s: none is "
                       "installed, Rasa runs as shipped (slower; action-server and database outages get Rasa's own "
                       "handling). Check each patch against this version, then update RASA_VERSION.",
                       version, RASA_VERSION)
        return ()
    if len(chosen) < len(PATCHES):
        logger.warning("Patches to Rasa left out by %s: %s", SWITCH,
                       ", ".join(p.module for p in PATCHES if p.module not in chosen))
    for patch in PATCHES:
        if patch.module in chosen:
            importlib.import_module(f"{__name__}.{patch.module}").install()
    return chosen


ACTIVE: Tuple[str, ...] = install()  # the patch modules installed in this process
INSTALLED = bool(ACTIVE)
