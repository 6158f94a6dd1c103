"""Kernel step: the links that wait for an entry (written before it existed, or naming it by a
title or place it has only now) are pointed at it when it is created, renamed or moved. Called
by the graph step (graph.py index_entry_graph) in the save's transaction."""

from __future__ import annotations

from knowledge.actors import Actor
from knowledge.db import compile_once
from knowledge.errors import ValidationFailed
from knowledge.graph.resolve import link_path, may_reference, split_target
from knowledge.models import Entry, EntryStatus, Project, Relation
from knowledge.paths import normalize_path
from knowledge.selectors import visible_projects

MAX_WAITING = 1000  # waiting links resolved per write


def _waiting(key: str, entry_id: int) -> list[tuple]:
    """The links waiting for an entry with slug `key` (not its own), through the
    relation_waiting index, with their source's project, its sensitivity and last writer; the
    most recently written first."""
    compiled = compile_once(
        ("waiting_links",),
        lambda s: (
            Relation.objects.filter(
                target__isnull=True, valid_to__isnull=True, target_key=s.text("key")
            )
            .exclude(source_id=s.int("id"))
            .order_by("-source__updated_at", "position", "pk")
            .values_list(
                "pk",
                "target_text",
                "source__project_id",
                "source__project__sensitivity",
                "source__updated_by_id",
            )[:MAX_WAITING]
        ),
    )
    return compiled.rows(key=key, id=entry_id)


def resolve_waiting(entry: Entry) -> int:
    """Point the links that wait for an entry like this one at it (after a create, rename or
    move), and a correction's incoming links at the correcting entry. Returns how many.

    A waiting link matched nothing before, so this entry is its match when the link names it:
    decided from the link text, with no query per link."""
    count = 0
    if entry.supersedes_id:
        count += Relation.objects.filter(
            target_id=entry.supersedes_id, valid_to__isnull=True
        ).update(target_id=entry.pk)
    if entry.status == EntryStatus.SUPERSEDED:
        return count
    rows = _waiting(entry.slug[:120], entry.pk)
    sub = entry.subtopic.path if entry.subtopic_id else ""
    project = entry.project
    candidates = [
        (pk, source_project, writer)
        for pk, text, source_project, source_sensitivity, writer in rows
        if _names(text, project, sub, source_project, source_sensitivity)
    ]
    # A bare title from another project names this entry only when it is the one entry with
    # its slug (its writer may read several, and a link never guesses between them).
    if any(source_project != project.pk and split_target(text)[0] is None
           for _, text, source_project, _, _ in rows):  # fmt: skip
        lone = not Entry.objects.filter(slug=entry.slug).exclude(pk=entry.pk).exists()
        bare = {pk for pk, text, *_ in rows if split_target(text)[0] is None}
        candidates = [c for c in candidates if c[1] == project.pk or c[0] not in bare or lone]
    # From another project, only a link whose writer may read this one (see resolve_targets).
    writers = {w for _, source_project, w in candidates if source_project != project.pk and w}
    readers = set(_writers_who_read(writers, project))
    matched = [
        pk
        for pk, source_project, writer in candidates
        if source_project == project.pk or writer in readers
    ]
    if matched:
        count += Relation.objects.filter(pk__in=matched).update(target_id=entry.pk)
    return count


def _writers_who_read(user_ids: set[int], project: Project):
    """The users among `user_ids` who may read `project` (one query each; a waiting link from
    another project is rare, and its writers are few)."""
    from django.contrib.auth import get_user_model

    for user in get_user_model().objects.filter(pk__in=user_ids):
        if visible_projects(Actor.for_user(user)).filter(pk=project.pk).exists():
            yield user.pk


def _names(text: str, project, sub: str, source_project: int, source_sensitivity: str) -> bool:
    """Whether a link `text` written in project `source_project` names an entry (whose slug
    matches) in `project` at subtopic `sub`, by the rules of resolve_targets."""
    first, path_sub, _ = split_target(text)
    if first is None:  # a bare title: any subtopic of the source's own project, or another's
        return source_project == project.pk or may_reference(
            source_sensitivity, project.sensitivity
        )
    if first == project.slug:  # project/…/Title: that exact place
        if source_project != project.pk and not may_reference(
            source_sensitivity, project.sensitivity
        ):
            return False
        return path_sub == sub
    # subtopic/…/Title within the source's own project
    try:
        path = link_path(text)
        return source_project == project.pk and normalize_path(path.rsplit("/", 1)[0]) == sub
    except ValidationFailed:
        return False
