"""Projects by reference (id, slug or name), scoped by the actor, and their subtopic trees."""

from __future__ import annotations

import difflib

from django.db.models import BooleanField, Count, ExpressionWrapper, Q, QuerySet

from knowledge import limits
from knowledge.access import (
    maintained_projects,
    project_maintainers,
    projects_for,
    reach,
    signed_in,
    visible_projects,
)
from knowledge.actors import Actor
from knowledge.db import compile_once
from knowledge.errors import Forbidden, KnowledgeError, NotFound, ValidationFailed
from knowledge.models import Project, Sensitivity, Subtopic


def project_ref_filter(ref: str | int) -> Q:
    """Every project `ref` could name: its id (digits), slug or name (case-insensitive)."""
    text = str(ref).strip()
    limits.check_length(text, field="project", limit=limits.PROJECT)
    return _ref_q(text, _id_of(text))


def resolve_project(projects, ref: str | int) -> Project | None:
    """The one project of `projects` that `ref` names: by id, then slug, then name.

    A slug beats another project's name (a name cannot capture a slug); digits that are one
    project's id and another's slug or name are ambiguous and refused, naming both slugs.
    """
    text = str(ref).strip()
    return _pick(list(projects.filter(project_ref_filter(text))[:3]), text)


def _pick(matches: list[Project], text: str) -> Project | None:
    """resolve_project's choice among the (at most 3) projects `text` could name."""
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


def _ref_q(text: str, by_id: int | None) -> Q:
    lookup = Q(slug__iexact=text) | Q(name__iexact=text)
    return lookup | Q(pk=by_id) if by_id is not None else lookup


def _id_of(text: str) -> int | None:
    return int(text) if text.isdigit() and int(text) <= 2**63 - 1 else None


def project_id_get(actor: Actor, ref: str | int) -> int:
    """project_get(actor, ref).pk for reading, by one statement compiled once per shape when
    `ref` names exactly one project the actor can read (a search's every call resolves its
    project). Anything else goes to project_get, which decides and explains (no match,
    several, a reference too long)."""
    text = str(ref).strip()
    if text and len(text) <= limits.PROJECT:
        r, pk = reach(actor), _id_of(text)
        compiled = compile_once(
            ("project_id_get", r.shape, pk is not None),
            lambda s: (
                Project.objects.filter(pk__in=projects_for(r, "read", s))
                .filter(_ref_q(s.text("text"), s.int("id") if pk is not None else None))
                .order_by()
                .values_list("pk")[:2]
            ),
        )
        rows = compiled.rows(**r.values, text=text, id=pk)
        if len(rows) == 1:
            return rows[0][0]
    return project_get(actor, ref).pk


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
    lookup = project_ref_filter(text)  # checks the length too
    need = "maintain" if for_maintain else ("write" if for_write else None)
    named = _named(actor, text, need)
    project = _pick([p for p, _ in named], text)
    if project is not None and next(may for p, may in named if p is project):
        return project
    raise project_refusal(actor, text, project, for_maintain=for_maintain, lookup=lookup)


def _named(actor: Actor, text: str, need: str | None) -> list[tuple[Project, bool]]:
    """The projects the actor can read that `text` could name (as project_ref_filter), by slug,
    each with whether it has the `need` on it: one statement, compiled once per shape
    (project_get runs on every write)."""
    r, pk = reach(actor), _id_of(text)

    def build(s):
        found = (
            Project.objects.filter(pk__in=projects_for(r, "read", s))
            .filter(_ref_q(s.text("text"), s.int("id") if pk is not None else None))
            .order_by("slug")
        )
        if need is not None:
            allowed = Q(pk__in=projects_for(r, need, s))
            found = found.annotate(allowed=ExpressionWrapper(allowed, BooleanField()))
        return found[:3]

    compiled = compile_once(("project_named", r.shape, need, pk is not None), build)
    loaded = compiled.rows(**r.values, text=text, id=pk)
    return [(found.obj, bool(found.extra.get("allowed", True))) for found in loaded]


def project_refusal(
    actor: Actor, text: str, project: Project | None, *, for_maintain: bool, lookup: Q
) -> KnowledgeError:
    """Why `text` names no project the actor may use: `project` is the one it can read (but not
    change), or None. Read-only tokens, confidential projects and close names each say so."""
    if project is not None:
        if not actor.can_write:
            return Forbidden(
                f"This token is read-only, so it cannot change project {text!r}. "
                "Use a token with the write scope.",
                project=text,
            )
        role = "maintainer" if for_maintain else "editor"
        return Forbidden(
            f"You may read project {text!r} but not change it: that needs the {role} role. "
            f"Ask one of its maintainers: {project_maintainers(project)}.",
            project=text,
        )
    visible = visible_projects(actor)
    hidden = None
    if signed_in(actor) and actor.project_ids is None:
        hidden = Project.objects.filter(lookup, sensitivity=Sensitivity.CONFIDENTIAL).first()
    if hidden is not None:
        return Forbidden(
            f"Project {text!r} is confidential and you are not a member. "
            f"Ask one of its maintainers for access: {project_maintainers(hidden)}.",
            project=text,
        )
    slugs = list(visible.values_list("slug", flat=True)[:500])
    close = difflib.get_close_matches(text.lower(), slugs, n=3, cutoff=0.5)
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    return NotFound(
        f"No project {text!r} that you can see.{hint} List the projects you can see, or "
        "create this one.",
        project=text,
        suggestions=close,
    )


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


MEMBERS_ONLY = (Sensitivity.CONFIDENTIAL, Sensitivity.RESTRICTED)


def may_leave(actor: Actor, project: Project) -> bool:
    """Whether the actor may move entries out of `project`: a maintainer of a members-only one
    (what only its members could read becomes readable elsewhere), an editor of any other."""
    if project.sensitivity not in MEMBERS_ONLY:
        return True
    return maintained_projects(actor).filter(pk=project.pk).exists()
