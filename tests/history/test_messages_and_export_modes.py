"""Issue 32: a reason's control characters never reach a commit subject (they would rewrite the
terminal of whoever runs `git log`), and exports are readable by their owner only."""

from __future__ import annotations

import json
import os
import re
import stat
import tarfile
import zipfile

import pytest
from django.core.management import call_command

from history import mirror
from history.mirror.git import build_message, trailers_of
from history.mirror.queue import open_mirror
from knowledge.models import Entry
from knowledge.services import EntryFields, entry_upsert

pytestmark = pytest.mark.django_db
CONTROLS = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")  # all but the newline
HOSTILE = "ok\x1b[2J\x1b]0;pwned\x07\rFAKE: line\x0bmore\x85next\x9b31m\x7f end"


def test_a_subject_holds_no_control_character_and_the_reason_comes_back_exactly(actor, project):
    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="T", body="b"),
                 reason=HOSTILE)  # fmt: skip
    assert mirror.drain().parked == 0
    commit = next(c for c in open_mirror().walk() if c.revision is not None)
    subject = commit.message.split("\n", 1)[0]
    assert not CONTROLS.search(commit.message), repr(commit.message)
    assert subject == "ok [2J ]0;pwned FAKE: line more next 31m end"
    stored = Entry.history.get(history_id=commit.revision).history_change_reason
    assert json.loads(trailers_of(commit.message)["Cairn-Reason"]) == stored  # restore reads it


def test_build_message_keeps_summary_and_trailers_on_their_lines():
    message = build_message("", "create a\x1b/b\nc", revision=1, entry_id="x",
                            trailers={"Cairn-User": "eve\x1b[0m"})  # fmt: skip
    assert not CONTROLS.search(message)
    assert message.splitlines()[0] == "create a /b c"
    assert trailers_of(message)["Cairn-User"] == "eve\\u001b[0m"


@pytest.fixture
def open_umask():
    """A umask that lets everyone read new files, as on many shared hosts."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_exports_are_owner_only_whatever_the_umask(actor, project, tmp_path, open_umask):
    entry_upsert(actor=actor, project="acme", subtopic="a/b",
                 fields=EntryFields(title="Secret", body="s"))  # fmt: skip
    call_command("export", str(tmp_path / "out" / "folder"))
    made = [p for p in (tmp_path / "out").rglob("*")]
    assert made and {_mode(p) for p in made if p.is_dir()} == {0o700}
    assert {_mode(p) for p in made if p.is_file()} == {0o600}
    assert _mode(tmp_path / "out") == 0o700
    for name in ("x.zip", "x.tar.gz", "x.jsonl"):
        options = ["--format", "jsonl"] if name.endswith("jsonl") else []
        call_command("export", str(tmp_path / name), *options)
        assert _mode(tmp_path / name) == 0o600, name
    (tmp_path / "again.zip").write_bytes(b"")
    (tmp_path / "again.zip").chmod(0o644)  # an existing file is narrowed too
    call_command("export", str(tmp_path / "again.zip"))
    assert _mode(tmp_path / "again.zip") == 0o600
    with zipfile.ZipFile(tmp_path / "x.zip") as z:
        assert {i.external_attr >> 16 for i in z.infolist()} == {0o600}
    with tarfile.open(tmp_path / "x.tar.gz") as t:
        assert {m.mode for m in t.getmembers()} == {0o600}
