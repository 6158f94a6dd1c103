"""Who may see and change what: the one place that decides, used by every read path (and
search) and by the writes' locks, so access rules change here and nowhere else."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Exists, Q, QuerySet

from knowledge.actors import Actor
from knowledge.db import Bound, Stand, compile_once
from knowledge.models import Entry, Membership, Project, Role, Sensitivity

User = get_user_model()
WRITE_ROLES = (Role.EDITOR, Role.MAINTAINER)
MAINTAIN_ROLES = (Role.MAINTAINER,)


def signed_in(actor: Actor) -> bool:
    user = actor.user
    return bool(getattr(user, "is_authenticated", False) and user.is_active)


def _member_of(user_pk: int, roles: tuple[str, ...] | None = None) -> QuerySet[Membership]:
    """Project ids where the user holds one of `roles`, directly or through a group (a subquery).

    A user with several memberships in one project gets the best of them: any row with a
    sufficient role qualifies.
    """
    memberships = Membership.objects.filter(Q(user_id=user_pk) | Q(group__user=user_pk))
    if roles is not None:
        memberships = memberships.filter(role__in=roles)
    return memberships.values("project_id")


def _scoped(actor: Actor, roles: tuple[str, ...] | None) -> QuerySet[Project]:
    """Projects the actor reaches with `roles` (None = read), narrowed to the token's projects.

    One query: membership and guest checks are subqueries, never per-row Python.
    """
    ids = None if actor.project_ids is None else sorted(actor.project_ids)
    return _scoped_for(actor.user.pk, actor.user.is_superuser, roles, ids, _guests())


def _guests() -> tuple[str, ...]:
    return tuple(settings.CAIRN_GUEST_GROUPS or ())


def _scoped_for(
    user_pk: int | None,
    superuser: bool,
    roles: tuple[str, ...] | None,
    project_ids: list[int] | None,
    guest_groups: tuple[str, ...],
) -> QuerySet[Project]:
    """The access rule itself (see _scoped), by the values it depends on."""
    projects = Project.objects.all()
    if not superuser:
        allowed = Q(pk__in=_member_of(user_pk, roles))
        if roles is None:
            allowed |= Q(sensitivity=Sensitivity.PUBLIC)
            internal = Q(sensitivity=Sensitivity.INTERNAL)
            if guest_groups:
                # Guests (e.g. contractors) are signed in but outside the organisation.
                internal &= ~Exists(
                    User.groups.through.objects.filter(
                        user_id=user_pk, group__name__in=guest_groups
                    )
                )
            allowed |= internal
        projects = projects.filter(allowed)
    if project_ids is not None:
        projects = projects.filter(pk__any=project_ids)
    return projects


def visible_projects(actor: Actor) -> QuerySet[Project]:
    """The projects this actor may read: the one place that decides, used by every read path.

    public: every signed-in user; internal: every active user who is not a guest;
    confidential and restricted: members only (directly or through a group); superusers: all.
    A token narrowed to some projects sees only those.
    """
    if not signed_in(actor):
        return Project.objects.none()
    return _scoped(actor, None)


def writable_projects(actor: Actor) -> QuerySet[Project]:
    """The projects whose entries this actor may write: editor or maintainer, and write scope."""
    if not signed_in(actor) or not actor.can_write:
        return Project.objects.none()
    return _scoped(actor, WRITE_ROLES)


def maintained_projects(actor: Actor) -> QuerySet[Project]:
    """The projects whose settings and membership this actor may change (maintainer)."""
    if not signed_in(actor) or not actor.can_write:
        return Project.objects.none()
    return _scoped(actor, MAINTAIN_ROLES)


Need = Literal["read", "write", "maintain"]
_ROLES: dict[str, tuple[str, ...] | None] = {
    "read": None,
    "write": WRITE_ROLES,
    "maintain": MAINTAIN_ROLES,
}


@dataclass(frozen=True)
class Reach:
    """What decides an actor's projects, split for statements compiled once per shape
    (knowledge.db.compile_once): `shape` changes their SQL (and goes in their key), `values`
    are bound per call (the user, the token's projects)."""

    shape: tuple
    values: dict


_NOBODY = Reach(("nobody",), {})


def reach(actor: Actor) -> Reach:
    if not signed_in(actor):
        return _NOBODY
    user, ids = actor.user, actor.project_ids
    guests = () if user.is_superuser else _guests()
    return Reach(
        ("signed in", actor.can_write, user.is_superuser, guests, ids is not None),
        {"user": user.pk, "projects": None if ids is None else sorted(ids)},
    )


def projects_for(reach: Reach, need: Need, s: Stand) -> QuerySet[Project]:
    """The projects `reach` has the `need` on (visible, writable or maintained_projects: the same
    rule), with `s`'s stand-ins where its values go, for a queryset compiled once per shape."""
    if reach.shape == _NOBODY.shape:
        return Project.objects.none()
    _, can_write, superuser, guests, narrowed = reach.shape
    if need != "read" and not can_write:
        return Project.objects.none()
    user = None if superuser else s.int("user")
    ids = s.ints("projects") if narrowed else None
    return _scoped_for(user, superuser, _ROLES[need], ids, guests if need == "read" else ())


def project_ids(actor: Actor, need: Need) -> Bound:
    """`SELECT id FROM knowledge_project WHERE …`: the ids of the projects the actor may read,
    write or maintain, as a statement (its `sql` None when it can be none), for a statement
    of knowledge.db that embeds them. The rule's own queryset, compiled once per shape."""
    r = reach(actor)
    compiled = compile_once(
        ("project_ids", need, r.shape),
        lambda s: projects_for(r, need, s).order_by().values("pk"),
    )
    return compiled.bind(**r.values)


def visible_projects_sql(actor: Actor) -> tuple[str, list]:
    """visible_projects(actor)'s ids as (sql, positional params), for a statement built by hand."""
    return project_ids(actor, "read").ids()


def project_ids_sql(actor: Actor, need: Need) -> tuple[str, dict]:
    """project_ids with named parameters (`need` + a number, so several go in one statement),
    for the statements still written by hand with named parameters."""
    sql, params = project_ids(actor, need).ids()
    names = [f"{need}{i}" for i in range(len(params))]
    named = sql.replace("%%", "\0") % tuple(f"%({n})s" for n in names)
    return named.replace("\0", "%%"), dict(zip(names, params, strict=True))


def project_role(actor: Actor, project: Project) -> str | None:
    """The actor's best role in a project it can see ("maintainer" for superusers), or None."""
    if not visible_projects(actor).filter(pk=project.pk).exists():
        return None
    if maintained_projects(actor).filter(pk=project.pk).exists():
        return Role.MAINTAINER
    if writable_projects(actor).filter(pk=project.pk).exists():
        return Role.EDITOR
    return Role.VIEWER


def project_maintainers(project: Project, limit: int = 5) -> str:
    """Whom to ask about a project: its maintainers (users, `group:NAME`), or an administrator."""
    rows = (
        Membership.objects.filter(project=project, role=Role.MAINTAINER)
        .select_related("user", "group")
        .order_by("user__username", "group__name")[:limit]
    )
    names = [m.user.get_username() if m.user_id else f"group:{m.group.name}" for m in rows]
    return ", ".join(names) if names else "a Cairn administrator"


def visible_entries(actor: Actor) -> QuerySet[Entry]:
    return Entry.objects.filter(project__in=visible_projects(actor))
