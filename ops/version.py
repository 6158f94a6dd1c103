"""Cairn's version: pyproject.toml's `[project] version`, the one place it is written. /healthz,
MCP whoami and the server's initialize answer, the admin's footer, `manage.py --version` and a
backup's manifest all read it from here."""

from __future__ import annotations

import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def read_version(path: Path = PYPROJECT) -> str:
    with path.open("rb") as f:
        return str(tomllib.load(f)["project"]["version"])


VERSION = read_version()
