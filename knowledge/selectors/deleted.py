"""Deleted entries, found by what named them (id, short id, path or memory:// address) among
the revisions of the projects a reader can see: the delete revision says when, by whom and why,
and the revision before it holds the last text."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from knowledge.access import writable_projects
from knowledge.actors import Actor
from knowledge.models import Entry, Subtopic
from knowledge.paths import normalize_path

MAX_BODY = 8000


def _where(text: str) -> Q | None:
    if text.isdigit():
        return (Q(id=int(text)) if int(text) <= 2**63 - 1 else Q()) | Q(short_id=text)
    if "/" not in text:
        return Q(short_id=text.lower())
    project_slug, _, rest = text.strip("/").partition("/")
    sub_path, _, name = rest.rpartition("/")
    where = Q(project__slug__iexact=project_slug) & (Q(title__iexact=name) | Q(slug=name.lower()))
    if sub_path:
        return where & Q(subtopic__path=normalize_path(sub_path))
    return where & Q(subtopic__isnull=True)


def deleted_entry(projects: QuerySet, text: str) -> dict | None:
    """The deletion of the entry `text` names, in one of `projects`, if it is deleted: when, by
    whom, why, where it was, and its last text (at most MAX_BODY characters)."""
    where = _where(text)
    if where is None:
        return None
    row = (
        Entry.history.filter(where, history_type="-", project__in=projects)
        .select_related("history_user", "project", "subtopic")
        .order_by("-history_id")
        .first()
    )
    if row is None or Entry.objects.filter(pk=row.id).exists():
        return None
    user = row.history_user.get_username() if row.history_user_id else ""
    return {
        "id": row.id,
        "short_id": row.short_id,
        "title": row.title,
        "project": row.project.slug,
        "subtopic": _subtopic_path(row),
        "kind": row.kind,
        "tags": list(row.tags or []),
        "version": row.version,
        "deleted_at": row.history_date.isoformat(),
        "deleted_by": user or "?",
        "reason": row.history_change_reason or "",
        "body": row.body[:MAX_BODY],
        "body_chars": len(row.body),
    }


def _subtopic_path(row) -> str:
    """Where it was; a subtopic removed since is named from its own history."""
    if not row.subtopic_id:
        return ""
    if row.subtopic is not None:
        return row.subtopic.path
    past = Subtopic.history.filter(id=row.subtopic_id).order_by("-history_id")
    return past.values_list("path", flat=True).first() or ""


def may_undelete(actor: Actor, gone: dict) -> bool:
    """Whether `actor` may bring back the deleted entry `gone` (from deleted_entry): the editor
    role in its project."""
    return writable_projects(actor).filter(slug=gone["project"]).exists()
