"""Moving a subtopic: the node and everything below it get a new path, and each entry in them
moves along as one revision with the reason given. All or nothing: an entry whose title is
taken at the new place stops the whole move, and nothing moves."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q

from knowledge.actors import Actor
from knowledge.errors import NotFound, ValidationFailed
from knowledge.models import Entry, Subtopic
from knowledge.paths import normalize_path
from knowledge.selectors import project_get
from knowledge.services import _kernel as k

MAX_MOVED = 2000  # entries moved in one transaction


@transaction.atomic(durable=True)
def subtopic_move(
    *,
    actor: Actor,
    project: str | int,
    path: str,
    to: str,
    reason: str,
    to_project: str | int | None = None,
) -> int:
    """Give the subtopic at `path` (and its subtopics) the new path `to`, in the same project or
    in `to_project`, with every entry in them (one revision each, sources along); returns how
    many entries moved. The old nodes stay, empty: their revisions point at them. Out of a
    members-only project it needs that project's maintainer."""
    if not (reason or "").strip():
        raise ValidationFailed("Say why the subtopic moves (reason).", field="reason")
    k.require_write(actor)
    proj = project_get(actor, project, for_write=True)
    dest = proj if to_project is None else project_get(actor, to_project, for_write=True)
    source, target = normalize_path(path), normalize_path(to)
    if not source or not target:
        raise ValidationFailed("Name the subtopic to move and its new path.", field="to")
    if dest.pk == proj.pk and (target == source or target.startswith(f"{source}/")):
        raise ValidationFailed(
            f"{source} cannot move to {target}: that is itself or below itself. Pick a path "
            "outside it.",
            field="to",
        )
    below = Q(path=source) | Q(path__startswith=f"{source}/")
    paths = list(Subtopic.objects.filter(below, project=proj).values_list("path", flat=True))
    if not paths:
        raise NotFound(f"Project {proj.slug!r} has no subtopic {source!r}.", subtopic=source)
    in_it = Q(subtopic__path=source) | Q(subtopic__path__startswith=f"{source}/")
    ids = list(
        Entry.objects.filter(in_it, project=proj)
        .order_by("pk")
        .values_list("pk", flat=True)[: MAX_MOVED + 1]
    )
    if len(ids) > MAX_MOVED:
        raise ValidationFailed(
            f"{source} holds more than {MAX_MOVED} entries; move its subtopics one by one.",
            field="path",
            limit=MAX_MOVED,
        )
    for old in sorted(paths):  # empty subtopics come along too
        k.ensure_path(actor=actor, project=dest, path=target + old[len(source) :])
    for pk in ids:
        entry = k.lock_entry(actor, pk)
        node = k.ensure_path(
            actor=actor, project=dest, path=target + entry.subtopic.path[len(source) :]
        )
        if k.place_entry(actor, entry, project=dest, subtopic=node):
            k.save_entry(entry, actor, reason, moved=True)
    return len(ids)
