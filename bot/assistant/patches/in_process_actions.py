"""The validation actions run inside the Rasa process; every other custom action on the action server.

Rasa 3.6 calls `action_validate_slot_mappings` over HTTP for every message (`ActionExtractSlots`), and the form's
validation action for every message a form reads. Both are pure: they read the tracker and the domain and return
slot events (actions/language.py ValidateSlotMappings, actions/forms.py ValidateEstimateForm), with no file,
database or network of their own. Over HTTP each call cost Rasa a request (the tracker and the domain serialised),
HAProxy a forwarded request and the action server a parse and a response: they were 1.62 of the 2.26
action-server calls per turn of bench/bench_load.py's mixed conversations (0.64 are left; issue 12). Here Rasa runs
them with rasa_sdk's own `ActionExecutor`, on the same call JSON the action server would get, and handles the answer
exactly as `RemoteAction.run` handles an HTTP answer (response validation, responses uttered, events deserialised).
The call and the answer go through JSON text as over HTTP, so the action gets its own copies (a value it changes
never changes Rasa's tracker) and Rasa gets plain JSON values back. `rasa run` (bot/assistant/rasa_server.py) builds
the executor and loads the parser's tables before it serves, so the first customer does not wait for them.

The actions that write or answer (tickets, charts, the estimate, the FAQ) stay on the action server, where they can
be scaled, restarted and time out on their own (patches/action_timeout.py). A side effect customers see: the
language and the form's values are still read while the action server is down, so the outage answer comes in the
language of that very message and the values the customer gave in it are kept.

A rejection (the form's validation refusing the message) is Rasa's `ActionExecutionRejection`, as the HTTP 400 of
the action server is; any other error in the action is logged with its traceback and raised as the
`RasaException` Rasa raises for an action server's 500.
Installed by bot/assistant/patches/__init__.py.
"""
from __future__ import annotations

import logging
from typing import Any, Dict, List, Optional

from bot.assistant.patches.action_keepalive import json_copy
from bot.assistant.patches.import_hooks import is_patched, replace, when_imported

logger = logging.getLogger(__name__)

ACTION_MODULE = "rasa.core.actions.action"
PATCH_MARKER = "_advisor_in_process"
# name -> "module:class" of the pure validation actions (tests/test_in_process_actions.py checks that the classes
# answer to these names and that their modules do no I/O of their own).
IN_PROCESS_ACTIONS: Dict[str, str] = {
    "action_validate_slot_mappings": "actions.language:ValidateSlotMappings",
    "validate_estimate_form": "actions.forms:ValidateEstimateForm",
}

_executor: Optional[Any] = None
_installed = False  # set when the patch is applied to RemoteAction


def runs_in_process(action_name: str) -> bool:
    """Whether this patch is installed (not left out by ADVISOR_RASA_PATCHES) and runs `action_name` in Rasa."""
    return _installed and action_name in IN_PROCESS_ACTIONS


def executor() -> Any:
    """rasa_sdk's ActionExecutor holding the in-process actions, built on first use (the actions import bot.text)."""
    global _executor
    if _executor is None:
        import importlib

        from rasa_sdk.executor import ActionExecutor

        built = ActionExecutor()
        for name, target in IN_PROCESS_ACTIONS.items():
            module_name, class_name = target.split(":")
            action_class = getattr(importlib.import_module(module_name), class_name)
            built.register_action(action_class)
            if name not in built.actions:
                raise RuntimeError(f"{target} does not answer to the name {name!r}")
        _executor = built
    return _executor


def warm_up() -> None:
    """The executor built and what the actions read on a first message loaded (the parser's tables, the catalogue)."""
    from bot.text.parse import parse_values

    if not _installed:  # left out by ADVISOR_RASA_PATCHES: the action server runs them
        return
    executor()
    parse_values("llama 3.1 8b qlora 2048")


async def answer(call: Dict[str, Any]) -> Dict[str, Any]:
    """What the action server would answer to `call` (a 200's JSON), or Rasa's exception for its 400 / 500."""
    from rasa.core.actions.action import ActionExecutionRejection
    from rasa.shared.exceptions import RasaException
    from rasa_sdk.interfaces import ActionExecutionRejection as SdkRejection

    name = call.get("next_action")
    try:
        result = await executor().run(json_copy(call))
    except SdkRejection as rejection:
        raise ActionExecutionRejection(rejection.action_name, rejection.message) from rejection
    except Exception as error:  # noqa: BLE001 - the action server's 500, with the traceback in this log instead
        logger.exception("In-process action '%s' failed", name)
        raise RasaException(f"Failed to execute custom action '{name}'") from error
    return json_copy(result or {})


async def run_in_process(action: Any, output_channel: Any, nlg: Any, tracker: Any, domain: Any) -> List[Any]:
    """RemoteAction.run with the action executed here instead of by the action server."""
    from rasa.core.actions.action import RemoteAction
    from rasa.shared.core import events

    response = await answer(action._action_call_format(tracker, domain))
    action._validate_action_result(response)
    bot_messages = await RemoteAction._utter_responses(response.get("responses", []), output_channel, nlg, tracker)
    return list(bot_messages) + events.deserialise_events(response.get("events", []))


def patch_remote_action(module: Any) -> None:
    global _installed
    _installed = True
    remote_action = module.RemoteAction
    original = remote_action.run
    if getattr(original, PATCH_MARKER, False):
        return

    async def run(self: Any, output_channel: Any, nlg: Any, tracker: Any, domain: Any) -> List[Any]:
        if runs_in_process(self.name()):
            return await run_in_process(self, output_channel, nlg, tracker, domain)
        return await original(self, output_channel, nlg, tracker, domain)

    setattr(run, PATCH_MARKER, True)
    replace(remote_action, "run", run)
    logger.debug("Validation actions run inside Rasa (bot.assistant.patches.in_process_actions)")


def is_installed() -> bool:
    return is_patched(ACTION_MODULE, "RemoteAction.run", PATCH_MARKER)


def install() -> None:
    when_imported(ACTION_MODULE, patch_remote_action)
