"""A write's report looks things up for its writer (lookalikes, link targets, blame): each lookup
sees only the projects the writer may read (knowledge.access.project_ids_sql)."""

import pytest

from knowledge.actors import Actor
from knowledge.models import Sensitivity
from knowledge.reads.write_lookups import blame_revisions, report_lookups
from knowledge.services import EntryFields, ProjectFields, entry_upsert, project_create
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

BODY = "# Deploy notes\n\n- restart the cache before the deploy\n"


@pytest.fixture
def root(db):
    return Actor.for_user(UserFactory(username="root", is_superuser=True, is_staff=True))


@pytest.fixture
def secret(root):
    """An entry in a restricted project alice is no member of."""
    restricted = ProjectFields(sensitivity=Sensitivity.RESTRICTED)
    project_create(actor=root, slug="vault", fields=restricted)
    return entry_upsert(
        actor=root, project="vault", fields=EntryFields(title="Deploy notes", body=BODY)
    ).entry


def test_a_new_entrys_same_body_entries_come_only_from_projects_its_writer_can_read(
    actor, project, root, secret
):
    mine = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Deploy notes", body=BODY)
    ).entry
    hers = report_lookups(actor, mine, new=True)
    assert secret.pk not in {n.id for n in hers.same_body}
    # The same lookup for a reader of both projects finds it: the filter is what hides it.
    roots = report_lookups(root, mine, new=True)
    assert secret.pk in {n.id for n in roots.same_body}


def test_a_link_target_in_a_project_the_writer_cannot_read_is_not_named(
    actor, project, root, secret
):
    mine = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Mine", body="x\n")
    ).entry
    assert report_lookups(actor, mine, targets={secret.pk}).targets == {}
    assert set(report_lookups(root, mine, targets={secret.pk}).targets) == {secret.pk}


def test_blame_reads_no_revision_of_an_entry_the_writer_cannot_read(actor, project, root, secret):
    assert blame_revisions(actor, secret.pk, newest=secret.version, oldest=0) == []
    seen = blame_revisions(root, secret.pk, newest=secret.version, oldest=0)
    assert [r.version for r in seen] == [secret.version]
    assert seen[0].body == BODY
