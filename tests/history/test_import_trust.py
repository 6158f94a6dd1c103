"""Issue 32: an import takes no verification mark on a file's word, and two imports creating
the same project at once both succeed (the lookup and the creation are one locked step)."""

from __future__ import annotations

import threading
import time

import pytest
from django.core.management import call_command
from django.db import connection

from history.importing import import_folder
from knowledge.actors import Actor
from knowledge.models import Entry
from tests.factories import StaffFactory, UserFactory

CAIRN_FILE = """---
id: 23456789ab
title: Checked
kind: note
status: active
version: 3
verified_by: boss
verified_at: 2026-01-02T03:04:05Z
---
It was checked.
"""


@pytest.mark.django_db
def test_an_imported_verification_mark_is_dropped_unless_kept(tmp_path, capsys):
    StaffFactory(username="boss", is_superuser=True)  # exists here: the file names them
    (tmp_path / "acme").mkdir()
    (tmp_path / "acme" / "checked.md").write_text(CAIRN_FILE)
    call_command("import", str(tmp_path), "--user", "boss")
    entry = Entry.objects.get(title="Checked")
    assert entry.verified_by is None and entry.verified_at is None
    assert entry.short_id == "23456789ab" and entry.version == 3  # the rest is kept
    assert "Dropped the verification marks (verified_by) of 1 file(s)" in capsys.readouterr().out

    Entry.objects.all().delete()
    call_command("import", str(tmp_path), "--user", "boss", "--keep-verified")
    assert Entry.objects.get(title="Checked").verified_by.username == "boss"


class HoldsOpen:
    """A progress bar that keeps its import's transaction open after its first entry, until
    told to go on: the moment another import would look for the same project."""

    def __init__(self):
        self.inside, self.go_on = threading.Event(), threading.Event()

    def reset(self, total=None):
        pass

    def update(self, n=1):
        if n and not self.inside.is_set():
            self.inside.set()
            assert self.go_on.wait(60)


def _someone_waits_for_a_lock(limit: float = 60.0) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_locks WHERE NOT granted")
            if cursor.fetchone()[0]:
                return True
        time.sleep(0.05)
    return False


@pytest.mark.django_db(transaction=True)
def test_two_imports_creating_one_project_both_succeed(tmp_path, broker):
    actor = Actor.for_user(UserFactory(username="alice"))
    (tmp_path / "fresh").mkdir()
    for name in ("one", "two"):
        (tmp_path / "fresh" / f"{name}.md").write_text(f"# {name}\n\nbody {name}\n")
    first_bar, reports, errors = HoldsOpen(), {}, []

    def run(name, progress=None):
        try:
            reports[name] = import_folder(tmp_path, actor=actor, progress=progress)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            connection.close()

    first = threading.Thread(target=run, args=("first", first_bar))
    first.start()
    assert first_bar.inside.wait(60)
    second = threading.Thread(target=run, args=("second",))
    second.start()
    try:
        assert _someone_waits_for_a_lock()  # the second import waits for the first
    finally:
        first_bar.go_on.set()
        first.join()
        second.join()
    assert not errors
    assert reports["first"].counts == {"created": 2}
    assert reports["second"].counts == {"unchanged": 2}, reports["second"].results
