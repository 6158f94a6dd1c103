"""A mirror restore applies exactly the head its plan showed (issue 44): a mirror that moves
while the operator reads the plan is refused with nothing written, and one that moves while the
restore runs does not drag the installation's mirror past what the database holds."""

from __future__ import annotations

import datetime as dt
import io
import shutil

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from history import mirror, mirror_restore
from history.mirror.git import Mirror, Person
from history.mirror.queue import open_mirror
from knowledge.actors import Actor
from knowledge.models import Entry
from knowledge.services import EntryFields, ProjectFields, entry_upsert, project_create
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def drained():
    alice = UserFactory(username="alice")
    actor = Actor.for_user(alice)
    project_create(actor=actor, slug="notes", fields=ProjectFields(name="Notes"))
    entry_upsert(actor=actor, project="notes", fields=EntryFields(title="First", body="x"))
    assert mirror.drain().parked == 0
    return actor


class ReadsThenAnswers(io.StringIO):
    """The operator at a terminal, reading the plan while the worker drains a new write."""

    def __init__(self, actor):
        super().__init__()
        self.actor = actor

    def isatty(self) -> bool:
        return True

    def readline(self, *args) -> str:
        entry_upsert(
            actor=self.actor, project="notes", fields=EntryFields(title="Meanwhile", body="y")
        )
        assert mirror.drain().committed == 1
        return "y\n"


def test_a_mirror_that_moves_while_the_plan_is_read_is_refused(drained, capsys):
    planned = str(open_mirror().head().id)
    source = str(open_mirror().path)
    with pytest.raises(CommandError, match="moved since its plan was shown") as refused:
        call_command(
            "mirror", "restore", "--from", source, "--force", stdin=ReadsThenAnswers(drained)
        )
    assert f"Up to its head, commit {planned} (" in capsys.readouterr().out
    moved = str(open_mirror().head().id)
    assert moved != planned
    assert f"its head is now {moved}, the plan showed {planned}" in str(refused.value)
    assert "Nothing was restored. Run mirror restore again" in str(refused.value)
    assert Entry.objects.filter(title="Meanwhile").exists()  # nothing replaced


class MovesTheSource:
    """A progress bar whose first tick lands a commit in the source, as a push would."""

    def __init__(self, path):
        self.path, self.moved = path, ""

    def reset(self, total=None):
        pass

    def update(self, n=1):
        if self.moved:
            return
        source = Mirror(self.path, branch=open_mirror().ref.rsplit("/", 1)[-1])
        who = Person("pusher", "pusher@example.org")
        now = dt.datetime.now(dt.UTC)
        source.commit(
            {"stray.txt": b"pushed"}, author=who, committer=who, message="stray", when=now
        )
        source.publish()
        self.moved = str(source.head().id)


def test_the_installations_mirror_stays_at_the_head_that_was_restored(drained, tmp_path):
    source = tmp_path / "source.git"
    shutil.copytree(open_mirror().path, source)
    progress = MovesTheSource(source)
    with mirror_restore.prepared(source=str(source), force=True) as plan:
        report, problems = mirror_restore.apply(plan, force=True, progress=progress)
    assert progress.moved and progress.moved != plan.head  # the source did move
    assert str(open_mirror().head().id) == plan.head
    assert problems == [] and report.entries == 1
