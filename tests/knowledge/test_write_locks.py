"""The writes' lock, a queryset compiled once per shape of actor and reference, finds the entry
entry_lookup finds for every form of reference (knowledge.selectors.entries.entry_ref_q is the
one rule both are built from, with values or with stand-ins), says whether the actor may write
it, and loads it as the ORM does."""

from __future__ import annotations

import pytest
from django.db import transaction

from knowledge.actors import Actor
from knowledge.errors import Forbidden, NotFound
from knowledge.models import Entry
from knowledge.selectors import entry_lookup, visible_entries
from knowledge.services import EntryFields, entry_upsert
from knowledge.services._kernel import lock_by_identity, lock_entry

pytestmark = pytest.mark.django_db


def _write(actor, title: str, subtopic: str | None = None) -> Entry:
    fields = EntryFields(title=title, body=f"{title}.\n", metadata={"about": title})
    return entry_upsert(actor=actor, project="acme", subtopic=subtopic, fields=fields).entry


@pytest.fixture
def entries(actor, project):
    made = {
        "root": _write(actor, "Deploy notes"),
        "deep": _write(actor, "Runbook", "infra/prod"),
        "titled": _write(actor, "alpha-beta"),  # its title is the other's slug
        "slugged": _write(actor, "Alpha Beta"),
        "digits": _write(actor, "Digits"),
    }
    # A short id made of digits that is also another entry's id: the id wins.
    Entry.objects.filter(pk=made["digits"].pk).update(short_id=str(made["root"].pk))
    return made


def _refs(made: dict) -> list[str]:
    refs = [str(e.pk) for e in made.values()] + [e.short_id for e in made.values()]
    return [
        *refs,
        made["deep"].short_id.upper(),
        "acme/Deploy notes",
        "acme/DEPLOY NOTES",
        "acme/deploy-notes",
        "memory://acme/infra/prod/runbook",
        "Memory://ACME/infra/prod/Runbook/",
        "acme/infra/prod/nothing",
        "acme/runbook",  # not at the root
        "acme/alpha-beta",
        "acme/Alpha Beta",
        "elsewhere/Deploy notes",
        "99999999999999999999",
        "nope",
    ]


def test_the_lock_finds_what_the_lookup_finds(actor, entries):
    for ref in _refs(entries):
        expected = entry_lookup(visible_entries(actor), ref)
        with transaction.atomic():
            try:
                got = lock_entry(actor, ref)
            except NotFound:
                got = None
        assert (got and got.pk) == (expected and expected.pk), ref
        if got is not None:
            assert (got.project.slug, got.path, got.metadata) == (
                expected.project.slug, expected.path, expected.metadata,
            ), ref  # fmt: skip


def test_the_lock_says_who_may_write_each_time(actor, entries, user, project):
    """One compiled shape, two readers: the editor may write, a viewer of the same project only
    reads; the role is decided per call, never kept with the statement."""
    from knowledge.models import Membership, Role
    from tests.factories import UserFactory

    viewer = UserFactory(username="viewer")
    Membership.objects.create(project=project, user=viewer, role=Role.VIEWER)
    ref = entries["deep"].short_id
    for who, allowed in ((actor, True), (Actor.for_user(viewer), False), (actor, True)):
        with transaction.atomic():
            if allowed:
                assert lock_entry(who, ref).pk == entries["deep"].pk
            else:
                with pytest.raises(Forbidden, match="may read entry"):
                    lock_entry(who, ref)


def test_the_identity_lock_loads_the_entry_as_the_orm_does(actor, entries):
    deep = entries["deep"]
    with transaction.atomic():
        got = lock_by_identity(deep.project, deep.subtopic, "  RUNBOOK ")
        assert lock_by_identity(deep.project, None, "Runbook") is None
    expected = Entry.objects.get(pk=deep.pk)
    for field in Entry._meta.concrete_fields:
        if field.attname != "search_vector":
            assert getattr(got, field.attname) == getattr(expected, field.attname), field.name
    assert "search_vector" in got.get_deferred_fields()


def test_an_old_address_locks_the_entry_at_its_new_place(actor, entries, django_assert_num_queries):
    from knowledge.services import entry_move

    moved = entries["root"]
    entry_move(actor=actor, ref=moved.pk, subtopic="archive")
    with transaction.atomic():
        got = lock_entry(actor, "acme/Deploy notes")
        assert got.pk == moved.pk
        assert "search_vector" in got.get_deferred_fields()
        with django_assert_num_queries(0):  # its project and subtopic came with it
            assert (got.project.slug, got.subtopic.path) == ("acme", "archive")
    with transaction.atomic(), pytest.raises(NotFound):
        lock_entry(actor, "acme/never was here")


def test_who_is_refused_first_and_why(actor, read_only_actor, entries):
    """A caller not signed in is told to sign in, whatever it names; a signed-in one is told
    what it cannot find before what it may not do."""
    from django.contrib.auth.models import AnonymousUser

    nobody = Actor(user=AnonymousUser())
    for ref in ("nope", entries["deep"].short_id):
        with transaction.atomic(), pytest.raises(Forbidden, match="Sign in"):
            lock_entry(nobody, ref)
    with transaction.atomic(), pytest.raises(NotFound):
        lock_entry(read_only_actor, "nope")
    with transaction.atomic(), pytest.raises(Forbidden, match="read-only"):
        lock_entry(read_only_actor, entries["deep"].short_id)


def test_the_identity_lock_finds_a_title_only_in_its_own_project(actor, entries, user):
    from knowledge.models import Membership, Role
    from tests.factories import ProjectFactory

    other = ProjectFactory(slug="other")
    Membership.objects.create(project=other, user=user, role=Role.EDITOR)
    with transaction.atomic():
        assert lock_by_identity(other, None, "Deploy notes") is None
        assert lock_by_identity(entries["root"].project, None, "Deploy notes").pk == (
            entries["root"].pk
        )
