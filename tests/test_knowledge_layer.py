"""bot/knowledge/: every knowledge file has a schema and loads; a broken file names itself and its field; every
fa/tr pair of every file is complete and alike."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from bot.knowledge import (KNOWLEDGE_DIR, SCHEMAS, BilingualText, KnowledgeError, LocalizedText, knowledge_files,
                           load, read_yaml, schema_for)
from bot.knowledge.parity import pairs_checked, parity_problems

# Files that hold sentences or word lists in both languages: each must have its pairs checked.
BILINGUAL = ("channels.yml", "dataset.yml", "dialogue.yml", "faq.yml", "gpus.yml", "handoff.yml", "lexicon.yml",
             "privacy.yml", "social.yml", "stacks.yml", "texts.yml", "glossary.yml")


def test_every_knowledge_file_has_a_schema_and_nothing_else_does():
    assert set(knowledge_files()) == set(SCHEMAS)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_every_knowledge_file_loads_with_its_schema(name):
    model = load(name)
    assert isinstance(model, schema_for(name))
    assert load(name) is model  # read once per process


@pytest.mark.parametrize("name", BILINGUAL)
def test_every_file_with_texts_has_them_checked_for_parity(name):
    data = read_yaml(KNOWLEDGE_DIR / name)
    assert pairs_checked(data) > 0
    assert parity_problems(data) == []


def _copy(tmp_path: Path, name: str) -> Path:
    root = tmp_path / "knowledge"
    (root / Path(name).parent).mkdir(parents=True, exist_ok=True)
    shutil.copy(KNOWLEDGE_DIR / name, root / name)
    return root


def _rewrite(root: Path, name: str, edit) -> None:
    data = yaml.safe_load((root / name).read_text("utf-8"))
    edit(data)
    (root / name).write_text(yaml.safe_dump(data, allow_unicode=True), "utf-8")


def test_a_wrong_value_names_the_file_and_the_field(tmp_path):
    root = _copy(tmp_path, "rate_limits.yml")
    _rewrite(root, "rate_limits.yml", lambda d: d["messages_per_address"].update(burst=0))
    with pytest.raises(KnowledgeError) as info:
        load("rate_limits.yml", root)
    assert (info.value.file, info.value.field) == ("knowledge/rate_limits.yml", "messages_per_address.burst")
    assert "greater than or equal to 1" in str(info.value)


def test_a_text_missing_its_turkish_names_the_text(tmp_path):
    root = _copy(tmp_path, "channels.yml")
    _rewrite(root, "channels.yml", lambda d: d["texts"]["rate_limited"].pop("tr"))
    with pytest.raises(KnowledgeError) as info:
        load("channels.yml", root)
    assert (info.value.file, info.value.field) == ("knowledge/channels.yml", "texts.rate_limited.tr")


def test_a_word_list_empty_in_one_language_is_refused(tmp_path):
    """lexicon.yml's schema lets each list be empty; the parity check still sees a fa/tr pair anywhere in a file."""
    root = _copy(tmp_path, "lexicon.yml")
    _rewrite(root, "lexicon.yml", lambda d: d["name_suffixes"].update(tr=[]))
    with pytest.raises(KnowledgeError) as info:
        load("lexicon.yml", root)
    assert info.value.field == "name_suffixes" and "empty in one language" in info.value.reason


def test_a_calibration_file_names_its_folder(tmp_path):
    root = _copy(tmp_path, "calibration/vram_cases_2025.yaml")
    _rewrite(root, "calibration/vram_cases_2025.yaml", lambda d: d["cases"][0].pop("id"))
    with pytest.raises(KnowledgeError) as info:
        load("calibration/vram_cases_2025.yaml", root)
    assert (info.value.file, info.value.field) == ("knowledge/calibration/vram_cases_2025.yaml", "cases.0.id")


def test_a_missing_file_and_broken_yaml_are_named(tmp_path):
    root = tmp_path / "knowledge"
    root.mkdir()
    with pytest.raises(KnowledgeError, match="knowledge/social.yml: -: file not found"):
        load("social.yml", root)
    (root / "social.yml").write_text("greetings: [", "utf-8")
    with pytest.raises(KnowledgeError, match="knowledge/social.yml: -: invalid YAML"):
        load("social.yml", root)


def test_parity_finds_a_pair_at_any_depth():
    data = {"a": [{"x": {"fa": "{n} تا", "tr": "{m} tane"}}], "b": {"fa": "سلام", "tr": "  "}}
    assert [field for field, _ in parity_problems(data)] == ["a.0.x", "b"]


def test_one_text_model_for_two_and_three_languages():
    text = LocalizedText(fa="{n} کارت", tr="{n} kart", en="{n} cards")
    assert text.format("tr", n=2) == "2 kart" and text.format("de", n=2) == "2 cards"
    assert BilingualText(fa="سلام", tr="Merhaba").get("en") == "سلام"
    with pytest.raises(ValidationError, match="placeholders differ"):
        LocalizedText(fa="{n}", tr="{m}", en="{n}")
    with pytest.raises(ValidationError, match="broken template"):
        BilingualText(fa="{n", tr="{n}")
    with pytest.raises(ValidationError, match="non-empty"):
        BilingualText(fa="x", tr=" ")
    with pytest.raises(ValidationError):
        LocalizedText(fa="x", tr="y")  # English is required here
