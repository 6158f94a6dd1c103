"""The leak matrix's columns: every selector, service and surface that reads or writes the
target project.

A column is a function `run(world) -> bool` registered with the access it needs ("read",
"write" or "maintain"): it answers whether the actor got through, and asserts on the way that a
refusal leaks nothing (no title, no body, no hidden slug in suggestions, the same error as for a
project that does not exist). Its name says where it reads: `rest_…`, `mcp_…`, `web_…` and
`admin_…` are surfaces, anything else is the core (selectors and services, in process). The
matrix (test_leak_matrix.py) crosses the core with every role and sensitivity, and each surface
column with the cells that can differ on a surface (CELLS there), comparing with
`world.allowed(need)`.

A surface column is a request plus a check of the answer: `world.rest_client` sends the role's
API token (`world.api_token()` is its secret, with the role's scope and narrowing) and
`world.admin_client` is the person signed in, e.g.

    @surface("rest_entry_get", "read")
    def _rest_entry_get(world):
        r = world.rest_client.get(f"/api/v1/entries/{world.entry.short_id}")
        assert SECRET_WORD not in r.text or r.status_code == 200
        return r.status_code == 200
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from knowledge import selectors
from knowledge.errors import Forbidden, KnowledgeError, NotFound
from knowledge.models import Entry, Membership, Project, Role
from knowledge.reads import listings
from knowledge.search import SearchFilters, search_entries
from knowledge.services import (
    EntryFields,
    ProjectFields,
    entry_delete,
    entry_set_status,
    entry_update,
    entry_upsert,
    membership_grant,
    membership_revoke,
    project_update,
    subtopic_ensure,
)
from tests.access.world import PERSON_ROLES, ROLES, SECRET_WORD, SLUG, SOURCE, TITLE, World

SURFACE_PREFIXES = ("rest", "mcp", "web", "admin")


@dataclass(frozen=True)
class Surface:
    name: str
    need: str  # "read" | "write" | "maintain"
    run: Callable[[World], bool]
    roles: tuple[str, ...] = ROLES  # the roles that can use this surface at all
    # What the column writes that does not depend on the role, made before `run` and handed to
    # it as `world.prepared`: the core tier makes it once for all the roles of a sensitivity.
    prepare: Callable[[World], object] | None = None

    @property
    def column(self) -> str:
        """ "rest", "mcp", "web" or "admin" for a surface, "core" for a selector or service."""
        prefix = self.name.split("_")[0]
        return prefix if prefix in SURFACE_PREFIXES else "core"


SURFACES: dict[str, Surface] = {}


def surface(name: str, need: str, roles: tuple[str, ...] = ROLES, prepare=None):
    def register(fn):
        assert name not in SURFACES, f"surface {name} registered twice"
        SURFACES[name] = Surface(name, need, fn, roles, prepare)
        return fn

    return register


# --- refusals must not leak ---------------------------------------------------------------------


def assert_silent(world: World, exc: KnowledgeError, asked: str = "") -> None:
    """A refusal never shows the entry's text (beyond what was asked), and admits that the
    project exists only where it may."""
    text = f"{exc.message} {exc.data}".lower().replace(asked.lower(), "")
    assert SECRET_WORD not in text, f"refusal leaks the entry: {exc.message}"
    if not world.existence_known:
        assert isinstance(exc, NotFound), f"hidden project answered {type(exc).__name__}"
        assert SLUG not in str(exc.data.get("suggestions", [])), "suggestions name a hidden slug"


def refused(world: World, call: Callable[[], object]) -> bool:
    """Run a write; False (and checks) when refused, True when it went through."""
    try:
        call()
    except (Forbidden, NotFound) as exc:
        assert_silent(world, exc)
        if world.allowed("read") and not isinstance(exc, Forbidden):
            pytest.fail(f"a reader was told the target does not exist: {exc.message}")
        return False
    return True


def unchanged(world: World) -> None:
    entry = world.fresh_entry()
    assert entry.version == world.entry.version and SECRET_WORD in entry.body


# --- selectors ----------------------------------------------------------------------------------


@surface("visible_projects", "read")
def _visible_projects(world: World) -> bool:
    return selectors.visible_projects(world.actor()).filter(pk=world.target.pk).exists()


@surface("project_get", "read")
def _project_get(world: World) -> bool:
    actor = world.actor()
    try:
        project = selectors.project_get(actor, SLUG)
    except (Forbidden, NotFound) as exc:
        assert_silent(world, exc)
        if not world.existence_known:
            # Indistinguishable from a slug that never existed.
            with pytest.raises(NotFound) as never:
                selectors.project_get(actor, "nosuchproj")
            assert exc.message.replace(SLUG, "X") == never.value.message.replace("nosuchproj", "X")
        return False
    assert project.pk == world.target.pk
    return True


@surface("project_get_suggestions", "read")
def _project_suggestions(world: World) -> bool:
    with pytest.raises(NotFound) as exc:
        selectors.project_get(world.actor(), "vaultprj")  # a typo of the slug
    return SLUG in exc.value.data["suggestions"]


@surface("project_overview", "read")
def _project_overview(world: World) -> bool:
    rows = {p.slug: p.entry_count for p in selectors.project_overview(world.actor())}
    return SLUG in rows


@surface("entry_get_by_short_id", "read")
def _entry_get_short(world: World) -> bool:
    try:
        return selectors.entry_get(world.actor(), world.entry.short_id).pk == world.entry.pk
    except NotFound as exc:
        assert_silent(world, exc)
        return False


@surface("entry_get_by_id", "read")
def _entry_get_id(world: World) -> bool:
    try:
        return selectors.entry_get(world.actor(), str(world.entry.pk)).pk == world.entry.pk
    except NotFound as exc:
        assert_silent(world, exc)
        return False


@surface("entry_get_by_path", "read")
def _entry_get_path(world: World) -> bool:
    ref = f"{SLUG}/ops/2026/{TITLE}"
    try:
        entry = selectors.entry_get(world.actor(), ref)
    except NotFound as exc:
        assert_silent(world, exc, asked=ref)
        assert TITLE not in exc.data["suggestions"]
        return False
    return entry.pk == world.entry.pk


@surface("entry_get_suggestions", "read")
def _entry_suggestions(world: World) -> bool:
    with pytest.raises(NotFound) as exc:
        selectors.entry_get(world.actor(), f"{SLUG}/ops/2026/Zebracorn plans")
    return TITLE in exc.value.data["suggestions"]


@surface("entry_list", "read")
def _entry_list(world: World) -> bool:
    return listings.entry_list(world.actor()).filter(pk=world.entry.pk).exists()


@surface("entry_list_of_project", "read")
def _entry_list_project(world: World) -> bool:
    try:
        entries = list(listings.entry_list(world.actor(), SearchFilters(project=SLUG)))
    except (Forbidden, NotFound) as exc:
        assert_silent(world, exc)
        return False
    assert [e.pk for e in entries] == [world.entry.pk]
    return True


@surface("search_entries", "read")
def _search_entries(world: World) -> bool:
    hits = search_entries(world.actor(), SECRET_WORD, mode="text")
    # No other project mentions the word: a hit is the target entry or a leak.
    assert all(h.id == world.entry.pk for h in hits)
    return len(hits) == 1


@surface("subtopic_tree", "read")
def _subtopic_tree(world: World) -> bool:
    try:
        tree = selectors.subtopic_tree(world.actor(), SLUG)
    except (Forbidden, NotFound) as exc:
        assert_silent(world, exc)
        return False
    assert [n["path"] for n in tree] == ["ops", "ops/2026"]
    return True


@surface("entry_revisions", "read")
def _entry_revisions(world: World) -> bool:
    try:
        actor = world.actor()
        revisions = list(
            selectors.entry_revisions(actor, selectors.entry_get(actor, world.entry.pk))
        )
    except NotFound as exc:
        assert_silent(world, exc)
        return False
    assert [r.version for r in revisions] == [2, 1]
    return True


@surface("sources_check", "read")
def _sources_check(world: World) -> bool:
    actor = world.actor()
    # Asking about the target's source from a project the actor can see reveals nothing.
    elsewhere = selectors.sources_check(actor, "commons", [SOURCE])
    assert elsewhere[0]["logged"] is False and elsewhere[0]["entries"] == []
    try:
        answer = selectors.sources_check(actor, SLUG, [SOURCE])
    except (Forbidden, NotFound) as exc:
        assert_silent(world, exc)
        return False
    assert answer[0]["entries"] == [world.entry.short_id]
    return answer[0]["logged"]


@surface("sources_check_everywhere", "read")
def _sources_check_everywhere(world: World) -> bool:
    # Without a project: every project the actor can see, and only those.
    answer = selectors.sources_check(world.actor(), None, [SOURCE])
    assert answer[0]["entries"] == ([world.entry.short_id] if answer[0]["logged"] else [])
    return answer[0]["logged"]


# --- services -----------------------------------------------------------------------------------


@surface("entry_upsert_new", "write")
def _entry_upsert_new(world: World) -> bool:
    ok = refused(
        world,
        lambda: entry_upsert(
            actor=world.actor(), project=SLUG, fields=EntryFields(title="New note", body="hi")
        ),
    )
    assert Entry.objects.filter(title="New note").exists() == ok
    return ok


@surface("entry_upsert_existing", "write")
def _entry_upsert_existing(world: World) -> bool:
    ok = refused(
        world,
        lambda: entry_upsert(
            actor=world.actor(),
            project=SLUG,
            subtopic="ops/2026",
            fields=EntryFields(title=TITLE, body="replaced"),
        ),
    )
    if not ok:
        unchanged(world)
    return ok


@surface("entry_update", "write")
def _entry_update(world: World) -> bool:
    ok = refused(
        world,
        lambda: entry_update(
            actor=world.actor(), ref=world.entry.pk, fields=EntryFields(body="edited")
        ),
    )
    if ok:
        assert world.fresh_entry().body == "edited"
    else:
        unchanged(world)
    return ok


@surface("entry_set_status", "write")
def _entry_set_status(world: World) -> bool:
    ok = refused(
        world,
        lambda: entry_set_status(actor=world.actor(), ref=world.entry.pk, status="open"),
    )
    assert (world.fresh_entry().status == "open") == ok
    return ok


@surface("entry_delete", "write")
def _entry_delete(world: World) -> bool:
    ok = refused(
        world,
        lambda: entry_delete(actor=world.actor(), ref=world.entry.pk, reason="test"),
    )
    assert Entry.objects.filter(pk=world.entry.pk).exists() != ok
    return ok


@surface("subtopic_ensure", "write")
def _subtopic_ensure(world: World) -> bool:
    ok = refused(
        world, lambda: subtopic_ensure(actor=world.actor(), project=SLUG, path="new/branch")
    )
    assert world.target.subtopics.filter(path="new/branch").exists() == ok
    return ok


@surface("project_update", "maintain")
def _project_update(world: World) -> bool:
    ok = refused(
        world,
        lambda: project_update(
            actor=world.actor(), project=SLUG, fields=ProjectFields(description="changed")
        ),
    )
    assert (Project.objects.get(pk=world.target.pk).description == "changed") == ok
    return ok


@surface("membership_grant", "maintain")
def _membership_grant(world: World) -> bool:
    ok = refused(
        world,
        lambda: membership_grant(
            actor=world.actor(), project=SLUG, user=world.spare_user, role=Role.EDITOR
        ),
    )
    assert Membership.objects.filter(project=world.target, user=world.spare_user).exists() == ok
    return ok


@surface("membership_revoke", "maintain")
def _membership_revoke(world: World) -> bool:
    viewer = world.users["viewer"]
    ok = refused(world, lambda: membership_revoke(actor=world.actor(), project=SLUG, user=viewer))
    assert Membership.objects.filter(project=world.target, user=viewer).exists() != ok
    return ok


# The other columns register themselves on import.
from tests.access import (  # noqa: E402, F401
    surfaces_admin,
    surfaces_api,
    surfaces_graph,
    surfaces_note_types,
    surfaces_undelete,
    surfaces_web,
)

__all__ = ["PERSON_ROLES", "SURFACES", "Surface", "surface"]
