"""A button payload whose JSON nests too deeply is read like any other unreadable payload, not raised.

Rasa 3.6's RegexMessageHandler unpacks messages of the form "/intent{...}" with
`YAMLStoryReader._entities_from_regex_match`, which catches JSONDecodeError and ValueError (a warning, no entities)
but not the RecursionError that json raises for an object nested about a thousand levels deep. "/inform{"a": [[[..."
of 1,000 characters, well within the input limit, failed the whole NLU graph (GraphComponentException): the message
got no answer at all and the channel logged an error (issue 20, finding 1). Here that error is what it is, JSON that
cannot be decoded: a warning (without the message, which may hold personal data), no entities, and the payload's
intent is answered as usual.
Installed by bot/assistant/patches/__init__.py.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Text

from bot.assistant.patches.import_hooks import is_patched, replace, when_imported

READER_MODULE = "rasa.shared.core.training_data.story_reader.yaml_story_reader"
PATCH_MARKER = "_advisor_deep_json_unreadable"


def _reading_deep_json_as_unreadable(original: Callable[..., List[Dict[Text, Any]]]) -> Callable[..., Any]:
    def _entities_from_regex_match(match: Any, domain: Any, extractor_name: Optional[Text]) -> List[Dict[Text, Any]]:
        try:
            return original(match, domain, extractor_name)
        except RecursionError:
            import rasa.shared.utils.io

            rasa.shared.utils.io.raise_warning(
                "Failed to decode the parameters of a message starting with '/' as a json object: nested too deeply. "
                "Continuing without entities.")
            return []

    setattr(_entities_from_regex_match, PATCH_MARKER, True)
    return _entities_from_regex_match


def patch_story_reader(module: Any) -> None:
    """Replace YAMLStoryReader._entities_from_regex_match in Rasa's loaded reader module (idempotent)."""
    reader = module.YAMLStoryReader
    if getattr(reader._entities_from_regex_match, PATCH_MARKER, False):
        return
    replace(reader, "_entities_from_regex_match", staticmethod(_reading_deep_json_as_unreadable(
        reader._entities_from_regex_match)))


def is_installed() -> bool:
    return is_patched(READER_MODULE, "YAMLStoryReader._entities_from_regex_match", PATCH_MARKER)


def install() -> None:
    """Patch now if Rasa's story reader is loaded, otherwise as soon as it is."""
    when_imported(READER_MODULE, patch_story_reader)
