"""Every read, scoped by the actor. Selectors never write.

`visible_projects` is the one place that decides what an actor may see; every other selector
(and search) starts from it, so access rules change here and nowhere else.
"""

from __future__ import annotations

import difflib

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Case, Count, Exists, Q, QuerySet, When

from knowledge import limits
from knowledge.actors import Actor
from knowledge.errors import Forbidden, NotFound, ValidationFailed
from knowledge.models import (
    Entry,
    Membership,
    Project,
    Role,
    Sensitivity,
    Source,
    Subtopic,
)
from knowledge.paths import normalize_path
from knowledge.selectors.deleted import deleted_entry

User = get_user_model()
WRITE_ROLES = (Role.EDITOR, Role.MAINTAINER)
MAINTAIN_ROLES = (Role.MAINTAINER,)


def _signed_in(actor: Actor) -> bool:
    user = actor.user
    return bool(getattr(user, "is_authenticated", False) and user.is_active)


def _member_of(user, roles: tuple[str, ...] | None = None) -> QuerySet[Membership]:
    """Project ids where the user holds one of `roles`, directly or through a group (a subquery).

    A user with several memberships in one project gets the best of them: any row with a
    sufficient role qualifies.
    """
    memberships = Membership.objects.filter(Q(user_id=user.pk) | Q(group__user=user.pk))
    if roles is not None:
        memberships = memberships.filter(role__in=roles)
    return memberships.values("project_id")


def _scoped(actor: Actor, roles: tuple[str, ...] | None) -> QuerySet[Project]:
    """Projects the actor reaches with `roles` (None = read), narrowed to the token's projects.

    One query: membership and guest checks are subqueries, never per-row Python.
    """
    user = actor.user
    projects = Project.objects.all()
    if not user.is_superuser:
        allowed = Q(pk__in=_member_of(user, roles))
        if roles is None:
            allowed |= Q(sensitivity=Sensitivity.PUBLIC)
            guest_groups = settings.CAIRN_GUEST_GROUPS
            internal = Q(sensitivity=Sensitivity.INTERNAL)
            if guest_groups:
                # Guests (e.g. contractors) are signed in but outside the organisation.
                internal &= ~Exists(
                    User.groups.through.objects.filter(
                        user_id=user.pk, group__name__in=guest_groups
                    )
                )
            allowed |= internal
        projects = projects.filter(allowed)
    if actor.project_ids is not None:
        projects = projects.filter(pk__in=actor.project_ids)
    return projects


def visible_projects(actor: Actor) -> QuerySet[Project]:
    """The projects this actor may read: the one place that decides, used by every read path.

    public: every signed-in user; internal: every active user who is not a guest;
    confidential and restricted: members only (directly or through a group); superusers: all.
    A token narrowed to some projects sees only those.
    """
    if not _signed_in(actor):
        return Project.objects.none()
    return _scoped(actor, None)


def writable_projects(actor: Actor) -> QuerySet[Project]:
    """The projects whose entries this actor may write: editor or maintainer, and write scope."""
    if not _signed_in(actor) or not actor.can_write:
        return Project.objects.none()
    return _scoped(actor, WRITE_ROLES)


def maintained_projects(actor: Actor) -> QuerySet[Project]:
    """The projects whose settings and membership this actor may change (maintainer)."""
    if not _signed_in(actor) or not actor.can_write:
        return Project.objects.none()
    return _scoped(actor, MAINTAIN_ROLES)


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


def project_ref_filter(ref: str | int) -> Q:
    """Every project `ref` could name: its id (digits), slug or name (case-insensitive)."""
    text = str(ref).strip()
    limits.check_length(text, field="project", limit=limits.PROJECT)
    lookup = Q(slug__iexact=text) | Q(name__iexact=text)
    if text.isdigit() and int(text) <= 2**63 - 1:
        lookup |= Q(pk=int(text))
    return lookup


def resolve_project(projects, ref: str | int) -> Project | None:
    """The one project of `projects` that `ref` names: by id, then slug, then name.

    A slug beats another project's name (a name cannot capture a slug); digits that are one
    project's id and another's slug or name are ambiguous and refused, naming both slugs.
    """
    text = str(ref).strip()
    matches = list(projects.filter(project_ref_filter(text))[:3])
    if len(matches) <= 1:
        return matches[0] if matches else None
    by_id = [p for p in matches if text.isdigit() and p.pk == int(text)]
    by_slug = [p for p in matches if p.slug.lower() == text.lower()]
    if by_id and any(p.pk != by_id[0].pk for p in matches):
        others = ", ".join(p.slug for p in matches if p.pk != by_id[0].pk)
        raise ValidationFailed(
            f"Project reference {text!r} is ambiguous: it is the id of project "
            f"{by_id[0].slug!r} and also names {others}. Use the slug instead.",
            field="project",
            candidates=sorted(p.slug for p in matches),
        )
    return (by_slug or matches)[0]


def project_get(
    actor: Actor, ref: str | int, *, for_write: bool = False, for_maintain: bool = False
) -> Project:
    """A project by id, then slug, then name (case-insensitive). NotFound names close matches.

    The reference is resolved among the projects the actor can read, then the role is checked,
    so a writable project cannot capture the name of a readable one. for_write needs the editor
    role, for_maintain the maintainer role; a project the actor can read but not change raises
    Forbidden. A confidential project's existence is not secret, so non-members get Forbidden;
    a restricted one answers exactly like a project that does not exist, and suggestions only
    ever come from projects the actor can read.
    """
    text = str(ref).strip()
    lookup = project_ref_filter(text)
    visible = visible_projects(actor)
    project = resolve_project(visible, text)
    if project is not None:
        if for_maintain:
            allowed = maintained_projects(actor)
        elif for_write:
            allowed = writable_projects(actor)
        else:
            return project
        if allowed.filter(pk=project.pk).exists():
            return project
    if project is not None:
        if not actor.can_write:
            raise Forbidden(
                f"This token is read-only, so it cannot change project {text!r}. "
                "Use a token with the write scope.",
                project=text,
            )
        role = "maintainer" if for_maintain else "editor"
        raise Forbidden(
            f"You may read project {text!r} but not change it: that needs the {role} role. "
            f"Ask one of its maintainers: {project_maintainers(project)}.",
            project=text,
        )
    hidden = None
    if _signed_in(actor) and actor.project_ids is None:
        hidden = Project.objects.filter(lookup, sensitivity=Sensitivity.CONFIDENTIAL).first()
    if hidden is not None:
        raise Forbidden(
            f"Project {text!r} is confidential and you are not a member. "
            f"Ask one of its maintainers for access: {project_maintainers(hidden)}.",
            project=text,
        )
    slugs = list(visible.values_list("slug", flat=True)[:500])
    close = difflib.get_close_matches(text.lower(), slugs, n=3, cutoff=0.5)
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    raise NotFound(
        f"No project {text!r} that you can see.{hint} List the projects you can see, or "
        "create this one.",
        project=text,
        suggestions=close,
    )


MEMORY_SCHEME = "memory://"


def strip_memory_scheme(text: str) -> str:
    """`memory://acme/a/b` → `acme/a/b` (any case of the scheme); other text as it is."""
    if text[: len(MEMORY_SCHEME)].lower() == MEMORY_SCHEME:
        return text[len(MEMORY_SCHEME) :].strip("/")
    return text


def entry_ref_filter(ref: str | int) -> tuple[Q, Case | None]:
    """The condition naming one entry (numeric id, short id, `project/subtopic/title-or-slug`
    or its `memory://project/subtopic/slug` permalink) and, for a number that could also be a
    short id, the ordering that prefers the id."""
    text = strip_memory_scheme(str(ref).strip())
    limits.check_length(text, field="entry reference", limit=limits.REF)
    if text.isdigit():
        number = int(text)
        if number > 2**63 - 1:
            return Q(short_id=text), None
        return Q(pk=number) | Q(short_id=text), Case(When(pk=number, then=0), default=1)
    if "/" not in text:
        return Q(short_id=text.lower()), None
    project_slug, _, rest = text.strip("/").partition("/")
    sub_path, _, name = rest.rpartition("/")
    where = Q(project__slug__iexact=project_slug) & (Q(title__iexact=name) | Q(slug=name.lower()))
    if sub_path:
        return where & Q(subtopic__path=normalize_path(sub_path)), None
    return where & Q(subtopic__isnull=True), None


def entry_lookup(entries: QuerySet[Entry], ref: str | int) -> Entry | None:
    """The entry `ref` names among `entries`, in one query (the caller may lock it)."""
    if not str(ref).strip():
        return None
    where, preference = entry_ref_filter(ref)
    found = entries.filter(where)
    if preference is not None:
        found = found.order_by(preference)
    return found.first()


def entry_not_found(actor: Actor, ref: str | int) -> NotFound:
    text = str(ref).strip()
    if gone := deleted_entry(visible_projects(actor), strip_memory_scheme(text)):
        return NotFound(
            f"Entry {gone['short_id']} {gone['title']!r} was deleted on {gone['deleted_at'][:16]} "
            f"by {gone['deleted_by']}" + (f": {gone['reason']}" if gone["reason"] else "") + ". "
            "Its history is kept; writing its last text again brings it back as a new entry.",
            entry=text,
            deleted=gone,
        )
    return NotFound(
        f"No entry {text!r} that you can see. Search for it, or list the project's entries.",
        entry=text,
        suggestions=_close_titles(actor, text),
    )


def entry_get(actor: Actor, ref: str | int) -> Entry:
    """An entry by numeric id, short id, or `project/subtopic/path/title-or-slug`."""
    entry = entry_lookup(visible_entries(actor).select_related("project", "subtopic"), ref)
    if entry is None:
        raise entry_not_found(actor, ref)
    return entry


def _close_titles(actor: Actor, text: str) -> list[str]:
    name = text.rsplit("/", 1)[-1]
    if not name or name.isdigit():
        return []
    titles = list(
        visible_entries(actor)
        .filter(title__icontains=name[:3])
        .values_list("title", flat=True)[:200]
    )
    return difflib.get_close_matches(name, titles, n=3, cutoff=0.4)


def subtopic_tree(actor: Actor, project: str | int) -> list[dict]:
    """A project's subtopics in path order with their depth and direct entry counts."""
    proj = project_get(actor, project)
    return [
        {"path": s.path, "name": s.name, "depth": s.depth, "entries": s.n}
        for s in Subtopic.objects.filter(project=proj).annotate(n=Count("entries")).order_by("path")
    ]


def project_overview(actor: Actor) -> QuerySet[Project]:
    """The projects the actor may see, by slug, each with its entry_count."""
    return visible_projects(actor).annotate(entry_count=Count("entries")).order_by("slug")


def project_summary(actor: Actor, ref: str | int) -> Project:
    """One project the actor may see, with its entry_count."""
    return project_overview(actor).get(pk=project_get(actor, ref).pk)


def entry_revisions(actor: Actor, entry: Entry, *, limit: int = 50):
    """The revisions of an entry (found with entry_get) the actor can see, newest first."""
    # An entry moved out of a hidden project keeps its old revisions: they stay hidden.
    return (
        entry.history.filter(project_id__in=visible_projects(actor).values("pk"))
        .select_related("history_user")
        .order_by("-history_id")[:limit]
    )


def entry_revision(actor: Actor, entry: Entry, version: int):
    """One version of an entry (found with entry_get), as long as the actor may see the project
    it was in then."""
    row = (
        entry.history.filter(version=version, project_id__in=visible_projects(actor).values("pk"))
        .exclude(history_type="-")
        .select_related("project", "subtopic")
        .order_by("-history_id")
        .first()
    )
    if row is None:
        raise NotFound(
            f"Entry {entry.short_id} has no version {version} that you can see; its versions "
            f"run from 1 to {entry.version}; its history lists them.",
            entry=entry.short_id,
            version=version,
        )
    return row


def sources_check(actor: Actor, project: str | int | None, items: list[dict]) -> list[dict]:
    """For each {kind, external_id}: whether it is already logged, and by which entries, in the
    project, or without one in every project the actor can see."""
    projects = visible_projects(actor)
    if project is not None:
        projects = projects.filter(pk=project_get(actor, project).pk)
    found: dict[tuple, list[str]] = {}
    for s in Source.objects.filter(
        project__in=projects, external_id__in=[str(i.get("external_id", "")) for i in items]
    ).prefetch_related("entries"):
        found.setdefault((s.kind, s.external_id), []).extend(e.short_id for e in s.entries.all())
    answer = []
    for item in items:
        key = (str(item.get("kind", "")).lower(), str(item.get("external_id", "")))
        entries = found.get(key, [])
        answer.append({**item, "logged": bool(entries), "entries": entries})
    return answer
