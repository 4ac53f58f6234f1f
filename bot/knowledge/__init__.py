"""The knowledge layer: every knowledge/*.yml read, validated against its schema and checked for fa/tr parity here.

One way in for every file (docs/knowledge.md, "where a sentence lives"):

- :func:`load` ``("stacks.yml")`` — the file's schema from :data:`bot.knowledge.registry.SCHEMAS`, validated once
  per process (cached);
- :func:`parse_file` ``(Schema, path)`` — the same checks for a file at another path (tests, a second root);
- :class:`LocalizedText` / :class:`BilingualText` — one text in fa, tr (and en), its placeholders alike.

A broken file fails with :class:`KnowledgeError` naming the file, the field and the reason. This package imports
nothing else of bot/ (every group may use it); the schemas stay beside the code that reads them and are named in the
registry by their dotted path.
"""
from bot.knowledge.files import KNOWLEDGE_DIR, KnowledgeError, display_name, parse_file, read_yaml, validate
from bot.knowledge.registry import SCHEMAS, knowledge_files, load, schema_for
from bot.knowledge.parity import placeholders
from bot.knowledge.texts import LANGS, BilingualText, LocalizedText

__all__ = ["KNOWLEDGE_DIR", "KnowledgeError", "display_name", "parse_file", "read_yaml", "validate", "SCHEMAS",
           "knowledge_files", "load", "schema_for", "LANGS", "BilingualText", "LocalizedText", "placeholders"]
