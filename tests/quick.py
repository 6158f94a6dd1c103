"""The selection of `make check` (loaded with `-p tests.quick`): the tests that run inside this
process. A test module that starts other processes (subprocess, a browser, a live server) is
left to `make test`, which runs everything; pytest's summary counts what was left as deselected.

Decided from the module's source, so a new slow module drops out of the inner loop by itself."""

from __future__ import annotations

import functools
import re
from pathlib import Path

SPAWNS = re.compile(r"\b(subprocess|Popen|playwright|live_server|LiveServer)\b")


@functools.cache
def spawns(path: Path) -> bool:
    return bool(SPAWNS.search(path.read_text()))


def pytest_collection_modifyitems(config, items):
    left = [item for item in items if spawns(Path(item.path))]
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = [item for item in items if not spawns(Path(item.path))]
