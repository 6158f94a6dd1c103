"""The leak matrix, in two tiers (the table lives in tests/access/world.py, the columns in
surfaces*.py):

- where the access rule lives (selectors, services, the graph's and the schemas' reads, in
  process): every column by every role by every sensitivity, one test per column and sensitivity
  that reports every role it got wrong;
- each surface (REST, MCP, web, admin) only in the cells that can differ there: how the surface
  turns a credential into an actor (a member, an outsider, a guest, a superuser, a read-only
  token, a narrowed token) and how it says no (404 like a missing thing, or 403 where the
  project's existence is known). Every read path of every surface runs with at least one
  hidden-project cell, so a read path that forgets the scope fails here.

A new surface column adds len(cells) cases, not roles times sensitivities.
"""

from __future__ import annotations

import pytest
from django.db import transaction

from knowledge.models import Sensitivity
from tests.access.surfaces import SURFACES, Surface
from tests.access.world import ROLES, SENSITIVITIES, TOKEN_ROLES, World, allowed, existence_known

CORE = sorted(name for name, surf in SURFACES.items() if surf.column == "core")
ON_SURFACES = sorted(name for name, surf in SURFACES.items() if surf.column != "core")

# The cells a surface is crossed with, per what the column needs: (role, sensitivity).
CELLS = {
    "read": (
        ("viewer", "restricted"),  # a member sees it
        ("none", "restricted"),  # an outsider gets the 404 of a project that does not exist
        ("none", "confidential"),  # an outsider who may know it exists (403), sees nothing
        ("none", "internal"),  # an outsider sees an internal project
        ("guest", "internal"),  # a guest does not
        ("superuser", "restricted"),
        ("read_token", "restricted"),  # a read-only token reads
        ("narrowed", "public"),  # a token narrowed elsewhere sees not even a public project
    ),
    "write": (
        ("editor", "restricted"),
        ("viewer", "restricted"),  # a reader is refused (403)
        ("none", "restricted"),  # refused as if missing (404)
        ("none", "confidential"),
        ("none", "public"),  # reading is not writing
        ("superuser", "restricted"),
        ("read_token", "restricted"),  # the token's scope holds
        ("narrowed", "public"),
    ),
    "maintain": (
        ("maintainer", "restricted"),
        ("editor", "restricted"),
        ("none", "restricted"),
        ("superuser", "restricted"),
    ),
}


def cells(surf: Surface) -> list[tuple[str, str]]:
    return [(role, s) for role, s in CELLS[surf.need] if role in surf.roles]


SURFACE_CASES = sorted(
    (
        pytest.param(name, role, sensitivity, id=f"{name}-{role}-{sensitivity}")
        for name in ON_SURFACES
        for role, sensitivity in cells(SURFACES[name])
    ),
    key=lambda case: SENSITIVITIES.index(case.values[2]),  # one world per sensitivity in a row
)


def _verb(need: str) -> str:
    return {"read": "see", "write": "change", "maintain": "administer"}[need]


def _savepoint() -> transaction.Atomic:
    block = transaction.atomic()
    block._from_testcase = True  # the services' durable transactions may run inside it
    return block


def _case(surf: Surface, world: World) -> str | None:
    """Run one case in a savepoint rolled back after it; what went wrong, or None."""
    expected = world.allowed(surf.need)
    try:
        with _savepoint():
            got = surf.run(world)
            transaction.set_rollback(True)
    except (AssertionError, pytest.fail.Exception) as exc:
        return f"{world.role}: {str(exc).strip().splitlines()[0]}"
    if got is not expected:
        return (
            f"{world.role} {'could' if got else 'could not'} {_verb(surf.need)} the "
            f"{world.sensitivity} target project through {surf.name} "
            f"(expected {'allowed' if expected else 'refused'})"
        )
    return None


@pytest.mark.usefixtures("guest_groups")
@pytest.mark.parametrize("sensitivity", SENSITIVITIES, indirect=True)
@pytest.mark.parametrize("surface_name", CORE)
def test_the_access_rule_where_it_lives(surface_name, sensitivity, shared_world, db):
    surf = SURFACES[surface_name]
    prepared = surf.prepare(shared_world) if surf.prepare else None  # the test's db rolls it back
    wrong = []
    for role in surf.roles:
        world = shared_world.as_role(role)
        world.prepared = prepared
        wrong.append(_case(surf, world))
    wrong = [w for w in wrong if w]
    assert wrong == [], f"{surface_name}, {sensitivity} target project:\n  " + "\n  ".join(wrong)


# scope="module" keeps `sensitivity` (and so the world) module-scoped although the cells cross
# it with per-case values; conftest.py puts the cases back in sensitivity order.
@pytest.mark.usefixtures("guest_groups")
@pytest.mark.parametrize(
    ("surface_name", "role", "sensitivity"), SURFACE_CASES, indirect=["sensitivity"],
    scope="module",
)  # fmt: skip
def test_each_surface_in_the_cells_that_can_differ(surface_name, role, sensitivity, world):
    surf = SURFACES[surface_name]
    expected = world.allowed(surf.need)
    world.prepared = surf.prepare(world) if surf.prepare else None
    got = surf.run(world)
    assert got is expected, (
        f"{role} {'could' if got else 'could not'} {_verb(surf.need)} the {sensitivity} target "
        f"project through {surface_name} (expected {'allowed' if expected else 'refused'})"
    )


def test_the_core_tier_crosses_every_role_with_every_sensitivity():
    axes = {
        m.args[0]: m.args[1]
        for m in test_the_access_rule_where_it_lives.pytestmark
        if m.name == "parametrize"
    }
    assert set(axes["sensitivity"]) == set(Sensitivity.values)
    roles = {role for name in CORE for role in SURFACES[name].roles}
    assert roles == set(ROLES)
    some = {"visible_projects", "entry_get_by_short_id", "search_entries", "entry_update",
            "project_update", "graph_build_context", "schema_validate_selector"}  # fmt: skip
    assert some <= set(CORE)


def test_every_read_path_of_every_surface_meets_a_hidden_project():
    """Each surface column runs at least once where the target is hidden from the actor (and,
    where it takes tokens, once where a token hides it), and once where it shows."""
    missing = []
    for name in ON_SURFACES:
        surf = SURFACES[name]
        outcomes = {allowed(surf.need, r, s) for r, s in cells(surf)}
        hidden = [
            (r, s)
            for r, s in cells(surf)
            if not allowed("read", r, s) and not existence_known(r, s)
        ]
        if outcomes != {True, False} or not hidden:
            missing.append(f"{name}: {cells(surf)}")
        if set(TOKEN_ROLES) <= set(surf.roles) and ("narrowed", "public") not in cells(surf):
            missing.append(f"{name}: no narrowed token")
    assert missing == [], "columns without a visible and a hidden case:\n  " + "\n  ".join(missing)
    columns = {SURFACES[name].column for name in ON_SURFACES}
    assert columns == {"rest", "mcp", "web", "admin"}


@pytest.mark.parametrize("sensitivity", ["internal"], indirect=True)
@pytest.mark.parametrize("role", ["editor", "read_token", "narrowed"])
def test_api_tokens_for_future_columns_mirror_the_actor(role, sensitivity, world):
    from knowledge.models import ApiToken

    secret = world.api_token()
    token = ApiToken.objects.get(secret_hash=ApiToken.hash_secret(secret))
    actor = world.actor()
    assert token.user == actor.user
    assert (token.scope == "write") == actor.can_write
    narrowed = set(token.projects.values_list("pk", flat=True)) or None
    assert narrowed == (set(actor.project_ids) if actor.project_ids is not None else None)
