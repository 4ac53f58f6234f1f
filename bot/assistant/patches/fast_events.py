"""Event classes looked up by name from a table, not by walking Rasa's class tree for every event.

Rasa 3.6 turns every stored or received event (`{"event": "slot", ...}`) into its class with
`Event.resolve_by_type`, which lists every subclass of `Event` recursively (`all_subclasses`) and scans them, once
per event: loading a tracker and reading each action-server response. In a py-spy profile of the Rasa server under
load it was 9 % of the CPU time (issue 10). Here the same search is done once and its answer kept per name: the
first class in `all_subclasses(Event)` order whose `type_name` matches, exactly what the original returns. A name
that is not in the table (an Event subclass defined later) gets the table rebuilt once before the original
fallbacks (old `topic` events, the default, or Rasa's ValueError).

Installed by bot/assistant/patches/__init__.py.
"""
from __future__ import annotations

import logging
from typing import Any, Dict, Optional, Text, Type

from bot.assistant.patches.import_hooks import is_patched, replace, when_imported

logger = logging.getLogger(__name__)

EVENTS_MODULE = "rasa.shared.core.events"
PATCH_MARKER = "_event_classes_by_name"


def _classes_by_name(event_class: type) -> Dict[Text, type]:
    from rasa.shared.utils.common import all_subclasses

    table: Dict[Text, type] = {}
    for cls in all_subclasses(event_class):
        table.setdefault(cls.type_name, cls)
    return table


def patch_events(module: Any) -> None:
    """Replace Event.resolve_by_type in Rasa's loaded events module (idempotent)."""
    event_class = module.Event
    if getattr(event_class.resolve_by_type, PATCH_MARKER, False):
        return
    original = event_class.resolve_by_type
    table: Dict[Text, type] = {}

    def resolve_by_type(type_name: Text, default: Optional[Type[Any]] = None) -> Optional[Type[Any]]:
        cls = table.get(type_name)
        if cls is None:
            table.clear()
            table.update(_classes_by_name(event_class))
            cls = table.get(type_name)
        return cls if cls is not None else original(type_name, default)

    setattr(resolve_by_type, PATCH_MARKER, True)
    replace(event_class, "resolve_by_type", staticmethod(resolve_by_type))
    logger.debug("Event classes are looked up by name from a table (bot.assistant.patches.fast_events)")


def is_installed() -> bool:
    return is_patched(EVENTS_MODULE, "Event.resolve_by_type", PATCH_MARKER)


def install() -> None:
    """Patch now if Rasa's events module is loaded, otherwise as soon as it is."""
    when_imported(EVENTS_MODULE, patch_events)
