"""Reading one knowledge file: YAML in, a validated pydantic model out, or a KnowledgeError naming file and field."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Type, TypeVar, Union

from pydantic import BaseModel, ValidationError

from bot.knowledge.parity import parity_problems

KNOWLEDGE_DIR = Path(__file__).resolve().parents[2] / "knowledge"
Model = TypeVar("Model", bound=BaseModel)


class KnowledgeError(ValueError):
    """A knowledge file is missing, unreadable or invalid: ``file`` (knowledge/...), ``field`` (dotted path, "-" for
    the whole file) and ``reason``."""

    def __init__(self, file: str, field: str, reason: str):
        self.file, self.field, self.reason = file, field, reason
        super().__init__(f"{file}: {field}: {reason}")


def display_name(path: Union[str, Path]) -> str:
    """``knowledge/<path under the knowledge folder>``, also for a copy of that folder elsewhere (a test's root);
    any other file (ADVISOR_RATE_LIMITS_FILE, a case file given to the CLI) by the path it was given."""
    path = Path(path)
    try:
        return f"knowledge/{path.resolve().relative_to(KNOWLEDGE_DIR).as_posix()}"
    except ValueError:
        pass
    for depth, folder in enumerate(path.parents):
        if folder.name == "knowledge":
            return "knowledge/" + "/".join(path.parts[len(path.parts) - depth - 1:])
        if depth:  # knowledge/<file> or knowledge/calibration/<file>
            break
    return str(path)


def read_yaml(path: Union[str, Path]) -> Any:
    """The YAML document of ``path`` (libyaml's loader when present: ~10x faster, CLI start-up budget 0.5 s)."""
    import yaml

    path = Path(path)
    try:
        with path.open(encoding="utf-8") as handle:
            return yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except FileNotFoundError:
        raise KnowledgeError(display_name(path), "-", "file not found") from None
    except yaml.YAMLError as exc:
        raise KnowledgeError(display_name(path), "-", f"invalid YAML: {exc}") from None


def validate(schema: Type[Model], data: Any, path: Union[str, Path]) -> Model:
    """``data`` (the file's YAML) as ``schema``; then every fa/tr pair in it checked (bot/knowledge/parity.py).
    The schema's own message wins: it names the field the way the schema does."""
    if not isinstance(data, dict):
        raise KnowledgeError(display_name(path), "-", "the file must hold a mapping")
    try:
        model = schema.parse_obj(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"] if part != "__root__") or "-"
        raise KnowledgeError(display_name(path), field, first["msg"]) from None
    problems = parity_problems(data)
    if problems:
        field, reason = problems[0]
        raise KnowledgeError(display_name(path), field, reason)
    return model


def parse_file(schema: Type[Model], path: Union[str, Path]) -> Model:
    """Read and validate one file (not cached: the loaders and :func:`bot.knowledge.load` cache)."""
    return validate(schema, read_yaml(path), path)
