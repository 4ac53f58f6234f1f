"""Secrets and private files: a secret comes from the environment or from a file, never from a command line (which
every local account can read with `ps`), and files that hold secrets or personal data are created mode 0600.

    ACTION_SERVER_TOKEN=...            the value itself, or
    ACTION_SERVER_TOKEN_FILE=var/...   a file holding it (trailing whitespace ignored)
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Union


def read_secret(name: str) -> Optional[str]:
    """The secret `name` from the environment, else from the file named by `<name>_FILE`; None when neither is set."""
    value = os.environ.get(name, "").strip()
    if value:
        return value
    path = os.environ.get(f"{name}_FILE", "").strip()
    if path:
        text = Path(path).read_text().strip()
        return text or None
    return None


def private_umask() -> None:
    """From now on this process creates files readable by its owner only (databases, logs, charts' neighbours)."""
    os.umask(0o077)


def write_private(path: Union[str, Path], text: str) -> Path:
    """Write `text` to a file that only the owner can read, also when the file already existed with a wider mode."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, text.encode())
    finally:
        os.close(fd)
    return path
