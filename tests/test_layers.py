"""The tree shows the architecture: the pure parts never load rasa, the advisor depends on nothing else of bot/ but the
knowledge layer (which depends on nothing of bot/), and every group of bot/ imports only the groups listed for it,
with no cycle between groups.

Checked two ways: importing the pure packages in a fresh interpreter (what really gets loaded, transitive imports
included) and reading every import statement of bot/advisor, bot/text and bot/present (what the code asks for,
including imports inside functions that a plain import would not run)."""
from __future__ import annotations

import ast
import re
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("rasa", "rasa_sdk", "tensorflow", "sanic")

# The pure groups: no rasa, no web framework, no I/O of their own (checked below).
PURE = {
    # the knowledge layer: every knowledge/*.yml read and validated; every group may use it (added below)
    "knowledge": set(),
    "advisor": {"knowledge"},
    # privacy: the personal data masking (phonenumbers, stdnum, no rasa); text quotes a number masked when it is one
    "privacy": set(),
    "text": {"advisor", "privacy"},
    "present": {"advisor"},
}
# Which groups of bot/ each group may import (besides itself), for every package and top-level module of bot/.
# Everything not listed is forbidden; the graph has no cycle (staff depends on tickets, never the other way round).
ALLOWED = {
    **PURE,
    "tickets": {"advisor", "present", "telegram_api", "privacy"},
    "staff": {"tickets", "origins", "privacy"},
    # the data check reads a training file: the advisor for the estimate, present for its chart, privacy for counts
    "dataset": {"advisor", "present", "privacy"},
    "assistant": {"advisor", "text", "tickets", "origins", "secret_files", "telegram_api", "privacy", "dataset"},
    "cli": {"advisor", "present"},  # its plug-in commands (bot.staff.cli, the Telegram CLI, the data check) by name
    "website": {"origins", "privacy"},
    "telegram_api": set(),
    "origins": set(),
    "secret_files": set(),
    "launcher": set(),  # starts every server of `make run` and dies with its supervisor: imports nothing of bot/
}
for _group in ALLOWED:
    if _group not in ("knowledge", "launcher"):
        ALLOWED[_group] = ALLOWED[_group] | {"knowledge"}


def _modules_of(group: str):
    package = ROOT / "bot" / group
    return sorted(package.rglob("*.py")) if package.is_dir() else [package.with_suffix(".py")]


def _groups_on_disk():
    bot = ROOT / "bot"
    return {p.name for p in bot.iterdir() if (p / "__init__.py").exists()} | {
        p.stem for p in bot.glob("*.py") if p.name != "__init__.py"}


def _bot_imports(path: Path):
    """(group, line) for every `bot.<group>` that the file imports, at any depth of the code."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "bot" and len(parts) > 1:
                yield parts[1], node.lineno
            if parts[0] in HEAVY:
                yield parts[0], node.lineno


@pytest.mark.parametrize("group", sorted(ALLOWED))
def test_group_imports_only_what_it_may(group):
    offending = []
    for path in _modules_of(group):
        for target, line in _bot_imports(path):
            if (group in PURE and target in HEAVY) or (
                    target not in HEAVY and target != group and target not in ALLOWED[group]):
                offending.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not offending, "\n".join(offending)


def test_every_group_of_bot_is_listed_and_the_groups_form_no_cycle():
    assert _groups_on_disk() == set(ALLOWED)
    for group in PURE:
        assert len(_modules_of(group)) > 1, group
    done: set = set()

    def visit(group: str, path: tuple) -> None:
        assert group not in path, " -> ".join(path + (group,))
        if group not in done:
            for target in ALLOWED[group]:
                visit(target, path + (group,))
            done.add(group)

    for group in ALLOWED:
        visit(group, ())


def test_importing_the_pure_parts_and_the_cli_estimate_loads_no_rasa():
    """A fresh interpreter imports every module of the pure groups and runs the CLI's estimate; then lists what of
    rasa, tensorflow or sanic got loaded along the way."""
    modules = [".".join(p.relative_to(ROOT).with_suffix("").parts) for g in PURE for p in _modules_of(g)]
    modules = [m[: -len(".__init__")] if m.endswith(".__init__") else m for m in modules]
    code = f"""
import importlib, io, json, sys, contextlib
for name in {modules!r}:
    importlib.import_module(name)
from bot.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    rc = main(["estimate", "--model", "llama-3.1-8b", "--method", "qlora", "--seq-len", "2048", "--json"])
heavy = sorted(m for m in sys.modules if m.split(".")[0] in {HEAVY!r})
print(json.dumps({{"rc": rc, "heavy": heavy, "out": len(out.getvalue())}}))
"""
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["rc"] == 0 and report["out"] > 100
    assert report["heavy"] == [], report["heavy"]


def test_the_rasa_glue_lives_in_bot_assistant():
    """Only bot/assistant (and the actions) may import rasa; the rest of bot/ never does."""
    offending = []
    for path in sorted((ROOT / "bot").rglob("*.py")):
        rel = path.relative_to(ROOT / "bot").parts
        if rel[0] == "assistant":
            continue
        for target, line in _bot_imports(path):
            if target in ("rasa", "tensorflow"):
                offending.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not offending, "\n".join(offending)


def test_the_library_never_imports_the_actions():
    """actions/ adapts bot/ to rasa_sdk; bot/ (the NLU components inside the Rasa server included) never reaches
    back into actions/."""
    offending = []
    for path in sorted((ROOT / "bot").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 else [])
            offending += [f"{path.relative_to(ROOT)}:{node.lineno} imports {n}" for n in names
                          if n.split(".")[0] == "actions"]
    assert not offending, "\n".join(offending)


def test_config_files_name_classes_that_exist():
    """config.yml, credentials*.yml and endpoints*.yml point at classes under bot.assistant."""
    import yaml

    named = []
    config = yaml.safe_load((ROOT / "config.yml").read_text(encoding="utf-8"))
    named += [c["name"] for c in config["pipeline"] if c["name"].startswith("bot.")]
    for pattern in ("credentials*.yml",):
        for path in ROOT.glob(pattern):
            named += [k for k in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}) if k.startswith("bot.")]
    for path in ROOT.glob("endpoints*.yml"):
        text = path.read_text(encoding="utf-8")
        named += [line.split(":", 1)[1].strip() for line in text.splitlines()
                  if line.strip().startswith("type:") and "bot." in line]
    assert named, "no project classes named in the configuration"
    for dotted in named:
        assert dotted.startswith("bot.assistant."), dotted
        module, _, attr = dotted.rpartition(".")
        path = ROOT.joinpath(*module.split("."))
        source = path.with_suffix(".py") if path.with_suffix(".py").exists() else path / "__init__.py"
        assert source.exists(), dotted
        text = source.read_text(encoding="utf-8")
        assert f"class {attr}" in text or attr in text, dotted


def test_readme_tree_names_every_part_of_bot():
    """The README's "Where things live" tree lists each package and top-level module of bot/, and nothing gone."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    tree = readme[readme.index("## Where things live"):]
    tree = tree[: tree.index("```", tree.index("```") + 3)]
    parts = [p.name + "/" for p in (ROOT / "bot").iterdir() if p.is_dir() and (p / "__init__.py").exists()]
    parts += [p.name for p in (ROOT / "bot").glob("*.py") if p.name != "__init__.py"]
    for group in PURE:
        parts += [p.name for p in (ROOT / "bot" / group).glob("*.py") if p.name != "__init__.py"]
    tree = tree[tree.index("\nbot/"): tree.index("\nactions/")]
    missing = [p for p in parts if p not in tree]
    assert not missing, missing
    named = set(re.findall(r"\b(\w+\.py)\b", tree))
    existing = {p.name for p in (ROOT / "bot").rglob("*.py")}
    assert named <= existing, sorted(named - existing)


def test_the_module_list_in_docs_is_generated_from_the_code():
    """docs/modules.md lists every module of bot/ and actions/ with its docstring (scripts/module_map.py)."""
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "module_map.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
