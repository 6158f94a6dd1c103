"""The backup drill: write across three projects, `backup` into a directory, lose the database
and the mirror, `restore`, and find everything as it was, field by field; and the errors an
operator meets (missing directory, a snapshot from a newer Cairn, a PostgreSQL client too old,
a database that is not empty)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import Client

from history import mirror
from history.mirror.queue import open_mirror
from knowledge.actors import Actor
from knowledge.models import Entry
from knowledge.reads.context import build_context
from knowledge.search import search_entries
from knowledge.services import entry_delete, token_create
from memory_site.backup import database_swap
from memory_site.backup.create import BUNDLE, DUMP, MANIFEST, BackupError, client_tool, run
from tests.history import test_restore as drill
from tests.history.test_restore import access, lose_the_database, snapshot

written = drill.written  # the same writes as the mirror-restore drill

# pg_dump reads from its own connection: the writes must be committed.
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("alone_on_the_database"),
]


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
    call_command("restore", str(target), "--drop-old")
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
    capsys.readouterr()
    call_command("restore", str(target), "--force", "--drop-old")
    assert snapshot() == before
    out = capsys.readouterr().out
    assert "holds 1 revision(s) made since the snapshot" in out  # the delete
    assert "Not dropped (--drop-old)" in out
    database_swap.drop(re.search(r"is kept as (\S+);", out).group(1))
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


def _token_answers(secret: str) -> int:
    return Client(headers={"Authorization": f"Bearer {secret}"}).get("/api/v1/projects").status_code


def _kept(capsys) -> str:
    """The database the restore kept aside, as its output names it (then dropped: the server is
    shared by every test run)."""
    out = capsys.readouterr().out
    found = re.search(r"The database that was here is kept as (\S+);", out)
    assert found, out
    assert database_swap.exists(found.group(1))
    database_swap.drop(found.group(1))
    return found.group(1)


def _scratch_databases() -> list[str]:
    live = connection.settings_dict["NAME"]
    with connection.cursor() as cur:
        # The restore's side databases only (`<live>_restore_…`, `<live>_old_…`): another run's
        # xdist databases (test_cairn_gw0 beside test_cairn) share the server.
        cur.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE %s OR datname LIKE %s",
            [f"{live}\\_restore\\_%", f"{live}\\_old\\_%"],
        )
        return [row[0] for row in cur.fetchall()]


@pytest.fixture(autouse=True)
def _no_scratch_left_by_an_earlier_run(db):
    # A run killed mid-restore leaves its side databases on the shared server; this test
    # database's name is reused by the next run, whose "nothing left behind" checks would fail.
    for name in _scratch_databases():
        database_swap.drop(name)


@pytest.fixture(scope="module")
def _one_backup(tmp_path_factory) -> dict:
    return {"path": tmp_path_factory.mktemp("one-backup") / "snap", "made": False}


@pytest.fixture
def a_backup(written, _one_backup, tmp_path) -> Path:
    """A copy of one backup of the drill's writes, made once per module by the first test that
    asks: a test that damages its copy needs a valid snapshot, not one of its own database (the
    restore refuses it before anything of it is used)."""
    if not _one_backup["made"]:
        call_command("backup", str(_one_backup["path"]))
        _one_backup["made"] = True
    return Path(shutil.copytree(_one_backup["path"], tmp_path / "snap"))


@pytest.mark.parametrize(
    "damage", ["cut to 2,000 bytes", "data section cut short", "data section overwritten"]
)
def test_a_damaged_dump_is_refused_and_the_database_keeps_its_data(
    written, a_backup, capsys, damage
):
    root = get_user_model().objects.get(username="root")
    secret = token_create(actor=Actor.for_user(root), user=root, name="drill").secret
    target = a_backup
    dump = target / DUMP
    data = dump.read_bytes()
    pg_restore, _ = client_tool("pg_restore", 0)
    if damage == "cut to 2,000 bytes":
        dump.write_bytes(data[:2000])
        expected = r"database\.dump is damaged; nothing was changed"
    else:
        # The table of contents (at the start) stays whole: only the restore finds the damage.
        cut = data[:-100]
        zeroed = data[:-600] + bytes(300) + data[-300:]
        dump.write_bytes(cut if damage == "data section cut short" else zeroed)
        run([pg_restore, "--list", dump], what="list the cut dump")
        expected = r"damaged: restore another snapshot\. Refused: your database was not touched"
    before = snapshot()
    Entry.objects.filter(title="Roadmap 2026").update(title="Roadmap 2026 (after the backup)")
    changed = snapshot()
    assert changed != before and _token_answers(secret) == 200

    with pytest.raises(CommandError, match=expected):
        call_command("restore", str(target), "--force")

    assert snapshot() == changed  # nothing restored, nothing lost
    assert _token_answers(secret) == 200
    assert _scratch_databases() == []  # the scratch database went too


def test_restore_force_keeps_the_old_database_until_asked_to_drop_it(written, tmp_path, capsys):
    root = get_user_model().objects.get(username="root")
    target = tmp_path / "snap"
    call_command("backup", str(target))
    before = snapshot()
    secret = token_create(actor=Actor.for_user(root), user=root, name="after").secret
    Entry.objects.filter(title="Roadmap 2026").update(title="Roadmap 2026 (after the backup)")
    capsys.readouterr()

    call_command("restore", str(target), "--force")
    kept = _kept(capsys)
    assert snapshot() == before
    assert _token_answers(secret) == 401  # made after the snapshot: gone with the old database
    assert kept.startswith(connection.settings_dict["NAME"] + "_old_")

    call_command("restore", str(target), "--force", "--drop-old")
    out = capsys.readouterr().out
    assert re.search(r"The database that was here \(\S+_old_\S+\) is dropped\.", out), out
    assert snapshot() == before and _scratch_databases() == []
