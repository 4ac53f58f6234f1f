"""bot/assistant/patches/payload_depth.py: a payload whose JSON nests too deeply is answered like an unreadable
payload."""
from __future__ import annotations

import bot.assistant  # noqa: F401  installs the patches of every Rasa process of this project
from rasa.shared.core.training_data.story_reader.yaml_story_reader import YAMLStoryReader
from rasa.shared.nlu.training_data.message import Message

from bot.assistant.patches import payload_depth
from tests.adversarial import FAMILIES, LENGTHS


def test_the_patch_is_installed():
    assert payload_depth.is_installed()


def test_a_deeply_nested_payload_keeps_its_intent_without_entities():
    for length in LENGTHS:
        text = FAMILIES["nested payload"](length)
        unpacked = YAMLStoryReader.unpack_regex_message(Message({"text": text}))
        assert unpacked.get("intent")["name"] == "inform"
        assert unpacked.get("entities") == []


def test_an_ordinary_payload_still_gives_its_entities():
    unpacked = YAMLStoryReader.unpack_regex_message(Message({"text": '/inform{"method":"qlora"}'}))
    assert unpacked.get("intent")["name"] == "inform"
    assert [(e["entity"], e["value"]) for e in unpacked.get("entities")] == [("method", "qlora")]
