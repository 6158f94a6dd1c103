"""What the admin tests share: a mirror of each test's own, a staff member signed in to the admin,
and four notes in acme (in ops, ops/storage, people and at the top), embedded and indexed so
that search ranks them."""

from __future__ import annotations

import pytest

from knowledge.services import entries_embed, lexeme_stats_refresh
from tests.factories import EntryFactory


@pytest.fixture(autouse=True)
def mirror_path(settings, tmp_path):
    """The revision tests drain the mirror (mirror.drain()): each into a mirror of its own."""
    settings.CAIRN_MIRROR_PATH = str(tmp_path / "mirror.git")
    settings.CAIRN_MIRROR_PUSH_URL = ""
    return tmp_path / "mirror.git"


@pytest.fixture
def admin_client(client, staff):
    client.force_login(staff)
    return client


@pytest.fixture
def notes(project):
    entries = {
        e.title: e
        for e in (
            EntryFactory(project=project, subtopic="ops", title="Deployment checklist",
                         body="Run migrations, then restart the workers and watch the error rate.",
                         tags=["deploy"]),
            EntryFactory(project=project, subtopic="ops/storage", title="Database backups",
                         body="Nightly pg_dump to object storage; restore tested every month."),
            EntryFactory(project=project, subtopic="people", title="Holiday plans",
                         body="Caroline is travelling to Sweden in July to see the midnight sun."),
            EntryFactory(project=project, title="Team charter", body="How we work together."),
        )
    }  # fmt: skip
    entries_embed(entry_ids=[e.pk for e in entries.values()])
    lexeme_stats_refresh()
    return entries
