"""Who may see and change what: the one place that decides, used by every read path (and
search) and by the writes' locks, so access rules change here and nowhere else."""

from __future__ import annotations

import functools
import re
from typing import Literal

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import Exists, Q, QuerySet

from knowledge.actors import Actor
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
    return _scoped_for(actor.user.pk, actor.user.is_superuser, roles, actor.project_ids)


def _scoped_for(
    user_pk: int, superuser: bool, roles: tuple[str, ...] | None, project_ids
) -> QuerySet[Project]:
    """The access rule itself (see _scoped), by the values it depends on."""
    projects = Project.objects.all()
    if not superuser:
        allowed = Q(pk__in=_member_of(user_pk, roles))
        if roles is None:
            allowed |= Q(sensitivity=Sensitivity.PUBLIC)
            guest_groups = settings.CAIRN_GUEST_GROUPS
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
        projects = projects.filter(pk__in=project_ids)
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


def visible_projects_sql(actor: Actor) -> tuple[str, tuple]:
    """visible_projects(actor)'s ids as (sql, positional params), for a statement built by hand
    with %s placeholders (search); project_ids_sql(actor, "read") compiled the same rule."""
    sql, values = project_ids_sql(actor, "read")
    positional, names = _positional(sql)
    return positional, tuple(values[name] for name in names)


@functools.lru_cache(maxsize=64)  # one per compiled shape: not redone on every search
def _positional(sql: str) -> tuple[str, tuple[str, ...]]:
    return _NAMED.sub("%s", sql), tuple(_NAMED.findall(sql))


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
_NONE_SQL = "SELECT NULL::bigint WHERE false"
_NAMED = re.compile(r"%\((\w+)\)s")
# Stand-ins compiled into the cached SQL where the actor's own values go (no real pk is < 0).
_USER = -(2**62)
_PROJECT = -(2**61)
_compiled: dict[tuple, tuple[str, tuple]] = {}


def project_ids_sql(actor: Actor, need: Need) -> tuple[str, dict]:
    """`SELECT id FROM knowledge_project WHERE …`: the ids of the projects the actor may read,
    write or maintain as plain SQL with named parameters (`need` + a number, so the three can go
    in one statement), for statements written as plain SQL (a write's lookups and locks).

    The same rule as visible/writable/maintained_projects, not a copy: the queryset is compiled
    once per shape of actor (superuser or not, the guest groups, how many projects a token is
    narrowed to) with stand-ins for the user and the token's projects, and only the parameters
    are built per call; building the ORM query cost a write more CPU than running it.
    """
    if not signed_in(actor) or (need != "read" and not actor.can_write):
        return _NONE_SQL, {}
    user, ids = actor.user, actor.project_ids
    guests = tuple(settings.CAIRN_GUEST_GROUPS or ()) if need == "read" else ()
    shape = (need, user.is_superuser, guests, None if ids is None else len(ids))
    if shape not in _compiled:
        stand_ins = None if ids is None else [_PROJECT + i for i in range(len(ids))]
        query = _scoped_for(_USER, user.is_superuser, _ROLES[need], stand_ins).order_by()
        try:
            sql, params = query.values("pk").query.get_compiler(connection=connection).as_sql()
        except EmptyResultSet:  # a token narrowed to no project
            sql, params = _NONE_SQL, ()
        names = tuple(f"{need}{i}" for i in range(len(params)))
        named = sql.replace("%%", "\0") % tuple(f"%({n})s" for n in names)
        _compiled[shape] = (named.replace("\0", "%%"), tuple(zip(names, params, strict=True)))
    sql, slots = _compiled[shape]
    ordered = sorted(ids) if ids is not None else ()
    values = {}
    for name, value in slots:
        if type(value) is int and value == _USER:
            value = user.pk
        elif type(value) is int and _PROJECT <= value < _PROJECT + len(ordered):
            value = ordered[value - _PROJECT]
        values[name] = value
    return sql, values


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
