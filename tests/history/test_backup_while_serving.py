"""A restore cannot lose a write or bring back access taken away (issue 44): it refuses to run
while other sessions use the database unless told to end them, and then lets no session in
until the restored database is in place; the revisions the snapshot lacks are named and keep
the old database from being dropped; tokens revoked and accounts deactivated since the snapshot
stay so; the search generation moves past every value the old database gave out."""

from __future__ import annotations

import re

import psycopg
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import Client

from history import mirror
from knowledge.actors import Actor
from knowledge.models import ApiToken, Entry, HistoricalEntry, Membership, Role
from knowledge.search import result_cache, search_entries
from knowledge.services import EntryFields, entry_update, entry_upsert, token_create
from knowledge.services.tokens import token_revoke, user_access_revoke
from memory_site.backup import backup_restore, database_swap
from tests.factories import ProjectFactory, StaffFactory, UserFactory

# pg_dump and restore use connections of their own: the writes must be committed.
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("alone_on_the_database"),
]


@pytest.fixture
def serving(tmp_path):
    """A project with an entry, three people and two tokens, drained and backed up."""
    root = StaffFactory(username="root")
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob", is_staff=True)
    carol = UserFactory(username="carol")
    project = ProjectFactory(slug="ops")
    for user in (alice, bob, carol):
        Membership.objects.create(project=project, user=user, role=Role.EDITOR)
    actor = Actor.for_user(alice)
    entry_upsert(actor=actor, project="ops", fields=EntryFields(title="Runbook", body="Restart."))
    tokens = {
        name: token_create(actor=Actor.system(), user=alice, name=name).secret
        for name in ("revoked later", "deleted later", "kept")
    }
    assert mirror.drain().parked == 0
    snap = tmp_path / "snap"
    call_command("backup", str(snap))
    return {"snap": snap, "actor": actor, "root": root, "tokens": tokens, "users": (bob, carol)}


def _answers(secret: str) -> int:
    return Client(headers={"Authorization": f"Bearer {secret}"}).get("/api/v1/projects").status_code


def _other_session() -> psycopg.Connection:
    """A session on the live database, as the web server or the worker holds one."""
    return database_swap.connect(connection.settings_dict["NAME"])


def _kept(out: str) -> str:
    """The database the restore kept aside, as its output names it; dropped (the server is
    shared by every test run) after checking it exists and lets sessions in."""
    found = re.search(r"The database that was here is kept as (\S+);", out)
    assert found, out
    with database_swap.connect(found.group(1)) as look:
        assert look.execute("SELECT count(*) FROM knowledge_entry").fetchone()[0] >= 1
    database_swap.drop(found.group(1))
    return found.group(1)


@pytest.fixture(autouse=True)
def _no_side_databases_left(db):
    yield
    live = connection.settings_dict["NAME"]
    with connection.cursor() as cur:
        cur.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE %s OR datname LIKE %s",
            [f"{live}\\_restore\\_%", f"{live}\\_old\\_%"],
        )
        for (name,) in cur.fetchall():
            database_swap.drop(name)


# --- sessions --------------------------------------------------------------------------------


def test_restore_refuses_while_another_session_uses_the_database(serving):
    Entry.objects.filter(title="Runbook").update(body="changed after the backup")
    with _other_session() as other:
        with pytest.raises(CommandError, match=r"1 other session\(s\) use the database") as exc:
            call_command("restore", str(serving["snap"]), "--force")
        assert "--end-sessions" in str(exc.value) and "Nothing was changed" in str(exc.value)
        assert other.execute("SELECT 1").fetchone() == (1,)  # left alone
    assert Entry.objects.get(title="Runbook").body == "changed after the backup"
    assert _answers(serving["tokens"]["kept"]) == 200  # the database still lets sessions in


def test_end_sessions_keeps_every_session_out_until_the_restored_database_is_in_place(serving):
    live = connection.settings_dict["NAME"]
    other = _other_session()
    tried: dict[str, str] = {}

    def step(name: str) -> None:
        if name != "restore the mirror":  # the snapshot is proven; the live one is not replaced
            return
        try:  # a web server's write while the restore works
            with database_swap.connect(live) as late:
                late.execute("UPDATE knowledge_entry SET body = 'written during the restore'")
            tried["late"] = "written"
        except psycopg.OperationalError as exc:
            tried["late"] = str(exc)
        try:
            other.execute("SELECT 1")
            tried["other"] = "still connected"
        except psycopg.OperationalError as exc:
            tried["other"] = str(exc)

    result = backup_restore(serving["snap"], force=True, end_sessions=True, step=step)

    assert "not currently accepting connections" in tried["late"]  # refused, so it knows
    assert tried["other"] != "still connected"
    assert len(result.sessions_ended) == 1 and "pid" in result.sessions_ended[0]
    assert Entry.objects.get(title="Runbook").body == "Restart."  # the restored database answers
    assert _answers(serving["tokens"]["kept"]) == 200
    with database_swap.connect(result.database_kept_as) as look:  # open again, for a look
        assert look.execute("SELECT 1").fetchone() == (1,)
    other.close()


def test_a_restore_that_fails_lets_the_sessions_back_in(serving):
    dump = serving["snap"] / "database.dump"
    dump.write_bytes(dump.read_bytes()[:-100])  # its table of contents whole: found in the proof
    with pytest.raises(CommandError, match="Refused: your database was not touched"):
        call_command("restore", str(serving["snap"]), "--force")
    with _other_session() as other:
        assert other.execute("SELECT 1").fetchone() == (1,)


def test_reopen_lets_sessions_in_after_a_killed_restore(serving, capsys):
    live = connection.settings_dict["NAME"]
    connection.close()
    database_swap.close(live)  # as a restore killed in the middle leaves it
    with pytest.raises(psycopg.OperationalError, match="not currently accepting connections"):
        _other_session()
    call_command("restore", "--reopen")
    assert f"The database {live} lets sessions in again." in capsys.readouterr().out
    with _other_session() as other:
        assert other.execute("SELECT 1").fetchone() == (1,)


# --- what the snapshot lacks -------------------------------------------------------------------


def test_revisions_the_snapshot_lacks_are_named_and_keep_the_old_database(serving, capsys):
    runbook = Entry.objects.get(title="Runbook")
    entry_update(actor=serving["actor"], ref=runbook.pk, fields=EntryFields(body="Restart twice."))
    capsys.readouterr()

    call_command("restore", str(serving["snap"]), "--force", "--drop-old")

    out = capsys.readouterr().out
    assert "holds 1 revision(s) made since the snapshot" in out, out
    assert f"entry {runbook.pk} 'Runbook' version 2, changed at" in out
    assert "Not dropped (--drop-old)" in out and "manage.py export" in out
    assert "is dropped" not in out
    _kept(out)
    assert Entry.objects.get(pk=runbook.pk).body == "Restart."
    assert HistoricalEntry.objects.filter(id=runbook.pk).count() == 1


def test_access_taken_away_since_the_snapshot_stays_taken_away(serving, capsys):
    tokens, root = serving["tokens"], Actor.for_user(serving["root"])
    bob, carol = serving["users"]
    assert all(_answers(secret) == 200 for secret in tokens.values())  # each actor now cached
    revoked = ApiToken.objects.get(name="revoked later")
    token_revoke(actor=root, token_id=revoked.pk)
    ApiToken.objects.filter(name="deleted later").delete()
    user_access_revoke(actor=root, user=bob)
    carol.set_password("a new one after the old leaked")
    carol.save()
    capsys.readouterr()

    call_command("restore", str(serving["snap"]), "--force")

    out = capsys.readouterr().out
    assert _answers(tokens["revoked later"]) == 401
    assert _answers(tokens["deleted later"]) == 401
    assert _answers(tokens["kept"]) == 200
    assert ApiToken.objects.get(pk=revoked.pk).revoked_at is not None
    users = get_user_model().objects
    assert not users.get(username="bob").is_active
    assert users.get(username="carol").check_password("a new one after the old leaked")
    assert users.get(username="alice").is_active
    said = "Taken away since the snapshot, and so in the restored one: "
    assert f"{said}token 'revoked later' (cairn_" in out and "…) revoked." in out
    assert f"{said}token 'deleted later' (cairn_" in out and "…) deleted: revoked here." in out
    assert f"{said}account bob deactivated, no longer staff, with a new password." in out
    assert f"{said}account carol with a new password." in out
    _kept(out)


def test_a_snapshot_from_another_installation_deactivates_no_one(serving, capsys):
    """The database here shares no account or token with the snapshot (a new host, a lost
    database): the snapshot's accounts are not this one's to judge. It lacks no revision
    either, so --drop-old drops it."""
    accounts = get_user_model().objects.count()
    get_user_model().objects.all().delete()  # tokens and memberships with them
    capsys.readouterr()
    call_command("restore", str(serving["snap"]), "--force", "--drop-old")
    out = capsys.readouterr().out
    assert "Taken away since the snapshot" not in out and "made since the snapshot" not in out
    assert re.search(r"The database that was here \(\S+_old_\S+\) is dropped\.", out), out
    assert get_user_model().objects.filter(is_active=True).count() == accounts
    assert _answers(serving["tokens"]["deleted later"]) == 200


# --- the search generation -----------------------------------------------------------------------


def _generation(actor) -> int:
    with connection.cursor() as cursor:
        cursor.execute(*result_cache.generation_statement(actor))
        return result_cache.stamp(cursor.fetchall())[0]


def _titles(actor, query: str) -> list[str]:
    return sorted(hit.title for hit in search_entries(actor, query, mode="text"))


def test_the_search_generation_never_goes_back_across_a_restore(serving):
    """A web process keeps answers across the swap: none may answer for the restored data."""
    actor = serving["actor"]
    write = lambda title: entry_upsert(  # noqa: E731
        actor=actor, project="ops", fields=EntryFields(title=title, body="A drill.")
    )
    assert _titles(actor, "drill") == []  # kept under the snapshot's generation
    write("Fire drill")  # after the snapshot: lost with the old database
    assert _titles(actor, "drill") == ["Fire drill"]  # kept under the next generation
    before = _generation(actor)

    backup_restore(serving["snap"], force=True)

    assert _generation(actor) > before
    write("Flood drill")
    assert _titles(actor, "drill") == ["Flood drill"]
