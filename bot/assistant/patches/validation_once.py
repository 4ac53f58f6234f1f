"""action_validate_slot_mappings called once per message, not again when a form starts on the same message.

Rasa 3.6 runs `action_extract_slots` for every message, and again when a form is activated
(`FormAction.activate`), on the same message: each run calls the custom `action_validate_slot_mappings` on the action
server. This project's slots all have custom mappings, so the second run extracts nothing itself and asks the action
server the same question with the answer of the first already applied; ValidateSlotMappings (actions/language.py)
then returns no change. That repeat was a tenth of all action-server calls (0.26 per turn of the mixed conversations
of bench/bench_assistant.py, counted once by an action server that logged each call; issue 12), each with Rasa
rebuilding a tracker from its events to send it. The validation now runs inside Rasa
(patches/in_process_actions.py); the repeat would still rebuild that tracker and run the whole action again.

The repeat is skipped only when it cannot answer anything new: the same message object, no slot candidates from
predefined mappings, and every slot exactly as the first answer left them. Anything else (a slot changed by an
action in between, a new message) runs the validation as Rasa does. The form being activated is active in the
repeat and was not in the first call; ValidateSlotMappings reads the active form only to leave a message to the form
that reads it (job values), so with the slots unchanged it has nothing to add. tests/test_rasa_patches.py checks
that ValidateSlotMappings answers the repeat with no change, with and without the form active.
Installed by bot/assistant/patches/__init__.py.
"""
from __future__ import annotations

import logging
from typing import Any, Dict, List, Optional

from bot.assistant.patches.import_hooks import is_patched, replace, when_imported

logger = logging.getLogger(__name__)

ACTION_MODULE = "rasa.core.actions.action"
PATCH_MARKER = "_advisor_validated_once"
# Attribute put on the UserUttered object the validation ran for: the slot values its answer left.
ANSWERED_ATTR = "_advisor_slot_validation_left"


def slots_after(tracker: Any, events: List[Any]) -> Dict[str, Any]:
    """The slot values `tracker` will have once the validation's `events` are applied."""
    from rasa.shared.core.events import SlotSet

    values = tracker.current_slot_values()
    values.update({event.key: event.value for event in events if isinstance(event, SlotSet)})
    return values


def already_answered(tracker: Any, slot_events: List[Any]) -> bool:
    message: Optional[Any] = tracker.latest_message
    left = getattr(message, ANSWERED_ATTR, None)
    return left is not None and not slot_events and left == tracker.current_slot_values()


def patch_extract_slots(module: Any) -> None:
    extract = module.ActionExtractSlots
    original = extract._execute_validation_action
    if getattr(original, PATCH_MARKER, False):
        return

    async def _execute_validation_action(self: Any, extraction_events: List[Any], output_channel: Any, nlg: Any,
                                         tracker: Any, domain: Any) -> List[Any]:
        from rasa.shared.core.events import SlotSet

        slot_events = [event for event in extraction_events if isinstance(event, SlotSet)]
        if already_answered(tracker, slot_events):
            logger.debug("action_validate_slot_mappings already answered this message; not asked again")
            return []
        events = await original(self, extraction_events, output_channel, nlg, tracker, domain)
        if tracker.latest_message is not None:
            try:
                setattr(tracker.latest_message, ANSWERED_ATTR, slots_after(tracker, events))
            except AttributeError:  # an event class without a __dict__: ask again next time, as Rasa does
                pass
        return events

    setattr(_execute_validation_action, PATCH_MARKER, True)
    replace(extract, "_execute_validation_action", _execute_validation_action)
    logger.debug("action_validate_slot_mappings is asked once per message (bot.assistant.patches.validation_once)")


def is_installed() -> bool:
    return is_patched(ACTION_MODULE, "ActionExtractSlots._execute_validation_action", PATCH_MARKER)


def install() -> None:
    when_imported(ACTION_MODULE, patch_extract_slots)
