"""The mirror against the real database: order, authorship, moves, deletes, verify, rebuild."""

import datetime as dt
import importlib
import threading

import pygit2
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from history import maintenance, mirror
from history.file_format import parse_markdown
from knowledge.actors import Actor
from knowledge.models import Entry, HistoricalEntry, Membership, Role
from knowledge.services import EntryFields, entry_delete, entry_move, entry_update, entry_upsert
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def log(m):
    """The revision commits, oldest first (the projects manifest's commits name no revision)."""
    return [c for c in reversed(list(m.walk())) if c.revision is not None]


def test_each_revision_becomes_one_commit_in_order(actor, project, git):
    e = entry_upsert(
        actor=actor,
        project="acme",
        subtopic="decisions",
        fields=EntryFields(title="Pricing", body="one\ntwo\nthree\n"),
    ).entry
    entry_update(
        actor=actor, ref=e.pk, fields=EntryFields(body="one\n2\n3\nfour\n"), reason="fix numbers"
    )
    other = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Other", body="x")
    ).entry
    entry_update(actor=actor, ref=e.pk, fields=EntryFields(tags=["money"]))
    result = mirror.drain()
    assert result.committed == 4
    revs = list(HistoricalEntry.objects.order_by("history_id"))
    commits = log(git())
    assert [c.revision for c in commits] == [r.history_id for r in revs]
    assert [c.sha for c in commits] == [r.git_commit for r in revs]
    assert commits[2].entry == other.short_id
    assert commits[1].message.startswith("fix numbers\n\nupdate acme/decisions/pricing: ")
    assert mirror.pending().count() == 0
    assert mirror.drain().committed == 0  # idempotent: nothing twice
    assert len(log(git())) == 4


def test_author_message_and_time_come_from_the_revision(project, git):
    bob = UserFactory(username="bob", first_name="Bob", last_name="Builder", email="bob@x.org")
    carol = UserFactory(username="carol", email="")
    for member in (bob, carol):
        Membership.objects.create(project=project, user=member, role=Role.EDITOR)
    agent = Actor(user=bob, agent="agent:claude-code")
    entry_upsert(
        actor=agent, project="acme", fields=EntryFields(title="Plan", body="a"), reason="first plan"
    )
    person = Actor.for_user(carol)
    entry_update(actor=person, ref=Entry.objects.get().pk, fields=EntryFields(body="b"))
    mirror.drain()
    revs = list(HistoricalEntry.objects.order_by("history_id"))
    repo = git().repo
    first, second = (repo[r.git_commit] for r in revs)
    assert first.author.name == "agent:claude-code (Bob Builder)"
    assert first.author.email == "bob@x.org"
    assert first.committer.name == "Cairn"
    assert first.message.splitlines()[0] == "first plan"
    assert first.author.time == int(revs[0].history_date.timestamp())
    assert first.commit_time == int(revs[0].history_date.timestamp())
    assert second.author.name == "carol"
    assert second.author.email == "carol@users.cairn.invalid"
    assert second.message.splitlines()[0] == "update body"
    assert "1 line changed" not in second.message or "lines" in second.message
    assert "update acme/plan: " in second.message


def test_moves_and_deletes_remove_the_old_file_in_the_same_commit(actor, project, git):
    e = entry_upsert(
        actor=actor, project="acme", subtopic="a/b", fields=EntryFields(title="Note", body="x")
    ).entry
    entry_move(actor=actor, ref=e.pk, subtopic="c")
    entry_update(actor=actor, ref=e.pk, fields=EntryFields(title="Renamed note"))
    mirror.drain()
    m = git()
    assert list(m.files()) == ["acme/c/renamed-note.md"]
    commits = log(m)
    moved = m.repo[commits[1].sha]
    diff = m.repo.diff(moved.parents[0], moved)
    assert sorted((p.delta.old_file.path, p.delta.status_char()) for p in diff) == [
        ("acme/a/b/note.md", "D"),
        ("acme/c/note.md", "A"),
    ]
    entry_delete(actor=actor, ref=e.pk, reason="obsolete")
    mirror.drain()
    m = git()
    assert m.files() == {}
    assert log(m)[-1].message.startswith("obsolete\n")


@pytest.mark.parametrize(
    "title",
    ["../../../etc/passwd", "a/b\\c", "Ünïcödé ÀÉ", "漢字" * 60, "x" * 300, "\x01bell\x07", "CON"],
)
def test_hostile_titles_stay_inside_their_folder(actor, project, git, title):
    entry_upsert(
        actor=actor, project="acme", subtopic="t", fields=EntryFields(title=title, body="b")
    )
    mirror.drain()
    (path,) = git().files()
    assert path.startswith("acme/t/") and path.endswith(".md") and path.count("/") == 2
    assert ".." not in path.split("/")
    assert len(path.rsplit("/", 1)[1].encode()) <= 255
    assert maintenance.verify() == []


def test_case_only_rename_keeps_the_file(actor, project, git):
    e = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="pricing", body="x")
    ).entry
    entry_update(actor=actor, ref=e.pk, fields=EntryFields(title="PRICING"))
    mirror.drain()
    files = git().files()
    assert list(files) == ["acme/pricing.md"]
    assert parse_markdown(files["acme/pricing.md"])[0]["title"] == "PRICING"


def test_titles_with_the_same_slug_get_their_own_files(actor, project, git):
    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Pricing", body="x"))
    second = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Pricing!", body="y")
    ).entry
    mirror.drain()
    assert sorted(git().files()) == ["acme/pricing-" + second.short_id + ".md", "acme/pricing.md"]
    assert maintenance.verify() == []


def test_verify_detects_a_tampered_repository(actor, project, git, capsys):
    e = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Fact", body="Water is wet.")
    ).entry
    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Other", body="y"))
    mirror.drain()
    call_command("mirror", "verify")
    assert "matches" in capsys.readouterr().out
    m = git()
    data = m.read("acme/fact.md").replace(b"Water is wet.", b"Water is dry.")
    sig = pygit2.Signature("Mallory", "m@x")
    m.commit(
        {"acme/fact.md": data, "acme/evil.md": b"---\nid: evil\n---\n", "acme/other.md": None},
        author=sig and mirror.committer(),
        committer=mirror.committer(),
        message="tamper\n",
        when=dt.datetime.now(dt.UTC),
    )
    m.publish()
    problems = maintenance.verify()
    assert any("acme/fact.md: content differs" in p and e.short_id in p for p in problems)
    assert any(p.startswith("acme/evil.md: in the mirror but not") for p in problems)
    assert any("acme/other.md: entry" in p and "missing" in p for p in problems)
    with pytest.raises(CommandError, match="differs from the database in 3 place"):
        call_command("mirror", "verify")


def test_rebuild_recreates_the_repository_from_history(actor, project, git, mirror_path, capsys):
    e = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="A", body="1")).entry
    entry_update(actor=actor, ref=e.pk, fields=EntryFields(body="2"))
    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="B", body="3"))
    mirror.drain()
    before = [c.sha for c in log(git())]
    import shutil

    shutil.rmtree(mirror_path)  # the repository is lost
    call_command("mirror", "rebuild")
    after = log(git())
    # Same revisions, same times, same authors: the same commits.
    assert [c.sha for c in after] == before
    assert (
        list(HistoricalEntry.objects.order_by("history_id").values_list("git_commit", flat=True))
        == before
    )
    assert maintenance.verify() == []


def test_an_interruption_after_publishing_is_repaired_without_duplicates(actor, project, git):
    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="A", body="1"))
    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="B", body="2"))
    m = mirror.open_mirror()
    names = mirror.Names()
    for row in mirror.pending().order_by("history_id"):
        mirror.commit_revision(m, row, names, {})
    m.publish()  # ...and the worker dies before recording the hashes
    assert mirror.pending().count() == 2
    result = mirror.drain()
    assert (result.reconciled, result.committed) == (2, 0)
    commits = log(git())
    assert len(commits) == 2
    assert [c.sha for c in commits] == list(
        HistoricalEntry.objects.order_by("history_id").values_list("git_commit", flat=True)
    )


def test_drain_waits_its_turn_when_another_holds_the_lock(actor, project):
    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="A", body="1"))
    import psycopg

    s = connection.settings_dict
    other = psycopg.connect(
        dbname=s["NAME"], user=s["USER"], host=s["HOST"], port=s["PORT"], autocommit=True
    )
    try:
        other.execute("SELECT pg_advisory_lock(%s)", [mirror.LOCK_KEY])
        result = mirror.drain()
        assert result.locked_out and result.committed == 0
        other.execute("SELECT pg_advisory_unlock(%s)", [mirror.LOCK_KEY])
        assert mirror.drain().committed == 1
    finally:
        other.close()


def test_a_revision_written_as_a_drain_finishes_is_committed_before_it_returns(
    actor, project, git, monkeypatch
):
    """A write whose own drain found the lock taken relies on the drain holding it to look again
    once it lets go. Here the write lands after the drain's last batch, while it commits the
    projects manifest: the drain must commit it too, not leave it for the next sweep."""
    draining = importlib.import_module("history.mirror.drain")  # the package exports drain()

    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="A", body="1"))
    real, written = draining.sync_manifest, []

    def manifest_and_a_write_meanwhile(m):
        if not written:
            written.append(
                entry_upsert(actor=actor, project="acme", fields=EntryFields(title="B", body="2"))
            )
        return real(m)

    monkeypatch.setattr(draining, "sync_manifest", manifest_and_a_write_meanwhile)
    result = mirror.drain()
    assert written and not mirror.pending().exists()
    assert result.committed == 2
    assert [c.revision for c in log(git())] == list(
        HistoricalEntry.objects.order_by("history_id").values_list("history_id", flat=True)
    )


def test_status_reports_pending_and_lag(actor, project, capsys):
    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="A", body="1"))
    info = maintenance.status()
    assert info["pending"] == 1 and info["last_commit"] is None and info["lag_seconds"] >= 0
    mirror.drain()
    call_command("mirror", "status")
    out = capsys.readouterr().out
    assert "pending:        0" in out
    assert "last commit:    " in out and "revision" in out


def test_push_copies_the_branch_to_a_remote_and_failures_do_not_raise(
    actor, project, settings, tmp_path, git
):
    remote = pygit2.init_repository(str(tmp_path / "remote.git"), bare=True)
    settings.CAIRN_MIRROR_PUSH_URL = str(tmp_path / "remote.git")
    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="A", body="1"))
    mirror.drain()
    assert str(remote.references["refs/heads/main"].target) == str(git().head().id)
    later = tmp_path / "later.git"
    settings.CAIRN_MIRROR_PUSH_URL = str(later)  # not there yet: the push fails
    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="B", body="2"))
    assert mirror.drain().committed == 1  # the push failed, the drain did not
    assert not mirror.push()  # and still fails
    copy = pygit2.init_repository(str(later), bare=True)  # the remote comes back
    assert mirror.drain().committed == 0  # nothing to commit, but the sweep pushes
    assert str(copy.references["refs/heads/main"].target) == str(git().head().id)
    assert not mirror.push()  # up to date: no network round trip


@pytest.mark.django_db(transaction=True)
def test_a_drain_running_while_writes_continue_commits_everything_once(broker, user, project):
    actor = Actor.for_user(user)
    stop = threading.Event()
    errors = []

    def drainer():
        try:
            while not stop.is_set():
                mirror.drain(batch_size=7)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=drainer)
    thread.start()
    try:
        for i in range(60):
            e = entry_upsert(
                actor=actor,
                project="acme",
                subtopic=f"s{i % 3}",
                fields=EntryFields(title=f"T{i % 20}", body=f"body {i}"),
            ).entry
            if i % 7 == 0:
                entry_move(actor=actor, ref=e.pk, subtopic="moved")
    finally:
        stop.set()
        thread.join()
    assert not errors
    mirror.drain()
    revs = list(
        HistoricalEntry.objects.order_by("history_id").values_list("history_id", "git_commit")
    )
    commits = log(mirror.open_mirror())
    assert sorted(c.revision for c in commits) == [r for r, _ in revs]
    assert len({c.sha for c in commits}) == len(revs)
    assert {c.revision: c.sha for c in commits} == dict(revs)
    assert maintenance.verify() == []


def test_a_drain_says_when_it_committed_the_projects_manifest(actor, project, git):
    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="First", body="x"))
    assert mirror.drain().manifest  # a new project: the manifest names it now
    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Second", body="y"))
    assert not mirror.drain().manifest  # nothing about the projects changed


def test_a_batch_loads_its_revisions_in_one_query(actor, project, git):
    """Row by row is only the fallback when one revision cannot be loaded (test_parking.py):
    a batch of good ones costs one query, not one per revision."""
    import re

    from django.test.utils import CaptureQueriesContext

    for title in ("One", "Two", "Three", "Four"):
        entry_upsert(actor=actor, project="acme", fields=EntryFields(title=title, body="x"))
    with CaptureQueriesContext(connection) as queries:
        assert mirror.drain().committed == 4
    table = HistoricalEntry._meta.db_table
    loads = [
        q["sql"]
        for q in queries
        if f'FROM "{table}"' in q["sql"]
        and re.search(r'"history_id" (IN \(|= )', q["sql"].partition(" WHERE ")[2])
    ]
    assert len(loads) == 1, loads


def test_drains_one_after_another_reconcile_nothing_and_time_themselves(actor, project, git):
    """After the first drain the tip is a revision already recorded (the manifest did not
    change): the next drain's repair walk stops there and counts nothing as repaired."""
    entry = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="A", body="1"))
    mirror.drain()
    for body in ("2", "3"):
        entry_update(actor=actor, ref=entry.entry.pk, fields=EntryFields(body=body))
        result = mirror.drain()
        assert (result.committed, result.reconciled) == (1, 0)
        assert 0 <= result.seconds < 60


def test_a_new_project_without_entries_reaches_the_manifest_on_the_next_drain(actor, project, git):
    from history.mirror.manifest import MANIFEST_PATH
    from tests.factories import ProjectFactory

    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="A", body="1"))
    mirror.drain()
    ProjectFactory(slug="empty-yet", name="Empty yet")
    result = mirror.drain()  # no revision pending: the manifest alone
    assert result.manifest and result.committed == 0
    assert b"empty-yet" in git().read(MANIFEST_PATH)
    assert not mirror.drain().manifest  # current now: nothing to commit


def test_one_drain_commits_every_batch_however_many(actor, project, git, settings):
    settings.CAIRN_MIRROR_BATCH_SIZE = 1
    for title in ("One", "Two", "Three", "Four", "Five", "Six"):
        entry_upsert(actor=actor, project="acme", fields=EntryFields(title=title, body="x"))
    assert mirror.drain().committed == 6
    assert mirror.pending().count() == 0


def test_a_drain_reads_pending_revisions_a_batch_at_a_time(actor, project, git, settings):
    from django.test.utils import CaptureQueriesContext

    settings.CAIRN_MIRROR_BATCH_SIZE = 2
    for title in ("One", "Two", "Three"):
        entry_upsert(actor=actor, project="acme", fields=EntryFields(title=title, body="x"))
    with CaptureQueriesContext(connection) as queries:
        assert mirror.drain().committed == 3
    table = HistoricalEntry._meta.db_table
    batches = [q["sql"] for q in queries if f'FROM "{table}"' in q["sql"] and "LIMIT 2" in q["sql"]]
    assert len(batches) >= 2, "each batch reads at most CAIRN_MIRROR_BATCH_SIZE revisions"
