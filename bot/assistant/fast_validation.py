"""Action-server responses validated with a schema validator built once, not once per call.

Rasa 3.6's `RemoteAction._validate_action_result` calls `jsonschema.validate(result, schema)` after every
custom-action call. `jsonschema.validate` first checks the schema itself against the draft 2020-12 meta-schema
(`check_schema`) and builds a new validator, every time. Rasa's action-response schema holds the schema of every
event type, so that check costs about 15-20 ms of CPU per call on this machine class, two or three calls per form
turn: a sampling profile (py-spy) of the Rasa server under load put 73 % of its CPU there (issue 10).

Here the schema is checked once and the validator built once, when Rasa's action module is loaded; each response
is then validated exactly as `jsonschema.validate` does it (same schema, same validator class, same best-match
error, same message Rasa appends). A malformed response is still rejected.

Valid responses take a shorter road to the same answer (`EventTypeValidator`): the event schema is a `oneOf` of 23
alternatives, each fixing `event` to a different constant, so an event whose `event` is X can only match the
alternative for X; checking that one alternative (plus the common part) decides `oneOf` without trying the other
22. Whenever the short road finds a fault, the full validator produces Rasa's error, so errors are unchanged.

Installed by importing `bot.assistant` (bot/assistant/__init__.py), which every Rasa process of this project does,
because config.yml, credentials*.yml and endpoints*.yml name classes in that package (`rasa run`, `rasa shell`,
`rasa test`). Importing it does not import Rasa: when Rasa's action module is not loaded yet, the patch is applied
by an import hook (bot/assistant/import_hooks.py) the moment it is, so light commands that import `bot.assistant`
(the Telegram CLI) stay fast.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Dict, Text

from bot.assistant.import_hooks import is_patched, when_imported

logger = logging.getLogger(__name__)

ACTION_MODULE = "rasa.core.actions.action"
# Marker on the installed method, so that tests (and a second import) can tell the patch is in effect.
PATCH_MARKER = "_validator_built_once"


def build_validator(schema: Dict[Text, Any]) -> Any:
    """What `jsonschema.validate` builds on every call, built once: the validator class the schema asks for
    (the latest draft when it names none), the schema checked against its meta-schema, the validator."""
    from jsonschema.validators import validator_for

    validator_class = validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema)


def raise_first_error(validator: Any, instance: Any) -> None:
    """Raise the error `jsonschema.validate` would raise for `instance` (its best match), or nothing."""
    from jsonschema.exceptions import best_match

    error = best_match(validator.iter_errors(instance))
    if error is not None:
        raise error


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


def _patched_validate_action_result(remote_action_class: type) -> Callable[[Any, Dict[Text, Any]], bool]:
    from jsonschema import ValidationError
    from rasa.shared.constants import DOCS_BASE_URL

    schema = remote_action_class.action_response_format_spec()
    validator = build_validator(schema)
    short_road = EventTypeValidator.build(schema)

    def _validate_action_result(self: Any, result: Dict[Text, Any]) -> bool:
        # Same body as Rasa 3.6.21's RemoteAction._validate_action_result, with the validator built once.
        if short_road is not None and short_road.is_valid(result):
            return True
        try:
            raise_first_error(validator, result)
            return True
        except ValidationError as e:
            e.message += (
                f". Failed to validate Action server response from API, "
                f"make sure your response from the Action endpoint is valid. "
                f"For more information about the format visit "
                f"{DOCS_BASE_URL}/custom-actions"
            )
            raise e

    setattr(_validate_action_result, PATCH_MARKER, True)
    return _validate_action_result


def patch_remote_action(module: Any) -> None:
    """Replace RemoteAction._validate_action_result in Rasa's loaded action module (idempotent)."""
    remote_action = module.RemoteAction
    if getattr(remote_action._validate_action_result, PATCH_MARKER, False):
        return
    remote_action._validate_action_result = _patched_validate_action_result(remote_action)
    logger.info("Action-server responses are validated with a validator built once (bot.assistant.fast_validation)")


def is_installed() -> bool:
    """True when Rasa's action module is loaded and validates with the validator built once."""
    return is_patched(ACTION_MODULE, "RemoteAction._validate_action_result", PATCH_MARKER)


def install() -> None:
    """Patch now if Rasa's action module is loaded, otherwise as soon as it is."""
    when_imported(ACTION_MODULE, patch_remote_action)


install()
