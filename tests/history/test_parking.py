"""The mirror never stops for one revision: a revision that cannot be loaded, rendered or
committed is parked with its error, the drain goes on, and it is committed in order later."""

import importlib
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from history import maintenance, mirror
from history.models import ParkedRevision
from knowledge.models import Entry, HistoricalEntry
from knowledge.services import EntryFields, entry_update, entry_upsert

pytestmark = pytest.mark.django_db


def _deep_json(depth: int) -> str:
    return '{"a": ' * depth + "{}" + "}" * depth


def _poison(history_id: int, depth: int) -> None:
    """Metadata as deep as rows saved before the limits existed (the services refuse it now)."""
    with connection.cursor() as cur:
        cur.execute(
            f"UPDATE {HistoricalEntry._meta.db_table} SET metadata = %s::jsonb "
            "WHERE history_id = %s",
            [_deep_json(depth), history_id],
        )


def _latest(entry) -> HistoricalEntry:
    return HistoricalEntry.objects.filter(id=entry.pk).order_by("-history_id").first()


@pytest.mark.parametrize("depth", [600, 5000], ids=["unrenderable", "undecodable"])
def test_a_bad_revision_is_parked_and_the_drain_goes_on(actor, project, git, depth):
    bad = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Bad", body="b")).entry
    bad_rev = _latest(bad)
    _poison(bad_rev.history_id, depth)
    good = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Good", body="g")
    ).entry

    result = mirror.drain()

    assert result.parked == 1 and result.committed == 1
    parked = ParkedRevision.objects.get()
    assert parked.revision_id == bad_rev.history_id and parked.entry_id == bad.pk
    assert "RecursionError" in parked.error
    assert _latest(good).git_commit
    assert mirror.pending().count() == 0  # nothing waits behind it
    assert mirror.drain().parked == 0  # a parked revision is not retried on every drain
    info = maintenance.status()
    assert [p["revision"] for p in info["parked"]] == [bad_rev.history_id]
    assert any(f"revision {bad_rev.history_id}" in line for line in maintenance.parked_lines())


@pytest.mark.parametrize("depth", [600, 5000], ids=["unrenderable", "undecodable"])
def test_the_entrys_next_revision_commits_the_parked_one_first(actor, project, git, depth):
    bad = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Bad", body="b")).entry
    bad_rev = _latest(bad)
    _poison(bad_rev.history_id, depth)
    mirror.drain()
    assert ParkedRevision.objects.count() == 1

    entry_update(actor=actor, ref=bad.pk, fields=EntryFields(body="fixed", metadata={"ok": True}))
    result = mirror.drain()

    assert result.committed == 2 and result.parked == 0
    assert not ParkedRevision.objects.exists()
    revs = list(
        HistoricalEntry.objects.order_by("history_id").values_list("history_id", "git_commit")
    )
    assert all(sha for _, sha in revs)
    commits = list(reversed(list(git().walk())))
    assert [c.revision for c in commits] == [history_id for history_id, _ in revs]  # in order
    assert "could not be rendered" in commits[0].message
    assert "RecursionError" in commits[0].message  # why, loaded or not
    assert maintenance.verify() == []


def test_a_parked_revision_repaired_since_is_committed_whole_by_the_next_one(actor, project, git):
    bad = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Bad", body="b")).entry
    bad_rev = _latest(bad)
    _poison(bad_rev.history_id, 600)
    mirror.drain()
    HistoricalEntry.objects.filter(history_id=bad_rev.history_id).update(metadata={})

    entry_update(actor=actor, ref=bad.pk, fields=EntryFields(body="fixed"))
    assert mirror.drain().committed == 2

    first = git().repo[_latest(bad).git_commit].parents[0]
    assert first.id == git().repo[HistoricalEntry.objects.get(history_id=bad_rev.history_id)
                                  .git_commit].id  # fmt: skip
    assert "could not be rendered" not in first.message  # its content, not a note
    assert maintenance.verify() == []


def test_two_bad_revisions_in_one_batch_keep_their_order(actor, project, git):
    bad = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Bad", body="1")).entry
    first = _latest(bad)
    entry_update(actor=actor, ref=bad.pk, fields=EntryFields(body="2"))
    _poison(first.history_id, 600)
    result = mirror.drain()
    assert result.committed == 2  # the second revision flushed the first as a note
    assert not ParkedRevision.objects.exists()
    assert maintenance.verify() == []
    note = git().repo[HistoricalEntry.objects.get(history_id=first.history_id).git_commit]
    assert "could not be rendered" in note.message and "RecursionError" in note.message


def test_a_revision_that_cannot_be_committed_is_parked_and_the_batch_redone_without_it(
    actor, project, git, monkeypatch
):
    """No data known reaches this (what fails, fails in rendering, before the repository is
    touched), so the failure is injected: git refuses one revision's commit. It is parked with
    the error, the batch's commits so far are discarded and the batch is redone without it;
    the revisions that fail to render before and after it are parked and counted too."""
    draining = importlib.import_module("history.mirror.drain")  # the module, not its function

    def revision(title: str) -> HistoricalEntry:
        made = entry_upsert(actor=actor, project="acme", fields=EntryFields(title=title, body="x"))
        return _latest(made.entry)

    titles = ("A", "Deep", "Refused", "Deeper", "Z")
    first, deep, refused, deeper, last = (revision(title) for title in titles)
    for unrenderable in (deep, deeper):
        _poison(unrenderable.history_id, 600)
    commit = draining.commit_prepared

    def refusing(mirror_, row, names, prepared):
        if row.history_id == refused.history_id:
            raise ValueError("git says no")
        return commit(mirror_, row, names, prepared)

    monkeypatch.setattr(draining, "commit_prepared", refusing)
    result = mirror.drain()

    assert (result.committed, result.parked) == (2, 3)  # each parked revision counted once
    parked = {p.revision_id: p for p in ParkedRevision.objects.all()}
    assert parked.keys() == {deep.history_id, refused.history_id, deeper.history_id}
    assert parked[refused.history_id].entry_id == refused.id
    assert parked[refused.history_id].error == "cannot be committed: ValueError: git says no"
    committed = [c.revision for c in reversed(list(git().walk())) if c.revision is not None]
    assert committed == [first.history_id, last.history_id]  # once each, in order
    assert mirror.pending().count() == 0


def test_a_revision_parked_again_keeps_its_latest_error_and_counts_the_attempts(actor, project):
    entry = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="E", body="b")).entry
    revision = _latest(entry).history_id
    mirror.queue.park(revision, entry.pk, "first")
    an_hour_ago = timezone.now() - timedelta(hours=1)
    ParkedRevision.objects.update(last_tried_at=an_hour_ago)  # tried an hour ago, say
    first = ParkedRevision.objects.get()
    mirror.queue.park(revision, entry.pk, "second")
    again = ParkedRevision.objects.get()
    assert (again.error, again.attempts) == ("second", first.attempts + 1)
    assert again.last_tried_at > an_hour_ago  # the admin's "last tried" is this attempt


def test_retry_commits_a_repaired_revision(actor, project, git, capsys):
    bad = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Bad", body="b")).entry
    bad_rev = _latest(bad)
    _poison(bad_rev.history_id, 600)
    mirror.drain()
    call_command("mirror", "status")
    assert "parked:         1" in capsys.readouterr().out
    with pytest.raises(Exception, match="differs"):
        call_command("mirror", "verify")
    assert "is parked" in capsys.readouterr().out  # verify explains it

    HistoricalEntry.objects.filter(history_id=bad_rev.history_id).update(metadata={})
    Entry.objects.filter(pk=bad.pk).update(metadata={})
    call_command("mirror", "retry")

    assert "Put 1 parked revision(s) back" in capsys.readouterr().out
    assert not ParkedRevision.objects.exists()
    commit = git().repo[_latest(bad).git_commit]
    assert "could not be rendered" not in commit.message  # the real content this time
    call_command("mirror", "verify")


def test_verify_names_a_current_entry_that_cannot_be_rendered(actor, project, git):
    bad = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Bad", body="b")).entry
    with connection.cursor() as cur:
        cur.execute(
            f"UPDATE {Entry._meta.db_table} SET metadata = %s::jsonb WHERE id = %s",
            [_deep_json(600), bad.pk],
        )
    mirror.drain()
    assert any("cannot be rendered" in line for line in maintenance.verify())


def test_rebuild_writes_a_note_for_a_bad_revision_and_clears_parking(actor, project, git):
    bad = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Bad", body="b")).entry
    _poison(_latest(bad).history_id, 600)
    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Good", body="g"))
    mirror.drain()
    assert maintenance.rebuild() == 2
    assert not ParkedRevision.objects.exists()
    assert mirror.pending().count() == 0


def test_the_admin_lists_parked_revisions_and_retries_them(client, actor, project, git):
    from django.urls import reverse

    from tests.factories import UserFactory

    bad = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Bad", body="b")).entry
    bad_rev = _latest(bad)
    _poison(bad_rev.history_id, 600)
    mirror.drain()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    url = reverse("admin:history_parkedrevision_changelist")
    page = client.get(url)
    assert page.status_code == 200
    assert "RecursionError" in page.content.decode()
    parked = ParkedRevision.objects.get()
    response = client.post(
        url, {"action": "retry_selected", "_selected_action": [parked.pk]}, follow=True
    )
    assert "back in line" in response.content.decode()
    assert not ParkedRevision.objects.exists()
    assert mirror.pending().filter(history_id=bad_rev.history_id).exists()


def test_every_revision_that_cannot_be_loaded_is_parked_and_counted(actor, project, git):
    revisions = []
    for title in ("Bad", "Worse", "Good"):
        made = entry_upsert(actor=actor, project="acme", fields=EntryFields(title=title, body="x"))
        revisions.append(_latest(made.entry))
    for undecodable in revisions[:2]:
        _poison(undecodable.history_id, 5000)
    result = mirror.drain()
    assert (result.committed, result.parked) == (1, 2)
    assert set(ParkedRevision.objects.values_list("revision_id", flat=True)) == {
        r.history_id for r in revisions[:2]
    }
