"""Project membership: who (a user or a group) holds which role in a project."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import Group
from django.db import transaction

from knowledge.actors import Actor
from knowledge.errors import NotFound, ValidationFailed
from knowledge.models import Membership, Project, Role
from knowledge.selectors import project_get
from knowledge.services._kernel import require_write


def _principal(user, group) -> dict:
    if (user is None) == (group is None):
        raise ValidationFailed("Name exactly one user or one group.", field="user")
    return {"user": user} if user is not None else {"group": group}


def _check_role(role: str) -> None:
    if role not in Role.values:
        raise ValidationFailed(
            f"Unknown role {role!r}; use one of {', '.join(Role.values)}.", field="role"
        )


def _last_maintainer(project: Project, leaving: list[Membership]) -> ValidationFailed:
    names = ", ".join(str(m.user or m.group) for m in leaving)
    return ValidationFailed(
        f"{names} {'is the last maintainer' if len(leaving) == 1 else 'are the last maintainers'}"
        f" of {project.slug}. Make someone else maintainer first.",
        field="role",
    )


def _keep_a_maintainer(actor: Actor, project: Project, leaving: Membership) -> None:
    """A maintainer may not lock everyone out; a superuser may (and can always get back in)."""
    if actor.user.is_superuser or leaving.role != Role.MAINTAINER:
        return
    others = Membership.objects.filter(project=project, role=Role.MAINTAINER).exclude(pk=leaving.pk)
    if not others.exists():
        raise _last_maintainer(project, [leaving])


@dataclass(frozen=True)
class MembershipChange:
    """One row of a membership edit: give a user or a group `role`, or remove it (role None)."""

    user: object | None = None
    group: Group | None = None
    role: str | None = None


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
    require_write(actor)
    _check_role(role)
    principal = _principal(user, group)
    proj = project_get(actor, project, for_maintain=True)
    membership = Membership.objects.select_for_update().filter(project=proj, **principal).first()
    if membership is None:
        return Membership.objects.create(project=proj, role=role, **principal)
    if membership.role != role:
        if role != Role.MAINTAINER:
            _keep_a_maintainer(actor, proj, membership)
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
    require_write(actor)
    principal = _principal(user, group)
    proj = project_get(actor, project, for_maintain=True)
    membership = Membership.objects.select_for_update().filter(project=proj, **principal).first()
    if membership is None:
        who = user or group
        raise NotFound(f"{who} is not a member of {proj.slug}; nothing to revoke.")
    _keep_a_maintainer(actor, proj, membership)
    membership.delete()


@transaction.atomic(durable=True)
def project_memberships_set(
    *, actor: Actor, project: str | int, changes: list[MembershipChange]
) -> None:
    """Apply several membership changes as one: removals first, then grants, and "a maintainer
    remains" is checked once at the end, so maintainers can be swapped in one save. Any refusal
    leaves every membership as it was. Needs maintainer, or a superuser."""
    require_write(actor)
    proj = project_get(actor, project, for_maintain=True)
    for change in changes:  # every row is checked before any is written
        _principal(change.user, change.group)
        if change.role is not None:
            _check_role(change.role)
    # Locked so that two saves of this page cannot each leave the other's maintainer last.
    before = list(Membership.objects.select_for_update().filter(project=proj))
    for change in (c for c in changes if c.role is None):
        principal = _principal(change.user, change.group)
        if not Membership.objects.filter(project=proj, **principal).delete()[0]:
            who = change.user or change.group
            raise NotFound(f"{who} is not a member of {proj.slug}; nothing to revoke.")
    for change in (c for c in changes if c.role is not None):
        Membership.objects.update_or_create(
            project=proj, **_principal(change.user, change.group), defaults={"role": change.role}
        )
    maintainers = [m for m in before if m.role == Role.MAINTAINER]
    if actor.user.is_superuser or not maintainers:
        return
    if not Membership.objects.filter(project=proj, role=Role.MAINTAINER).exists():
        raise _last_maintainer(proj, maintainers)


__all__ = ["MembershipChange", "membership_grant", "membership_revoke", "project_memberships_set"]
