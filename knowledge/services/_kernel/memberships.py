"""Kernel steps for project membership: who (a user or a group) holds which role, and the rule
that a project keeps a maintainer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth.models import Group

from knowledge.actors import Actor
from knowledge.errors import NotFound, ValidationFailed
from knowledge.models import Membership, Project, Role


@dataclass(frozen=True)
class MembershipChange:
    """One row of a membership edit: give a user or a group `role`, or remove it (role None)."""

    user: object | None = None
    group: Group | None = None
    role: str | None = None


def principal(user, group) -> dict:
    if (user is None) == (group is None):
        raise ValidationFailed("Name exactly one user or one group.", field="user")
    return {"user": user} if user is not None else {"group": group}


def check_role(role: str) -> None:
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


def keep_a_maintainer(actor: Actor, project: Project, leaving: Membership) -> None:
    """A maintainer may not lock everyone out; a superuser may (and can always get back in)."""
    if actor.user.is_superuser or leaving.role != Role.MAINTAINER:
        return
    others = Membership.objects.filter(project=project, role=Role.MAINTAINER).exclude(pk=leaving.pk)
    if not others.exists():
        raise _last_maintainer(project, [leaving])


def set_memberships(actor: Actor, project: Project, changes: Sequence[MembershipChange]) -> None:
    """Apply several membership changes as one: removals first, then grants, and "a maintainer
    remains" is checked once at the end, so maintainers can be swapped in one save. A refusal
    raises before the service's transaction commits, so it leaves every membership as it was."""
    for change in changes:  # every row is checked before any is written
        principal(change.user, change.group)
        if change.role is not None:
            check_role(change.role)
    # Locked so that two saves of this page cannot each leave the other's maintainer last.
    before = list(Membership.objects.select_for_update().filter(project=project))
    for change in (c for c in changes if c.role is None):
        who = principal(change.user, change.group)
        if not Membership.objects.filter(project=project, **who).delete()[0]:
            name = change.user or change.group
            raise NotFound(f"{name} is not a member of {project.slug}; nothing to revoke.")
    for change in (c for c in changes if c.role is not None):
        Membership.objects.update_or_create(
            project=project, **principal(change.user, change.group), defaults={"role": change.role}
        )
    maintainers = [m for m in before if m.role == Role.MAINTAINER]
    if actor.user.is_superuser or not maintainers:
        return
    if not Membership.objects.filter(project=project, role=Role.MAINTAINER).exists():
        raise _last_maintainer(project, maintainers)
