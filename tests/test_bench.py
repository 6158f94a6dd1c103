"""Every benchmark starts: `bench/<script>.py --help` exits 0 with argparse's usage, and the
helper modules import. No benchmark runs in the tests, so an import that only works after
Django is set up (or a module path that only resolves from one directory) would otherwise be
found by whoever runs the bench next, possibly at the end of a long sitting. And bench/ stays
a set of one-command benches: no two modules import each other, and bench/README.md gives
every script its row, whose link to its latest table leads to a heading that exists.

Each script runs as `python bench/<script>.py --help` would run it (its own process, `__main__`,
bench/ first on sys.path, nothing of Cairn imported), but forked from one process that has
already imported the MCP client and anyio: five scripts import those (~0.8 s of CPU each), so
the whole check costs ~2 s of CPU instead of ~8."""

from __future__ import annotations

import ast
import json
import os
import re
import signal
import subprocess
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
DEADLINE = 90  # seconds for all of them: far above the few they take, below a hung run

# Forks one child per job; each child runs its script as __main__ (or imports a helper) with
# its output in a file, and the parent prints {job: [exit code, output]} as JSON. Third-party
# modules only are imported before the forks, so a Cairn import that needs Django set up still
# fails in the child as it would from a shell.
RUNNER = r"""
import json, os, runpy, sys, tempfile, traceback
import anyio, httpx2, mcp.client.session, mcp.client.stdio, mcp.client.streamable_http

def child(job):
    if job.endswith(".py"):
        sys.argv = [job, "--help"]
        sys.path[0] = os.path.dirname(os.path.abspath(job))
        runpy.run_path(job, run_name="__main__")
    else:
        __import__(job)

running = {}
for job in sys.argv[1:]:
    out = tempfile.TemporaryFile()
    pid = os.fork()
    if pid == 0:
        os.dup2(out.fileno(), 1)
        os.dup2(out.fileno(), 2)
        code = 0
        try:
            child(job)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    running[pid] = (job, out)
report = {}
while running:
    pid, status = os.wait()
    job, out = running.pop(pid)
    out.seek(0)
    report[job] = [os.waitstatus_to_exitcode(status), out.read().decode(errors="replace")]
print(json.dumps(report))
"""


def _is_script(path: Path) -> bool:
    return 'if __name__ == "__main__":' in path.read_text()


SCRIPTS = sorted(p for p in BENCH.glob("*.py") if _is_script(p))
HELPERS = sorted(p for p in BENCH.glob("*.py") if not _is_script(p) and p.stem != "__init__")


def test_the_scripts_and_helpers_are_found():
    names = {p.name for p in SCRIPTS}
    assert {"locomo.py", "side_by_side.py", "write_path.py", "mcp_load.py"} <= names
    assert {"_common.py", "_setup.py"} <= {p.name for p in HELPERS}


def test_every_bench_script_answers_help_and_every_helper_imports():
    jobs = [str(p.relative_to(ROOT)) for p in SCRIPTS] + [f"bench.{p.stem}" for p in HELPERS]
    # As from a shell at the project root: no test settings, no test database.
    drop = ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    proc = subprocess.Popen(
        [sys.executable, "-c", RUNNER, *jobs],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        out, err = proc.communicate(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the runner and every script it forked
        proc.communicate()
        raise AssertionError(
            f"bench scripts still running after {DEADLINE} s: one ignores --help and measures"
        ) from None
    assert proc.returncode == 0, err
    failed = []
    for job, (code, printed) in json.loads(out).items():
        if code != 0:
            failed.append(f"{job}: exit {code}\n{printed[-1500:]}")
        elif job.endswith(".py") and not printed.startswith("usage:"):
            failed.append(f"{job} --help: exit 0 but no argparse usage; printed {printed[:300]!r}")
    assert not failed, "bench scripts that do not start:\n\n" + "\n\n".join(failed)
    assert len(json.loads(out)) == len(jobs)


def _bench_imports(path: Path) -> set[str]:
    """The bench modules `path` imports, whether as `bench.x` (the project root on sys.path)
    or as `x` (a script's own folder first on sys.path, as `python bench/x.py` runs)."""
    names = {p.stem for p in BENCH.glob("*.py")}
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module]
            if node.module == "bench":  # from bench import scale_costs
                modules = [f"bench.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        else:
            continue
        for module in modules:
            parts = module.split(".")
            name = parts[1] if parts[0] == "bench" and len(parts) > 1 else parts[0]
            if name in names and name != path.stem:
                found.add(name)
    return found


def test_no_two_bench_modules_import_each_other():
    graph = {p.stem: _bench_imports(p) for p in BENCH.glob("*.py")}
    circles = []

    def walk(name: str, trail: list[str]) -> None:
        for nxt in sorted(graph[name]):
            if nxt in trail:
                circles.append(" -> ".join([*trail[trail.index(nxt) :], nxt]))
            elif nxt not in done:
                walk(nxt, [*trail, nxt])
        done.add(name)

    done: set[str] = set()
    for name in sorted(graph):
        walk(name, [name])
    assert not circles, "import circles in bench/ (move what both need into a third module):\n" + (
        "\n".join(sorted(set(circles)))
    )


def _slug(heading: str) -> str:  # Python-Markdown's toc slugify, as mkdocs makes anchors
    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode()
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", text).strip().lower())


def test_the_readme_gives_each_script_its_command_and_a_latest_table_that_exists():
    readme = (BENCH / "README.md").read_text()
    listed = readme.split("[start:list]")[1].split("[end:list]")[0]
    missing = [p.name for p in SCRIPTS if f"bench/{p.name}" not in listed]
    assert not missing, f"bench/README.md has no row with the command of {missing}"
    links = dict(re.findall(r"^\[(\w+)\]: (\S+)$", readme, re.M))
    used = set(re.findall(r"\]\[(\w+)\]", listed))
    assert used and used <= set(links), f"undefined links in bench/README.md: {used - set(links)}"
    for label, target in links.items():
        page, _, anchor = target.partition("#")
        text = (BENCH / page).resolve().read_text()
        anchors = {_slug(h) for h in re.findall(r"^#+ (.+)$", text, re.M)}
        assert anchor in anchors, f"bench/README.md [{label}] -> {target}: no such heading"
    # docs/developers/benches.md includes the list: its links must name the same places.
    docs = (ROOT / "docs" / "developers" / "benches.md").read_text()
    assert dict(re.findall(r"^\[(\w+)\]: (\S+)$", docs, re.M)) == {
        label: target.removeprefix("../docs/developers/") for label, target in links.items()
    }
