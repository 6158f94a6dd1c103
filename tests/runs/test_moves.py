"""Moving entries between projects, as a person promotes a note from a personal project to the
team's: its revisions, sources, links and author stay, its old address leads to it, readers of
only the old project no longer see it, leaving a members-only project needs its maintainer, and
a whole subtopic can follow."""

from __future__ import annotations

import pytest

from knowledge.actors import Actor
from knowledge.errors import Forbidden, NotFound
from knowledge.models import Entry, HistoricalEntry, Membership, Relation, Role
from knowledge.reads.moves import move_notice
from knowledge.selectors import entry_get, entry_revisions
from knowledge.services import (
    EntryFields,
    ProjectFields,
    entry_move,
    entry_update,
    entry_upsert,
    project_create,
    subtopic_move,
)
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def places():
    """alice's restricted `alice-notes` and the confidential `team`, where alice and bob edit;
    carol may read only alice-notes, dave only team."""
    alice, bob, carol, dave = (UserFactory(username=n) for n in ("alice", "bob", "carol", "dave"))
    me = Actor.for_user(alice)
    notes = project_create(
        actor=me, slug="alice-notes", fields=ProjectFields(name="Alice", sensitivity="restricted")
    )
    team = project_create(
        actor=me, slug="team", fields=ProjectFields(name="Team", sensitivity="confidential")
    )
    Membership.objects.update_or_create(project=notes, user=alice, defaults={"role": "maintainer"})
    Membership.objects.create(project=notes, user=carol, role=Role.VIEWER)
    Membership.objects.create(project=notes, user=bob, role=Role.EDITOR)
    Membership.objects.update_or_create(project=team, user=alice, defaults={"role": "maintainer"})
    Membership.objects.create(project=team, user=bob, role=Role.EDITOR)
    Membership.objects.create(project=team, user=dave, role=Role.VIEWER)
    return {
        "alice": me,
        "bob": Actor.for_user(bob),
        "carol": Actor.for_user(carol),
        "dave": Actor.for_user(dave),
    }


def note(actor, title, body, subtopic="ideas", **more):
    return entry_upsert(
        actor=actor,
        project="alice-notes",
        subtopic=subtopic,
        fields=EntryFields(title=title, body=body),
        **more,
    ).entry


def test_a_moved_entry_keeps_its_history_sources_and_links_and_answers_at_its_old_address(
    places,
):
    alice = places["alice"]
    other = note(alice, "Caching", "- relates_to [[Pricing]]\n")
    entry = note(
        alice,
        "Pricing",
        "v1\n\n- relates_to [[Caching]]\n",
        sources=[{"kind": "ticket", "external_id": "T-1", "url": "https://t.example/1"}],
    )
    for n in range(2, 6):
        entry_update(
            actor=alice,
            ref=entry.pk,
            fields=EntryFields(body=f"v{n}\n\n- relates_to [[Caching]]\n"),
        )
    old_address = entry.permalink  # memory://alice-notes/ideas/pricing
    entry_move(actor=alice, ref=entry.pk, project="team", subtopic="pricing", reason="promote")

    moved = Entry.objects.get(pk=entry.pk)
    assert (moved.project.slug, moved.subtopic.path, moved.short_id) == (
        "team", "pricing", entry.short_id,
    )  # fmt: skip
    assert moved.generated_by == "human:alice" and moved.body.startswith("v5")
    assert [s.external_id for s in moved.sources.all()] == ["T-1"]
    assert moved.sources.get().project.slug == "team"
    versions = [r.version for r in entry_revisions(alice, moved, limit=50)]
    assert versions == [6, 5, 4, 3, 2, 1]  # five revisions and the move, one more
    assert HistoricalEntry.objects.filter(id=entry.pk, history_change_reason="promote").count() == 1
    # Links both ways still point at it.
    assert Relation.objects.get(source=other, valid_to=None).target_id == entry.pk
    assert Relation.objects.get(source=moved, valid_to=None).target_id == other.pk
    # Its old address (and path) answers with the entry at its new one, for reads and writes.
    assert entry_get(alice, old_address).permalink == "memory://team/pricing/pricing"
    assert entry_get(alice, "alice-notes/ideas/Pricing").pk == entry.pk
    entry_update(actor=alice, ref=old_address, fields=EntryFields(tags=["promoted"]))
    assert Entry.objects.get(pk=entry.pk).tags == ["promoted"]
    # Carol reads only alice-notes: she no longer sees it, not even at its old address.
    with pytest.raises(NotFound):
        entry_get(places["carol"], old_address)
    with pytest.raises(NotFound):
        entry_get(places["carol"], entry.short_id)
    # Dave reads team but not alice-notes: the entry, not its revisions from before the move.
    assert [r.version for r in entry_revisions(places["dave"], moved)] == [7, 6]
    with pytest.raises(NotFound):
        entry_get(places["dave"], old_address)  # the old place is in a project hidden from him


def test_leaving_a_members_only_project_needs_its_maintainer(places):
    entry = note(places["bob"], "Draft", "text\n")
    with pytest.raises(Forbidden, match=r"needs a maintainer of alice-notes\. Ask one: alice"):
        entry_move(actor=places["bob"], ref=entry.pk, project="team", subtopic="")
    assert Entry.objects.get(pk=entry.pk).project.slug == "alice-notes"
    notice = move_notice(places["bob"], [entry.project], Entry.objects.get(pk=entry.pk).project)
    assert "stay in alice-notes" in notice
    team = entry_get(places["alice"], entry.pk).project.__class__.objects.get(slug="team")
    said = move_notice(places["bob"], [entry.project], team)
    assert "its members only (alice, bob, dave)" in said
    assert "needs its maintainer (you are not one of alice-notes)" in said


def test_a_subtopic_moves_to_another_project_with_its_entries(places):
    alice = places["alice"]
    kept = [
        note(alice, title, "x\n", subtopic=sub, sources=[{"kind": "url", "external_id": title}])
        for title, sub in (("One", "ideas"), ("Two", "ideas/deep"), ("Stay", "other"))
    ]
    moved = subtopic_move(
        actor=alice, project="alice-notes", path="ideas", to="from-alice", to_project="team",
        reason="promote the ideas",
    )  # fmt: skip
    assert moved == 2
    places_now = {e.title: e.permalink for e in Entry.objects.select_related("project", "subtopic")}
    assert places_now == {
        "One": "memory://team/from-alice/one",
        "Two": "memory://team/from-alice/deep/two",
        "Stay": "memory://alice-notes/other/stay",
    }
    assert {s.project.slug for e in kept[:2] for s in Entry.objects.get(pk=e.pk).sources.all()} == {
        "team"
    }
    assert entry_get(alice, "memory://alice-notes/ideas/deep/two").pk == kept[1].pk
    with pytest.raises(Forbidden):
        subtopic_move(
            actor=places["bob"], project="alice-notes", path="other", to="x", to_project="team",
            reason="no",
        )  # fmt: skip


def test_the_entry_page_says_who_will_read_it_then_moves_it(places):
    from django.contrib.auth import get_user_model
    from django.test import Client

    entry = note(places["alice"], "Pricing", "text\n")
    client = Client()
    client.force_login(get_user_model().objects.get(username="alice"))
    assert f"/e/{entry.short_id}/move/" in client.get(f"/e/{entry.short_id}/").content.decode()
    ask = client.get(f"/e/{entry.short_id}/move/?project=team&subtopic=pricing").content.decode()
    assert "readable by its members only (alice, bob, dave)" in ask
    done = client.post(
        f"/e/{entry.short_id}/move/",
        {"project": "team", "subtopic": "pricing", "version": 1, "reason": "promote"},
        follow=True,
    ).content.decode()
    assert "its address is now memory://team/pricing/pricing" in done
    assert Entry.objects.get(pk=entry.pk).project.slug == "team"


def test_the_admin_moves_entries_and_a_subtopic_to_another_project_after_saying_who_reads_them(
    places,
):
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.urls import reverse

    from knowledge.models import Project

    admin = get_user_model().objects.get(username="alice")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    client = Client()
    client.force_login(admin)
    two = [note(places["alice"], t, "x\n") for t in ("One", "Two")]
    note(places["alice"], "Deep", "x\n", subtopic="ideas/deep")
    team = Project.objects.get(slug="team")
    data = {"action": "move_entries", "_selected_action": [e.pk for e in two], "apply": "1",
            "project": team.pk, "subtopic": "promoted", "reason": "promote"}  # fmt: skip
    data |= {f"version_{e.pk}": e.version for e in two}
    url = reverse("admin:knowledge_entry_changelist")
    asked = client.post(url, data).content.decode()
    assert "readable by its members only (alice, bob, dave)" in asked and "I understand" in asked
    assert Entry.objects.get(pk=two[0].pk).project.slug == "alice-notes"
    done = client.post(url, data | {"understood": "on"}, follow=True).content.decode()
    assert "Moved 2 entries" in done
    assert {Entry.objects.get(pk=e.pk).permalink for e in two} == {
        "memory://team/promoted/one", "memory://team/promoted/two",
    }  # fmt: skip
    notes_project = Project.objects.get(slug="alice-notes")
    moved = client.post(
        reverse("admin:knowledge_subtopic_move"),
        {
            "project": notes_project.pk,
            "path": "ideas",
            "to_project": team.pk,
            "to": "ideas",
            "reason": "promote the rest",
        },
        follow=True,
    ).content.decode()
    assert "Moved ideas to team/ideas: 1 entries" in moved
    assert Entry.objects.get(title="Deep").permalink == "memory://team/ideas/deep/deep"
