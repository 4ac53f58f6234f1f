"""Run a function right after a module is imported, without importing it now; replace a Rasa attribute keeping
Rasa's own value.

Patches to Rasa are installed by importing `bot.assistant`, which light processes (the action server, the Telegram
CLI) import too: they must not pay for importing Rasa's core (TensorFlow, several seconds). `when_imported` applies
a patch at once when the module is already loaded, otherwise the moment something imports it.

Every patch sets its attribute with `replace`, which keeps the value Rasa shipped; `rasa_original` hands it back, so
the equivalence tests (tests/test_rasa_patches.py) call Rasa's live function, not a copy of its body.
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

_callbacks: Dict[str, List[Callable[[ModuleType], None]]] = {}


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself; wraps the loader of a watched module so the callbacks run right after it loads."""

    def find_spec(self, fullname: str, path: Optional[Sequence[str]], target: Any = None) -> Any:
        if fullname not in _callbacks:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        original_exec_module = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            original_exec_module(module)
            for callback in _callbacks.pop(fullname, []):
                callback(module)

        setattr(spec.loader, "exec_module", exec_module)  # this loader object serves only this one module
        return spec


def when_imported(module_name: str, callback: Callable[[ModuleType], None]) -> None:
    module = sys.modules.get(module_name)
    if module is not None:
        callback(module)
        return
    _callbacks.setdefault(module_name, []).append(callback)
    if not any(isinstance(finder, _AfterImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport())


_ORIGINALS: Dict[Tuple[int, str], Any] = {}
_ABSENT = object()


def replace(owner: Any, name: str, new: Any) -> None:
    """`setattr(owner, name, new)`, keeping the value `owner` itself held first (Rasa's) for `rasa_original`."""
    key = (id(owner), name)  # classes and modules live as long as the process, so their ids stay theirs
    if key not in _ORIGINALS:
        _ORIGINALS[key] = vars(owner).get(name, _ABSENT)
    setattr(owner, name, new)


def rasa_original(owner: Any, name: str) -> Any:
    """What `owner.name` was before any patch replaced it (a static or class method bound as Rasa binds it)."""
    value = _ORIGINALS[(id(owner), name)]
    if value is _ABSENT:
        raise AttributeError(f"{owner!r} had no {name!r} of its own before it was patched")
    if isinstance(value, (staticmethod, classmethod)):
        return value.__get__(None, owner)
    return value


def is_patched(module_name: str, attribute: str, marker: str) -> bool:
    """True when `module_name` is loaded and the function at `attribute` ("Class.method") in it carries `marker`, the
    attribute each patch sets on the function it installs. False while the module is not loaded."""
    owner: Any = sys.modules.get(module_name)
    if owner is None:
        return False
    for name in attribute.split("."):
        owner = getattr(owner, name)
    return bool(getattr(owner, marker, False))
