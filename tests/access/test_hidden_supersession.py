"""A supersession link to an entry the reader may not see shows neither its title nor its id
(issue 32): "every read path is filtered by what the caller may see".

A correction is written where the entry it corrects lives, but either can then be moved into a
project the reader cannot see (or a token can be narrowed away from it). The reader still sees
its own entry is superseded, or supersedes something, as "an entry you cannot see": on the
page, in the admin, in the MCP answers (text and structured content) and in the REST API.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission
from django.test import Client

from knowledge.actors import Actor
from knowledge.models import Membership, Role, Sensitivity
from knowledge.services import (
    EntryFields,
    ProjectFields,
    entry_correct,
    entry_move,
    entry_update,
    entry_upsert,
    project_create,
)
from knowledge.services.tokens import token_create
from mcp_api.tools import answer
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

UNSEEN = "an entry you cannot see"
HIDDEN_TITLE = "Zebracorn pricing"  # the successor, moved to the vault
HIDDEN_ORIGIN = "Quokka origin"  # the vault entry a visible one corrects


class World:
    """`old` (project open) is superseded by `new` (moved to the restricted vault);
    `successor` (moved to open) supersedes `origin` (still in the vault). Alice is a staff
    editor of open only; root sees everything."""


@pytest.fixture
def world(db) -> World:
    w = World()
    w.root = UserFactory(username="root", is_superuser=True, is_staff=True)
    owner = Actor.for_user(w.root)
    project_create(
        actor=owner,
        slug="open",
        fields=ProjectFields(name="Open", sensitivity=Sensitivity.RESTRICTED),
    )
    project_create(
        actor=owner,
        slug="vault",
        fields=ProjectFields(name="Vault", sensitivity=Sensitivity.RESTRICTED),
    )
    w.alice = UserFactory(username="alice", is_staff=True)
    staff = Group.objects.create(name="staff")
    staff.permissions.set(Permission.objects.filter(content_type__app_label="knowledge"))
    w.alice.groups.add(staff)
    Membership.objects.create(project_id=_pk("open"), user=w.alice, role=Role.EDITOR)

    first = entry_upsert(actor=owner, project="open", fields=EntryFields(title="Pricing", body="1"))
    corrected = entry_correct(
        actor=owner, ref=first.entry.pk, body="2", reason="wrong", title=HIDDEN_TITLE
    )
    w.new, w.old = corrected.entry, corrected.superseded
    entry_move(actor=owner, ref=w.new.pk, project="vault", subtopic=None)

    origin = entry_upsert(
        actor=owner, project="vault", fields=EntryFields(title=HIDDEN_ORIGIN, body="1")
    ).entry
    corrected = entry_correct(
        actor=owner, ref=origin.pk, body="2", reason="wrong", title="Public successor"
    )
    w.successor, w.origin = corrected.entry, corrected.superseded
    entry_move(actor=owner, ref=w.successor.pk, project="open", subtopic=None)
    for entry in (w.new, w.old, w.successor, w.origin):
        entry.refresh_from_db()
    return w


def _pk(slug: str) -> int:
    from knowledge.models import Project

    return Project.objects.get(slug=slug).pk


def _browser(user) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


def _api(world: World, user, **options) -> Client:
    secret = token_create(actor=Actor.for_user(world.root), user=user, name="t", **options).secret
    return Client(headers={"Authorization": f"Bearer {secret}"})


def _leaks(text: str, world: World) -> list[str]:
    """What of the hidden entries `text` gives away."""
    names = (HIDDEN_TITLE, HIDDEN_ORIGIN, world.new.short_id, world.origin.short_id)
    return [name for name in names if name in text]


def test_the_links_cross_into_the_vault(world):
    """The case is real: corrections are moved across projects with their links."""
    assert world.old.superseded_by_id == world.new.pk and world.new.project.slug == "vault"
    assert world.successor.supersedes_id == world.origin.pk
    assert world.successor.project.slug == "open" and world.origin.project.slug == "vault"


def test_the_entry_page_says_an_entry_you_cannot_see(world):
    alice = _browser(world.alice)
    for entry in (world.old, world.successor):
        page = alice.get(f"/e/{entry.short_id}/")
        assert page.status_code == 200
        text = page.content.decode()
        assert UNSEEN in text, entry.title
        assert not _leaks(text, world), entry.title
    root = _browser(world.root).get(f"/e/{world.old.short_id}/").content.decode()
    assert HIDDEN_TITLE in root and UNSEEN not in root  # who may see it, sees it


def test_the_admin_shows_no_title_of_a_hidden_link(world):
    alice = _browser(world.alice)
    for entry in (world.old, world.successor):
        page = alice.get(f"/admin/knowledge/entry/{entry.pk}/change/")
        assert page.status_code == 200
        text = page.content.decode()
        assert UNSEEN in text, entry.title
        assert HIDDEN_TITLE not in text and HIDDEN_ORIGIN not in text, entry.title
        assert f"/admin/knowledge/entry/{world.new.pk}/" not in text
        assert f"/admin/knowledge/entry/{world.origin.pk}/" not in text
    root = _browser(world.root).get(f"/admin/knowledge/entry/{world.old.pk}/change/")
    assert HIDDEN_TITLE in root.content.decode()


def _structured(result) -> dict:
    assert not result.is_error, result.content[0].text
    return result.structured_content


def test_mcp_answers_carry_no_hidden_id(world):
    alice = Actor(user=world.alice, agent="agent:test")
    got = answer("get", alice, {"id": world.old.short_id, "offset": 0, "max_chars": 500})
    meta = _structured(got)["entry"]
    assert meta["superseded_by"] is None and meta["superseded_by_hidden"] is True
    text = got.content[0].text
    assert f"Superseded by {UNSEEN}" in text and str(world.new.pk) not in text
    got = answer("get", alice, {"id": world.successor.short_id, "offset": 0, "max_chars": 200})
    meta = _structured(got)["entry"]
    assert meta["supersedes"] is None and meta["supersedes_hidden"] is True

    browsed = _structured(answer("browse", alice, {"project": "open", "subtopic": ""}))
    rows = {row["short_id"]: row for row in browsed["entries"]}
    assert rows[world.successor.short_id]["supersedes"] is None
    assert rows[world.successor.short_id]["supersedes_hidden"] is True
    recent = _structured(answer("recent", alice, {"project": "", "since": "", "limit": 50}))
    assert all(row["supersedes"] != world.origin.pk for row in recent["entries"])

    corrected = _structured(
        answer(
            "correct",
            alice,
            {"id": world.successor.short_id, "body": "3", "reason": "x", "title": ""},
        )
    )
    assert corrected["superseded"]["supersedes"] is None  # the vault origin, still hidden
    assert corrected["superseded"]["superseded_by"] == corrected["entry"]["id"]  # seen

    root = Actor(user=world.root, agent="agent:test")
    meta = _structured(
        answer("get", root, {"id": world.old.short_id, "offset": 0, "max_chars": 200})
    )["entry"]
    assert meta["superseded_by"] == world.new.pk and "superseded_by_hidden" not in meta


def test_rest_answers_carry_no_hidden_id(world):
    alice = _api(world, world.alice, scope="read")
    old = alice.get(f"/api/v1/entries/{world.old.short_id}").json()
    assert old["superseded_by"] is None and old["superseded_by_hidden"] is True
    successor = alice.get(f"/api/v1/entries/{world.successor.short_id}").json()
    assert successor["supersedes"] is None and successor["supersedes_hidden"] is True
    rows = alice.get("/api/v1/entries", {"project": "open", "include_history": True}).json()
    by_id = {row["short_id"]: row for row in rows["items"]}
    assert by_id[world.old.short_id]["superseded_by"] is None
    assert by_id[world.successor.short_id]["supersedes"] is None

    root = _api(world, world.root, scope="read")
    seen = root.get(f"/api/v1/entries/{world.old.short_id}").json()
    assert seen["superseded_by"] == world.new.pk and seen["superseded_by_hidden"] is False


def test_a_token_narrowed_to_one_project_does_not_see_across(world):
    """Root sees the vault, but not through a token narrowed to open."""
    narrowed = _api(world, world.root, scope="read", projects=["open"])
    old = narrowed.get(f"/api/v1/entries/{world.old.short_id}").json()
    assert old["superseded_by"] is None and old["superseded_by_hidden"] is True
    actor = Actor(user=world.root, agent="agent:test", project_ids=frozenset({_pk("open")}))
    meta = _structured(
        answer("get", actor, {"id": world.old.short_id, "offset": 0, "max_chars": 200})
    )["entry"]
    assert meta["superseded_by"] is None and meta["superseded_by_hidden"] is True


def test_revision_texts_name_no_hidden_entry(world):
    """The diff pages show the revision file, whose frontmatter names the superseded entry by
    short id: a hidden one reads as "an entry you cannot see" there too."""
    owner = Actor.for_user(world.root)
    fields = EntryFields(body="three")
    entry = entry_update(actor=owner, ref=world.successor.pk, fields=fields).entry
    alice = _browser(world.alice)
    pages = {
        "web diff": f"/e/{entry.short_id}/diff/?from=2&to=3",
        "admin diff": f"/admin/knowledge/entry/{entry.pk}/history/diff/?from=2&to=3&mode=unified",
        "admin revert": f"/admin/knowledge/entry/{entry.pk}/history/revert/2/",
    }
    for name, url in pages.items():
        page = alice.get(url)
        assert page.status_code == 200, name
        text = page.content.decode()
        assert not _leaks(text, world), name
        assert UNSEEN in text, name
    root = _browser(world.root).get(pages["web diff"]).content.decode()
    assert world.origin.short_id in root
