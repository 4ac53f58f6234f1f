"""Valid action-server responses recognised by a validator built once, not by a schema check built per call.

Rasa 3.6's `RemoteAction._validate_action_result` calls `jsonschema.validate(result, schema)` after every
custom-action call. `jsonschema.validate` first checks the schema itself against the draft 2020-12 meta-schema
(`check_schema`) and builds a new validator, every time. Rasa's action-response schema holds the schema of every
event type, so that check costs about 15-20 ms of CPU per call on this machine class, two or three calls per form
turn: a sampling profile (py-spy) of the Rasa server under load put 73 % of its CPU there (issue 10).

Here validators are built once, when Rasa's action module is loaded, and valid responses take a short road
(`EventTypeValidator`): the event schema is a `oneOf` of 23 alternatives, each fixing `event` to a different
constant, so an event whose `event` is X can only match the alternative for X; checking that one alternative (plus
the common part) decides `oneOf` without trying the other 22. Whatever the short road does not pass goes to Rasa's
own `_validate_action_result`, so a malformed response gets Rasa's check and Rasa's error, unchanged.

Installed by bot/assistant/patches/__init__.py.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Dict, Text

from bot.assistant.patches.import_hooks import is_patched, replace, when_imported

logger = logging.getLogger(__name__)

ACTION_MODULE = "rasa.core.actions.action"
# Marker on the installed method, so that tests (and a second import) can tell the patch is in effect.
PATCH_MARKER = "_validator_built_once"


class EventTypeValidator:
    """`is_valid` of Rasa's action-response schema, deciding each event's `oneOf` by its `event` constant.

    Built only when every alternative of the event `oneOf` fixes `event` to its own constant and the common part
    requires `event` (true for Rasa 3.6); otherwise `build` returns None and the full validator is used alone."""

    def __init__(self, top: Any, common: Any, by_type: Dict[Text, Any]) -> None:
        self._top, self._common, self._by_type = top, common, by_type

    @classmethod
    def build(cls, schema: Dict[Text, Any]) -> Any:
        from jsonschema.validators import validator_for

        try:
            events = schema["properties"]["events"]
            event = events["items"]
            alternatives = event["oneOf"]
            constants = [alternative["properties"]["event"]["const"] for alternative in alternatives]
        except (KeyError, TypeError):
            return None
        if len(set(constants)) != len(constants) or "event" not in event.get("required", ()):
            return None
        validator_class = validator_for(schema)
        top = {**schema, "properties": {**schema["properties"], "events": {k: v for k, v in events.items()
                                                                             if k != "items"}}}
        common = {k: v for k, v in event.items() if k != "oneOf"}
        by_type = {constant: validator_class(alternative) for constant, alternative in zip(constants, alternatives)}
        return cls(validator_class(top), validator_class(common), by_type)

    def is_valid(self, instance: Any) -> bool:
        if not self._top.is_valid(instance):
            return False
        for event in instance.get("events", ()) if isinstance(instance, dict) else ():
            name = event.get("event") if isinstance(event, dict) else None
            alternative = self._by_type.get(name) if isinstance(name, str) else None
            if alternative is None or not self._common.is_valid(event) or not alternative.is_valid(event):
                return False
        return True


def _patched_validate_action_result(remote_action_class: Any, rasas: Callable[[Any, Dict[Text, Any]], bool]
                                    ) -> Callable[[Any, Dict[Text, Any]], bool]:
    short_road = EventTypeValidator.build(remote_action_class.action_response_format_spec())

    def _validate_action_result(self: Any, result: Dict[Text, Any]) -> bool:
        if short_road is not None and short_road.is_valid(result):
            return True
        return rasas(self, result)  # a fault (or a shape the short road does not know): Rasa's check and error

    setattr(_validate_action_result, PATCH_MARKER, True)
    return _validate_action_result


def patch_remote_action(module: Any) -> None:
    """Replace RemoteAction._validate_action_result in Rasa's loaded action module (idempotent)."""
    remote_action = module.RemoteAction
    if getattr(remote_action._validate_action_result, PATCH_MARKER, False):
        return
    replace(remote_action, "_validate_action_result",
            _patched_validate_action_result(remote_action, remote_action._validate_action_result))
    logger.info("Valid action-server responses are checked by their event types (bot.assistant.patches)")


def is_installed() -> bool:
    """True when Rasa's action module is loaded and validates with the validator built once."""
    return is_patched(ACTION_MODULE, "RemoteAction._validate_action_result", PATCH_MARKER)


def install() -> None:
    """Patch now if Rasa's action module is loaded, otherwise as soon as it is."""
    when_imported(ACTION_MODULE, patch_remote_action)
