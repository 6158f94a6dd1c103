"""Shared helpers for the benchmarks: Django setup, percentiles, table and JSON output."""

from __future__ import annotations

import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


def setup_django() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_site.settings")
    import django

    django.setup()


class SqlCount:
    """A connection.execute_wrapper that counts the statements sent and the seconds spent
    waiting on them (where a write's time goes: its own CPU, or the database)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.statements, self.seconds = 0, 0.0

    def __call__(self, execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.statements += 1
            self.seconds += time.perf_counter() - started


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def print_table(headers: list[str], rows: list[list[object]]) -> None:
    cells = [[str(h) for h in headers]] + [
        [f"{c:.3f}" if isinstance(c, float) else str(c) for c in row] for row in rows
    ]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    for n, row in enumerate(cells):
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |")
        if n == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")


def write_json(name: str, payload: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    payload = {
        "benchmark": name,
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        **payload,
    }
    path.write_text(json.dumps(payload, indent=2))
    print(f"\nwrote {path.relative_to(ROOT)}")
    return path


def locomo_data(given: str | None = None, name: str = "locomo-dev.json") -> Path:
    """The LoCoMo file: `given`, else shared/bench-data/ beside the checkout or any folder above
    it, or above the main checkout when this is a git worktree (its .git names the main one).
    Exits with what to pass when there is none, before anything is started."""
    if given:
        path = Path(given).expanduser()
        if not path.is_file():
            sys.exit(f"No LoCoMo data at {path}: pass --data PATH/{name} (an existing file).")
        return path
    tops = [ROOT]
    git = ROOT / ".git"
    if git.is_file():  # a worktree: "gitdir: <main>/.git/worktrees/<name>"
        gitdir = Path(git.read_text().split(":", 1)[1].strip())
        if gitdir.parent.name == "worktrees":
            tops.append(gitdir.parent.parent.parent)
    looked = []
    for top in tops:
        for folder in [top, *top.parents]:
            path = folder / "shared" / "bench-data" / name
            if path.is_file():
                return path
            looked.append(str(path.parent))
    sys.exit(
        f"No {name} found in {', '.join(dict.fromkeys(looked))}; pass --data PATH/{name} "
        "(the LoCoMo dev split, see shared/bench-data/README.md)."
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(proc: subprocess.Popen, port: int, *, timeout: float, what: str) -> None:
    """Until `proc` listens on 127.0.0.1:`port`; raises when it exits or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not start") from None
            time.sleep(0.2)
