"""Project membership: who (a user or a group) holds which role in a project."""

from __future__ import annotations

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


def _keep_a_maintainer(actor: Actor, project: Project, leaving: Membership) -> None:
    """A maintainer may not lock everyone out; a superuser may (and can always get back in)."""
    if actor.user.is_superuser or leaving.role != Role.MAINTAINER:
        return
    others = Membership.objects.filter(project=project, role=Role.MAINTAINER).exclude(pk=leaving.pk)
    if not others.exists():
        raise ValidationFailed(
            f"{leaving.user or leaving.group} is the last maintainer of {project.slug}. "
            "Make someone else maintainer first.",
            field="role",
        )


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


__all__ = ["membership_grant", "membership_revoke"]
