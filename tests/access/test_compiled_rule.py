"""knowledge.access.project_ids, the access rule compiled once per shape of actor (the user and
the token's projects bound per call), answers as the querysets it is compiled from, for every
role of the matrix and every narrowing of a token, on every call of one compiled shape."""

from __future__ import annotations

import pytest
from django.db import connection

from knowledge.access import (
    maintained_projects,
    project_ids,
    visible_projects,
    writable_projects,
)
from knowledge.actors import Actor
from knowledge.models import Project, Sensitivity
from tests.access.world import ROLES, SENSITIVITIES

RULES = {"read": visible_projects, "write": writable_projects, "maintain": maintained_projects}


def _ids(actor: Actor, need: str) -> set[int]:
    sql, params = project_ids(actor, need).ids()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return {pk for (pk,) in cursor.fetchall()}


def _wrong(actor: Actor, who: str) -> list[str]:
    wrong = []
    for need, rule in RULES.items():
        expected = set(rule(actor).values_list("pk", flat=True))
        if (got := _ids(actor, need)) != expected:
            wrong.append(f"{who} {need}: {sorted(got)} instead of {sorted(expected)}")
    return wrong


@pytest.mark.usefixtures("guest_groups")
@pytest.mark.parametrize("sensitivity", SENSITIVITIES, indirect=True)
def test_the_compiled_rule_answers_as_the_querysets(sensitivity, shared_world, db):
    wrong = []
    for role in ROLES:
        world = shared_world.as_role(role)
        wrong += _wrong(world.actor(), role)
    # Tokens narrowed to several projects, to one and to none: one shape, bound per call.
    w = shared_world
    for who in ("maintainer", "other", "superuser"):
        for narrowed in (
            frozenset([w.commons.pk, w.target.pk, w.elsewhere.pk]),
            frozenset([w.target.pk]),
            frozenset(),
        ):
            actor = Actor(user=w.users[who], agent="agent:narrow", project_ids=narrowed)
            wrong += _wrong(actor, f"{who} narrowed to {sorted(narrowed)}")
    assert wrong == [], "\n".join(wrong)


def test_the_guest_groups_are_part_of_the_shape(settings, user, project):
    """The compiled SQL is cached by the guest groups it was compiled with: changing the
    setting compiles it again."""
    internal = Project.objects.create(
        slug="inside", name="Inside", sensitivity=Sensitivity.INTERNAL
    )
    user.groups.create(name="visitors")
    actor = Actor.for_user(user)
    settings.CAIRN_GUEST_GROUPS = []
    assert internal.pk in _ids(actor, "read")
    settings.CAIRN_GUEST_GROUPS = ["visitors"]
    assert internal.pk not in _ids(actor, "read")


def test_one_shape_serves_every_actor_of_that_shape(user, project):
    """Compiled once, bound per call: another user of the same shape gets their own projects."""
    from knowledge.models import Membership, Role
    from tests.factories import ProjectFactory, UserFactory

    other = UserFactory(username="bob")
    theirs = ProjectFactory(slug="theirs", sensitivity=Sensitivity.RESTRICTED)
    Membership.objects.create(project=theirs, user=other, role=Role.VIEWER)
    mine, yours = Actor.for_user(user), Actor.for_user(other)
    assert project_ids(mine, "read").sql == project_ids(yours, "read").sql
    assert theirs.pk in _ids(yours, "read") and theirs.pk not in _ids(mine, "read")
