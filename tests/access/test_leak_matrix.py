"""The leak matrix: every role, every sensitivity, every surface, asserting exactly what is
visible and writable (the table lives in tests/access/world.py, the columns in surfaces*.py)."""

from __future__ import annotations

import pytest

from knowledge.models import Sensitivity
from tests.access.surfaces import SURFACES
from tests.access.world import SENSITIVITIES

# Crossed with every sensitivity below; the cases of one sensitivity share its world.
CASES = [
    pytest.param(name, role, id=f"{name}-{role}")
    for name, surf in SURFACES.items()
    for role in surf.roles
]


@pytest.mark.usefixtures("guest_groups")
@pytest.mark.parametrize("sensitivity", SENSITIVITIES, indirect=True)
@pytest.mark.parametrize(("surface_name", "role"), CASES)
def test_leak_matrix(surface_name, role, sensitivity, world):
    surf = SURFACES[surface_name]
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
    axes = {m.args[0]: m.args[1] for m in test_leak_matrix.pytestmark if m.name == "parametrize"}
    assert set(axes["sensitivity"]) == set(Sensitivity.values)


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
