"""Rule 11: one declaration per thing: a revision model is named only in knowledge.models, and
no public `restore()` leaves the reader guessing which restore it is."""

from __future__ import annotations

import re
from pathlib import Path

from tests.architecture.source import ALL_CODE, ROOT, python_files, rel, report, write_sample

# --- rule 11: one declaration per thing -----------------------------------------------------------

HISTORY_MODEL = re.compile(r"^\s*\w+\s*=\s*\w+\.history\.model\b", re.M)
# Two restores that have nothing in common (from the mirror, from a backup): each says which.
AMBIGUOUS_NAMES = re.compile(r"^def (restore)\(", re.M)


def _second_declarations(path: Path, root: Path = ROOT) -> list[str]:
    text = path.read_text()
    found = []
    if rel(path, root) != "knowledge/models/__init__.py":
        found += [f"{rel(path, root)}: names a revision model ({m.group(0).strip()}); import "
                  "it from knowledge.models" for m in HISTORY_MODEL.finditer(text)]  # fmt: skip
    found += [f"{rel(path, root)}: a public `{m.group(1)}()` (say which: mirror_restore, "
              "backup_restore)" for m in AMBIGUOUS_NAMES.finditer(text)]  # fmt: skip
    return found


RULE_11 = "rule 11: one declaration per thing (a revision model, a restore that says which)"


def test_rule_11_one_declaration_per_thing():
    offenders = [
        hit
        for path in [*ALL_CODE, *python_files("tests/**/*.py")]
        for hit in _second_declarations(path)
    ]
    assert offenders == [], report(RULE_11, offenders)


# --- the checks can fail --------------------------------------------------------------------------


def test_the_declaration_check_catches_a_second_one(tmp_path):
    text = "HistoricalEntry = Entry.history.model\ndef restore(source):\n    pass\n"
    sample = write_sample(tmp_path, "history/sample.py", text)
    assert len(_second_declarations(sample, tmp_path)) == 2
    models = write_sample(tmp_path, "knowledge/models/__init__.py", text.splitlines()[0] + "\n")
    assert _second_declarations(models, tmp_path) == []
