"""Where a search's time goes: named stages, timed only when someone listens.

Two listeners, both off by default so a normal request pays one context-variable read per
stage:

- in-process (benchmarks): ``with collect() as stages: search_entries(...)`` fills a dict of
  stage name -> milliseconds for that call;
- across processes (the MCP benchmark): CAIRN_SEARCH_PROFILE=<file> makes every stage append
  one JSON line ``{"pid", "stage", "ms"}`` to that file, so a benchmark can read where a
  server's time went.

Stages may overlap (the query embedding runs while the full-text SQL does); `embed wait` is
the part of the embedding the request actually waited for.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_current: ContextVar[dict[str, float] | None] = ContextVar("cairn_search_stages", default=None)
_log_lock = threading.Lock()


def _log_path() -> str:
    return os.environ.get("CAIRN_SEARCH_PROFILE", "")


def add(name: str, ms: float) -> None:
    """Record `ms` milliseconds spent in stage `name` (summed when a stage repeats)."""
    stages = _current.get()
    if stages is not None:
        stages[name] = stages.get(name, 0.0) + ms
    path = _log_path()
    if path:
        line = json.dumps({"pid": os.getpid(), "stage": name, "ms": round(ms, 3)})
        with _log_lock, open(path, "a") as f:
            f.write(line + "\n")


def listening() -> bool:
    return _current.get() is not None or bool(_log_path())


@contextmanager
def stage(name: str) -> Iterator[None]:
    if not listening():
        yield
        return
    start = time.perf_counter()
    try:
        yield
    finally:
        add(name, (time.perf_counter() - start) * 1000)


@contextmanager
def collect() -> Iterator[dict[str, float]]:
    """Collect the stages of the calls made inside the block (this context only)."""
    stages: dict[str, float] = {}
    token = _current.set(stages)
    try:
        yield stages
    finally:
        _current.reset(token)
