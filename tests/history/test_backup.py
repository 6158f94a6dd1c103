"""The backup drill: write across three projects, `backup` into a directory, lose the database
and the mirror, `restore`, and find everything as it was, field by field; and the errors an
operator meets (missing directory, a snapshot from a newer Cairn, a PostgreSQL client too old,
a database that is not empty)."""

from __future__ import annotations

import json
import shutil

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from history import mirror
from history.mirror.repo import open_mirror
from knowledge.actors import Actor
from knowledge.graph.context import build_context
from knowledge.models import Entry
from knowledge.search import search_entries
from knowledge.services import entry_delete
from memory_site.backup import BUNDLE, DUMP, MANIFEST, BackupError, client_tool
from tests.history import test_restore as drill
from tests.history.test_restore import access, lose_the_database, snapshot

written = drill.written  # the same writes as the mirror-restore drill

# pg_dump reads from its own connection: the writes must be committed.
pytestmark = pytest.mark.django_db(transaction=True)


def test_a_lost_database_and_mirror_come_back_from_a_backup(written, tmp_path, capsys):
    before, seen_before = snapshot(), access(written["users"])
    head = str(open_mirror().head().id)
    target = tmp_path / "snap"
    call_command("backup", str(target))
    assert "Backed up 3 project(s), 4 entr(y/ies)" in capsys.readouterr().out
    manifest = json.loads((target / MANIFEST).read_text())
    assert manifest["mirror"]["head"] == head and manifest["counts"]["entries"] == 4
    assert manifest["migrations"]["knowledge"][0] == "0001_initial"
    assert {p.name for p in target.iterdir()} == {DUMP, BUNDLE, MANIFEST}

    lose_the_database()
    shutil.rmtree(open_mirror().path)
    call_command("restore", str(target))
    assert "The counts match the snapshot and the mirror matches" in capsys.readouterr().out

    after = snapshot()
    for key in before:
        assert after[key] == before[key], key
    assert access(written["users"]) == seen_before  # people, groups and flags came back too
    assert str(open_mirror().head().id) == head
    assert call_command("mirror", "verify") is None and mirror.drain().committed == 0
    alice = Actor.for_user(get_user_model().objects.get(username="alice"))
    assert [h.title for h in search_entries(alice, "restore", mode="text")] == ["Roadmap 2026"]
    assert build_context(alice, "memory://open/plans/2026/roadmap-2026")

    with pytest.raises(CommandError, match="already holds projects or entries"):
        call_command("restore", str(target))
    entry_delete(actor=alice, ref=Entry.objects.get(title="Roadmap 2026").pk,
                 reason="a mistake the snapshot undoes")  # fmt: skip
    call_command("restore", str(target), "--force")
    assert snapshot() == before
    with pytest.raises(CommandError, match="not an empty directory"):
        call_command("backup", str(target))


def test_restore_says_what_is_wrong_with_the_snapshot(tmp_path):
    with pytest.raises(CommandError, match="is not a directory"):
        call_command("restore", str(tmp_path / "nowhere"))
    with pytest.raises(CommandError, match=r"holds no manifest\.json"):
        call_command("restore", str(tmp_path))
    manifest = {"format": 1, "cairn_version": "9.0", "mirror": {"head": None},
                "database": {"server_major": 15, "pg_dump_major": 15},
                "migrations": {"knowledge": ["0001_initial", "0099_future"]}}  # fmt: skip
    (tmp_path / MANIFEST).write_text(json.dumps(manifest))
    (tmp_path / DUMP).write_bytes(b"")
    with pytest.raises(CommandError, match=r"newer Cairn \(9.0, with migrations knowledge.0099"):
        call_command("restore", str(tmp_path))
    (tmp_path / MANIFEST).write_text(json.dumps(manifest | {"format": 7}))
    with pytest.raises(CommandError, match="snapshot of format 7"):
        call_command("restore", str(tmp_path))


def test_a_client_older_than_the_server_is_named_with_what_to_install():
    with pytest.raises(BackupError, match=r"pg_dump 99 or newer .* postgresql-client-99"):
        client_tool("pg_dump", 99)
