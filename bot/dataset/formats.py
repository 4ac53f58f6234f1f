"""The fine-tuning record formats: one parsed JSON object (or one spreadsheet row) -> an Example, or a Problem.

Formats follow what the common trainers read (Hugging Face TRL's SFTTrainer dataset formats, Axolotl's
`chat_template` / `sharegpt` / `alpaca` / `completion` types):

  chat               {"messages": [{"role": "system|user|assistant|tool", "content": "..."}, ...]}
  sharegpt           {"conversations": [{"from": "system|human|gpt", "value": "..."}, ...]}
  alpaca             {"instruction": "...", "input": "...", "output": "..."}
  prompt_completion  {"prompt": "...", "completion": "..."}
  text               {"text": "..."}
  qa                 a spreadsheet row with a question and an answer column (a user and an assistant turn)

Chat-like formats (chat, sharegpt, qa) are counted through the model family's chat template (tokens.py).
A Problem carries a code (its text lives in knowledge/dataset.yml) and never the record's content.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

CHAT_FORMATS = frozenset({"chat", "sharegpt", "qa"})

# ShareGPT speaker names as the ShareGPT exports and Axolotl's sharegpt loader spell them.
_SHAREGPT_ROLES = {"system": "system", "human": "user", "user": "user", "gpt": "assistant",
                   "assistant": "assistant", "chatgpt": "assistant", "bing": "assistant", "bard": "assistant",
                   "tool": "tool", "function_call": "assistant", "observation": "tool"}
_CHAT_ROLES = {"system", "user", "assistant", "tool", "developer"}


@dataclass(frozen=True)
class Example:
    """One training example: its format and its turns (role, text); plain formats have one or two 'text' turns."""

    fmt: str
    turns: Tuple[Tuple[str, str], ...]

    @property
    def is_chat(self) -> bool:
        return self.fmt in CHAT_FORMATS

    def texts(self) -> List[str]:
        return [text for _, text in self.turns]


@dataclass(frozen=True)
class Problem:
    """Why a line is not a usable example: a code from knowledge/dataset.yml `problems`, never the content."""

    code: str


Parsed = Union[Example, Problem]


def _content_text(content: Any) -> Optional[str]:
    """A message content as text: a string, or the text parts of an OpenAI-style list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [part.get("text") for part in content if isinstance(part, dict) and part.get("type") == "text"]
        if parts and all(isinstance(p, str) for p in parts):
            return "\n".join(parts)
    return None


def _check_role_order(roles: Sequence[str]) -> Optional[str]:
    """None when the roles follow system? (user assistant/tool...)+; else the problem code."""
    body = [r for r in roles if r != "tool"]
    if body and body[0] in ("system", "developer"):
        body = body[1:]
    if any(r in ("system", "developer") for r in body):
        return "system_not_first"
    if not body or body[0] != "user":
        return "first_not_user"
    for previous, current in zip(body, body[1:]):
        if previous == current:
            return "roles_not_alternating"
    if body[-1] != "assistant":
        return "no_assistant_answer"
    return None


def _turns(messages: Any, role_key: str, text_key: str, role_map: Optional[Dict[str, str]]) -> Parsed:
    if not isinstance(messages, list) or not messages:
        return Problem("empty_conversation")
    turns: List[Tuple[str, str]] = []
    blank = False
    for message in messages:
        if not isinstance(message, dict):
            return Problem("message_not_object")
        raw_role = message.get(role_key)
        role = role_map.get(str(raw_role).lower()) if role_map is not None else raw_role
        if role not in _CHAT_ROLES:
            return Problem("unknown_role")
        text = _content_text(message.get(text_key))
        if text is None and not (role == "assistant" and message.get("tool_calls")):
            return Problem("content_not_text")
        text = text or ""  # an assistant tool call carries no text of its own
        blank |= role == "user" and not text.strip() or role == "assistant" and not text.strip() \
            and not message.get("tool_calls")
        turns.append((role, text))
    order = _check_role_order([role for role, _ in turns])
    if order:
        return Problem(order)
    if blank:
        return Problem("empty_field")
    return Example("chat" if role_map is None else "sharegpt", tuple(turns))


def _fields(record: Dict[str, Any], names: Sequence[str], optional: Sequence[str] = ()) -> Parsed:
    values = []
    for name in names:
        value = record.get(name)
        if not isinstance(value, str):
            return Problem("field_not_text")
        if not value.strip():
            return Problem("empty_field")
        values.append(value)
    for name in optional:
        value = record.get(name)
        if value is not None and not isinstance(value, str):
            return Problem("field_not_text")
    return Example("", tuple(("text", v) for v in values))


def detect_format(record: Any) -> Optional[str]:
    """The format a JSON record is written in, by its keys; None when it matches none."""
    if not isinstance(record, dict):
        return None
    if "messages" in record:
        return "chat"
    if "conversations" in record:
        return "sharegpt"
    if "instruction" in record and "output" in record:
        return "alpaca"
    if "prompt" in record and "completion" in record:
        return "prompt_completion"
    if "text" in record:
        return "text"
    return None


def parse_record(record: Any) -> Parsed:
    """One JSON record -> Example or Problem (unknown format, wrong types, empty fields, wrong role order)."""
    if not isinstance(record, dict):
        return Problem("not_an_object")
    fmt = detect_format(record)
    if fmt is None:
        return Problem("unknown_format")
    if fmt == "chat":
        return _turns(record["messages"], "role", "content", None)
    if fmt == "sharegpt":
        return _turns(record["conversations"], "from", "value", _SHAREGPT_ROLES)
    if fmt == "alpaca":
        parsed = _fields(record, ("instruction", "output"), ("input",))
        if isinstance(parsed, Problem):
            return parsed
        extra = record.get("input") or ""
        texts = [record["instruction"]] + ([extra] if extra.strip() else []) + [record["output"]]
        return Example("alpaca", tuple(("text", t) for t in texts))
    if fmt == "prompt_completion":
        parsed = _fields(record, ("prompt", "completion"))
        return parsed if isinstance(parsed, Problem) else Example("prompt_completion", parsed.turns)
    parsed = _fields(record, ("text",))
    return parsed if isinstance(parsed, Problem) else Example("text", parsed.turns)


def qa_example(question: Any, answer: Any) -> Parsed:
    """A spreadsheet row's question and answer cells -> a user and an assistant turn."""
    if question is None or answer is None or not str(question).strip() or not str(answer).strip():
        return Problem("empty_field")
    return Example("qa", (("user", str(question)), ("assistant", str(answer))))


# A message that pastes a few records into the chat ("is this format fine?"): JSON objects tried, at most.
PASTED_OBJECTS_TRIED = 40


def pasted_records(text: str) -> List[Tuple[Optional[str], Parsed]]:
    """The training records pasted into a chat message, each with its format (None: none known) and its reading:
    JSONL lines, which the chat may join into one line, or one record over several lines, with words around them.
    Only records in one of the known formats count (a config.json or any other JSON is not training data). At most
    ``PASTED_OBJECTS_TRIED`` objects are tried."""
    import json

    decoder = json.JSONDecoder()
    found: List[Dict[str, Any]] = []
    start = (text or "").find("{")
    for _ in range(PASTED_OBJECTS_TRIED):
        if start < 0:
            break
        try:
            record, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth ("[[[[...")
            start = text.find("{", start + 1)
            continue
        if isinstance(record, dict):
            found.append(record)
        start = text.find("{", end)
    formats = [detect_format(record) for record in found]
    if not any(formats):
        return []
    return [(fmt, parse_record(record)) for fmt, record in zip(formats, found)]
