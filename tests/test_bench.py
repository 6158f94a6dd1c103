"""Every benchmark starts: `bench/<script>.py --help` exits 0 with argparse's usage, and the
helper modules import. No benchmark runs in the tests, so an import that only works after
Django is set up (or a module path that only resolves from one directory) would otherwise be
found by whoever runs the bench next, possibly at the end of a long sitting.

The scripts start side by side (they mostly wait on imports), ~3 s in all on 2 cores."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
DEADLINE = 90  # seconds for all of them: far above the ~3 s they take, below a hung run


def _is_script(path: Path) -> bool:
    return 'if __name__ == "__main__":' in path.read_text()


SCRIPTS = sorted(p for p in BENCH.glob("*.py") if _is_script(p))
HELPERS = sorted(p for p in BENCH.glob("*.py") if not _is_script(p))


def _env() -> dict[str, str]:
    # As from a shell: no test settings, no test database; --help must need neither.
    drop = ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "PYTHONPATH")
    return {k: v for k, v in os.environ.items() if k not in drop}


def _finish(proc: subprocess.Popen, deadline: float) -> tuple[int | None, str, str]:
    try:
        out, err = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
        return proc.returncode, out, err
    except subprocess.TimeoutExpired:
        proc.kill()  # a script that ignores --help and starts measuring
        out, err = proc.communicate()
        return None, out, err


def test_the_scripts_and_helpers_are_found():
    names = {p.name for p in SCRIPTS}
    assert {"locomo.py", "side_by_side.py", "write_path.py", "mcp_load.py"} <= names
    assert {"_common.py", "_setup.py"} <= {p.name for p in HELPERS}


def test_every_bench_script_answers_help_and_every_helper_imports():
    # From the project root, as bench/README.md runs them (sys.path[0] is then bench/).
    command = [[sys.executable, str(p.relative_to(ROOT)), "--help"] for p in SCRIPTS]
    modules = ", ".join(f"bench.{p.stem}" for p in HELPERS if p.stem != "__init__")
    command.append([sys.executable, "-c", f"import {modules}"])
    procs = [
        subprocess.Popen(
            c, cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for c in command
    ]
    deadline = time.monotonic() + DEADLINE
    failed = []
    for c, proc in zip(command, procs, strict=True):
        code, out, err = _finish(proc, deadline)
        what = " ".join(c[1:])
        if code is None:
            failed.append(f"{what}: still running after {DEADLINE} s (does it parse --help?)")
        elif code != 0:
            failed.append(f"{what}: exit {code}\n{err[-1500:]}")
        elif c[-1] == "--help" and not out.startswith("usage:"):
            failed.append(f"{what}: exit 0 but no argparse usage; printed {out[:300]!r}")
    assert not failed, "bench scripts that do not start:\n\n" + "\n\n".join(failed)
