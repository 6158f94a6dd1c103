"""The closing table of `make mutants`: per guarantee, the mutants killed, those that survived
with an explanation in docs/developers/mutants.md, and those that survived without one.

Each survivor without an explanation is listed below the table with its diff: kill it with a
test, or explain it on that page (its name in backticks, in a row of the "Explained survivors"
table). Exits 1 while any is left, so the run says when there is work to do.

Run by `make mutants` after mutmut, from the checkout (mutmut's results are in mutants/), with
the same parts as the run (`make mutants ONLY=...`): the table then counts those parts only.
"""

from __future__ import annotations

import re
import sys
from collections import Counter

from mutmut.mutation.data import SourceFileMutationData
from mutmut.mutation.diff_apply import get_diff_for_mutant
from mutmut.stats import status_by_exit_code
from mutmut.utils.file_utils import walk_mutatable_files

from tests.mutation.scope import GUARANTEES, ROOT, function_of, functions, guarantee_of

DOC = ROOT / "docs" / "developers" / "mutants.md"
NAME = re.compile(r"`([\w.ǁ]+__mutmut_\d+)`")
# mutmut's statuses, in the table's words. A timeout is a kill: the mutant made a test hang and
# mutmut's CPU limit stopped it; "by time" counts those among the killed, since a loaded machine
# also stops tests that were only slow (docs/developers/mutants.md, "The last run").
# "no tests": none of its guarantee's tests reaches the function.
KILLED = {"killed", "timeout", "caught by type check", "segfault"}
SURVIVED = {"survived", "no tests"}
COLUMNS = ("mutants", "killed", "by time", "explained", "survived", "not run")


def explained() -> set[str]:
    """The mutant names the page explains (the section after its "Explained survivors")."""
    text = DOC.read_text(encoding="utf-8")
    return set(NAME.findall(text.split("## Explained survivors", 1)[-1]))


def results(only: list[str] | None = None) -> dict[str, str]:
    """{mutant name: status} of the last run, for the mutants of the listed functions (of the
    parts in `only`)."""
    wanted, found = set(functions(only)), {}
    for path in walk_mutatable_files():
        data = SourceFileMutationData(path=path)
        data.load()
        found |= {
            name: status_by_exit_code[code]
            for name, code in data.exit_code_by_key.items()
            if function_of(name) in wanted
        }
    return found


def _short_diff(name: str) -> str:
    """The changed lines of the mutant, without the function around them."""
    try:
        diff = get_diff_for_mutant(name)
    except Exception as exc:  # a stale name (the function changed since): say so, go on
        return f"      (no diff: {exc})"
    lines = [
        line
        for line in diff.splitlines()
        if line[:1] in "+-" and not line.startswith(("---", "+++"))
    ]
    return "\n".join(f"      {line.strip()[:1]} {line[1:].strip()}" for line in lines[:6])


def main(only: list[str]) -> int:
    known, found = explained(), results(only)
    counts = {
        g.name: Counter() for g in GUARANTEES if not only or set(g.functions) & set(functions(only))
    }
    left, stopped = [], []
    for name, status in sorted(found.items()):
        count = counts[guarantee_of(name).name]
        count["mutants"] += 1
        if status == "timeout":  # of the killed: a hang, or tests slowed past the CPU limit
            count["by time"] += 1
            stopped.append(name)
        if status in KILLED:
            count["killed"] += 1
        elif status in SURVIVED and name in known:
            count["explained"] += 1
        elif status in SURVIVED:
            count["survived"] += 1
            left.append((name, status))
        else:  # not checked (an interrupted run), suspicious, …
            count["not run"] += 1
    total = sum(counts.values(), Counter())
    print(f"\n{'guarantee':<14}" + "".join(f"{c:>11}" for c in COLUMNS))
    for name, count in [*counts.items(), ("total", total)]:
        print(f"{name:<14}" + "".join(f"{count[c]:>11}" for c in COLUMNS))
    if not only and (stale := known - set(found)):
        print(f"\n{len(stale)} name(s) explained in {DOC.relative_to(ROOT)} are no mutant of this "
              f"run (their function changed): {', '.join(sorted(stale)[:5])}…")  # fmt: skip
    if stopped:
        print(f"\n{len(stopped)} of the killed were stopped for time, not failed by a test; to "
              "see one fail or pass with no limit:\n  cd mutants && MUTANT_UNDER_TEST=NAME "
              "../.venv/bin/python -m pytest -p tests.mutation.plugin -n 0 -x")  # fmt: skip
        print("  " + ", ".join(stopped[:8]) + (" …" if len(stopped) > 8 else ""))
    if left:
        print(f"\n{len(left)} survivor(s) without an explanation in {DOC.relative_to(ROOT)}: kill")
        print("each with a test, or explain it there. `mutmut show NAME` shows one whole.\n")
        for name, status in left:
            print(f"  {name} ({status})\n{_short_diff(name)}")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
