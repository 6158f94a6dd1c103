"""Who the caller is and what it may do: the user, the agent label its writes are recorded
under, its token (scope, expiry, projects), and every project it can see with its role there."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Exists, OuterRef

from knowledge.actors import Actor
from knowledge.models import ApiToken, Role
from knowledge.selectors import (
    maintained_projects,
    project_maintainers,
    visible_projects,
    writable_projects,
)

MAX_PROJECTS = 200


def _token(actor: Actor) -> dict | None:
    if actor.token_id is None:
        return None
    token = ApiToken.objects.filter(pk=actor.token_id).first()
    if token is None:
        return None
    return {
        "name": token.name,
        "prefix": token.prefix,
        "scope": token.scope,
        "expires": token.expires_at.isoformat() if token.expires_at else None,
        "projects": sorted(token.projects.values_list("slug", flat=True)[:MAX_PROJECTS]),
        "narrowed": token.narrowed,
    }


def actor_profile(actor: Actor) -> dict:
    """The caller as a dict: user, agent, scopes, token, projects (slug, name, sensitivity, role,
    and for the ones it may not write, whom to ask), whether it may create projects."""
    user = actor.user
    projects = (
        visible_projects(actor)
        .annotate(
            maintains=Exists(maintained_projects(actor).filter(pk=OuterRef("pk"))),
            writes=Exists(writable_projects(actor).filter(pk=OuterRef("pk"))),
        )
        .order_by("slug")[:MAX_PROJECTS]
    )
    rows = []
    for p in projects:
        role = Role.MAINTAINER if p.maintains else Role.EDITOR if p.writes else Role.VIEWER
        row = {"slug": p.slug, "name": p.name, "sensitivity": p.sensitivity, "role": str(role)}
        if role == Role.VIEWER:
            row["ask"] = project_maintainers(p, limit=3)
        rows.append(row)
    staff_only = settings.CAIRN_PROJECT_CREATORS == "staff"
    may_create = actor.can_write and actor.project_ids is None
    if staff_only:
        may_create = may_create and bool(user.is_staff or user.is_superuser)
    return {
        "user": user.get_username() if getattr(user, "is_authenticated", False) else None,
        "agent": actor.label,
        "scopes": sorted(actor.scopes),
        "token": _token(actor),
        "projects": rows,
        "may_create_projects": may_create,
    }
