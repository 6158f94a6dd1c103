"""Project membership: who (a user or a group) holds which role in a project."""

from __future__ import annotations

from django.contrib.auth.models import Group
from django.db import transaction

from knowledge.actors import Actor
from knowledge.errors import NotFound
from knowledge.models import Membership, Role
from knowledge.selectors import project_get
from knowledge.services import _kernel as k
from knowledge.services._kernel import MembershipChange


@transaction.atomic(durable=True)
def membership_grant(
    *,
    actor: Actor,
    project: str | int,
    role: str,
    user: object | None = None,
    group: Group | None = None,
) -> Membership:
    """Give a user or a group `role` in a project (replacing its previous role).

    Needs the maintainer role in the project, or a superuser.
    """
    k.require_write(actor)
    k.check_role(role)
    principal = k.principal(user, group)
    proj = project_get(actor, project, for_maintain=True)
    membership = Membership.objects.select_for_update().filter(project=proj, **principal).first()
    if membership is None:
        return Membership.objects.create(project=proj, role=role, **principal)
    if membership.role != role:
        if role != Role.MAINTAINER:
            k.keep_a_maintainer(actor, proj, membership)
        membership.role = role
        membership.save(update_fields=["role"])
    return membership


@transaction.atomic(durable=True)
def membership_revoke(
    *,
    actor: Actor,
    project: str | int,
    user: object | None = None,
    group: Group | None = None,
) -> None:
    """Remove a user's or a group's membership. Needs maintainer, or a superuser."""
    k.require_write(actor)
    principal = k.principal(user, group)
    proj = project_get(actor, project, for_maintain=True)
    membership = Membership.objects.select_for_update().filter(project=proj, **principal).first()
    if membership is None:
        who = user or group
        raise NotFound(f"{who} is not a member of {proj.slug}; nothing to revoke.")
    k.keep_a_maintainer(actor, proj, membership)
    membership.delete()


@transaction.atomic(durable=True)
def project_memberships_set(
    *, actor: Actor, project: str | int, changes: list[MembershipChange]
) -> None:
    """Apply several membership changes as one: removals first, then grants, and "a maintainer
    remains" is checked once at the end, so maintainers can be swapped in one save. Any refusal
    leaves every membership as it was. Needs maintainer, or a superuser. (A page that saves the
    project's settings too calls project_update with `memberships=`: one transaction for both.)"""
    k.require_write(actor)
    proj = project_get(actor, project, for_maintain=True)
    k.set_memberships(actor, proj, changes)


__all__ = ["MembershipChange", "membership_grant", "membership_revoke", "project_memberships_set"]
