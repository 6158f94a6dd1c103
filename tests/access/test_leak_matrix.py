"""The leak matrix: every role, every sensitivity, every surface, asserting exactly what is
visible and writable (the table lives in tests/access/world.py, the columns in surfaces*.py)."""

from __future__ import annotations

import pytest

from tests.access.surfaces import SURFACES
from tests.access.world import SENSITIVITIES, build_world

CASES = [
    pytest.param(name, role, sensitivity, id=f"{name}-{role}-{sensitivity}")
    for name, surf in SURFACES.items()
    for role in surf.roles
    for sensitivity in SENSITIVITIES
]


@pytest.mark.django_db
@pytest.mark.usefixtures("guest_groups")
@pytest.mark.parametrize(("surface_name", "role", "sensitivity"), CASES)
def test_leak_matrix(surface_name, role, sensitivity):
    surf = SURFACES[surface_name]
    world = build_world(role, sensitivity)
    expected = world.allowed(surf.need)
    got = surf.run(world)
    verb = {"read": "see", "write": "change", "maintain": "administer"}[surf.need]
    assert got is expected, (
        f"{role} {'could' if got else 'could not'} {verb} a {sensitivity} project "
        f"through {surface_name} (expected {'allowed' if expected else 'refused'})"
    )


def test_matrix_covers_every_role_and_sensitivity():
    roles = {c.values[1] for c in CASES}
    assert {"none", "viewer", "editor", "maintainer", "other", "superuser"} <= roles
    assert {"read_token", "narrowed"} <= roles
    assert {c.values[2] for c in CASES} == set(SENSITIVITIES)


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["editor", "read_token", "narrowed"])
def test_api_tokens_for_future_columns_mirror_the_actor(role):
    from knowledge.models import ApiToken

    world = build_world(role, "internal")
    secret = world.api_token()
    token = ApiToken.objects.get(secret_hash=ApiToken.hash_secret(secret))
    actor = world.actor()
    assert token.user == actor.user
    assert (token.scope == "write") == actor.can_write
    narrowed = set(token.projects.values_list("pk", flat=True)) or None
    assert narrowed == (set(actor.project_ids) if actor.project_ids is not None else None)
