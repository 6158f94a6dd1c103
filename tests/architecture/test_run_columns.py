"""Rule 15: who wrote a revision is recorded by the write kernel alone. The columns that put a
revision in a run (its token, agent label and run id) are set only in knowledge/services/_kernel/
(from the acting Actor, and by a mirror restore from the commit's trailers): a service, a
surface or a task that set them could file its writes under another token's run, or out of any,
and an undo would take back what it was never meant to."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.architecture.source import ALL_CODE, ROOT, rel, report, write_sample

RUN_COLUMNS = {"history_token_id", "history_agent", "history_run"}
WRITES = {"update", "create", "bulk_create", "get_or_create", "update_or_create", "save"}
RECORDER = "knowledge/services/_kernel/"


def _is_write(call: ast.Call) -> bool:
    """`qs.update(...)`, `Model.objects.create(...)` or building a model: `X(history_run=…)`."""
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr in WRITES
    return isinstance(func, ast.Name) and func.id[:1].isupper()


def run_column_writes(path: Path, root: Path = ROOT) -> list[str]:
    if rel(path, root).startswith(RECORDER):
        return []
    hits = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call) and _is_write(node):
            named = RUN_COLUMNS & {kw.arg for kw in node.keywords if kw.arg}
            hits += [f"{rel(path, root)}:{node.lineno} writes {name}" for name in sorted(named)]
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and target.attr in RUN_COLUMNS:
                    hits.append(f"{rel(path, root)}:{node.lineno} sets .{target.attr}")
    return hits


RULE_15 = (
    "rule 15: a revision's token, agent and run are recorded by the write kernel alone "
    "(knowledge/services/_kernel/: run_columns(), handed to the revision insert); act as the "
    "Actor instead"
)


def test_rule_15_only_the_write_kernel_records_which_run_a_revision_belongs_to():
    offenders = [hit for path in ALL_CODE for hit in run_column_writes(path)]
    assert offenders == [], report(RULE_15, offenders)


def test_the_run_column_check_catches_a_forged_run(tmp_path):
    forged = write_sample(
        tmp_path,
        "knowledge/services/sample.py",
        "def f(qs, entry):\n"
        "    qs.update(history_run='theirs')\n"
        "    HistoricalEntry(history_token_id=3)\n"
        "    row.history_agent = 'someone else'\n"
        "    qs.filter(history_run='a')\n",  # reading a run is fine
    )
    assert len(run_column_writes(forged, tmp_path)) == 3
    kernel = write_sample(
        tmp_path,
        "knowledge/services/_kernel/runs.py",
        "def f(qs):\n    qs.update(history_run='')\n",
    )
    assert run_column_writes(kernel, tmp_path) == []
