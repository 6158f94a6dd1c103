"""Entry writes: upsert by identity, update with optimistic concurrency, move, status, delete."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from django.conf import settings
from django.contrib.postgres.search import SearchVector
from django.db import IntegrityError, transaction
from django.db.models import Value
from django.db.models.functions import Lower

from knowledge.actors import Actor
from knowledge.errors import AlreadyExists, EntryConflict, Forbidden, NotFound, ValidationFailed
from knowledge.models import (
    Entry,
    EntryStatus,
    Project,
    Sensitivity,
    Source,
    Subtopic,
    content_hash,
)
from knowledge.paths import entry_slug
from knowledge.selectors import entry_get, project_get, writable_projects
from knowledge.services._background import entry_written
from knowledge.services._common import clean, record, require_write
from knowledge.services.subtopics import ensure_path

Outcome = Literal["created", "updated", "unchanged"]
NOT_SEARCHABLE_KINDS = {"transcript"}
HIDDEN_SENSITIVITIES = {Sensitivity.CONFIDENTIAL, Sensitivity.RESTRICTED}


@dataclass(frozen=True)
class UpsertResult:
    entry: Entry
    outcome: Outcome


def _normalize_tags(tags: list[str] | str | None) -> list[str] | None:
    if tags is None:
        return None
    if isinstance(tags, str):
        tags = tags.split(",")
    seen: dict[str, None] = {}
    for tag in tags:
        clean_tag = "-".join(str(tag).strip().lower().lstrip("#").split())[:60]
        if clean_tag:
            seen.setdefault(clean_tag, None)
    return list(seen)


def _check_status(status: str | None) -> None:
    if status is not None and status not in EntryStatus.values:
        raise ValidationFailed(
            f"Unknown status {status!r}; use one of {', '.join(EntryStatus.values)}.",
            field="status",
        )


def _entry_for_write(actor: Actor, entry_id: int | str) -> Entry:
    """Lock the row: an agent and a person may edit the same entry at once."""
    require_write(actor)
    entry = entry_get(actor, entry_id)  # NotFound for what the actor cannot see
    locked = (
        Entry.objects.select_for_update(of=("self",))
        .select_related("project", "subtopic")
        .filter(pk=entry.pk, project__in=writable_projects(actor))
        .first()
    )
    if locked is None:
        raise Forbidden(
            f"You may read entry {entry.short_id} but not change it. "
            "Ask a project maintainer for the editor role.",
            entry=entry.short_id,
        )
    return locked


def _check_version(entry: Entry, expected_version: int | None) -> None:
    if expected_version is not None and entry.version != expected_version:
        raise EntryConflict(
            entry_ref=entry.short_id,
            expected_version=expected_version,
            current_version=entry.version,
        )


def _identity_taken(
    project: Project, subtopic: Subtopic | None, title: str, exclude: int | None, lock=False
):
    qs = Entry.objects.annotate(ltitle=Lower("title")).filter(
        project=project, subtopic=subtopic, ltitle=title.strip().lower()
    )
    if exclude:
        qs = qs.exclude(pk=exclude)
    if lock:
        qs = qs.select_for_update(of=("self",)).select_related("project", "subtopic")
    return qs.first()


def _link_sources(entry: Entry, sources: list[dict] | None) -> bool:
    """Attach sources (get-or-create per project). Returns True when a new link was made."""
    if not sources:
        return False
    linked = set(entry.sources.values_list("pk", flat=True)) if entry.pk else set()
    added = False
    for raw in sources:
        kind = str(raw.get("kind", "")).strip().lower()
        external_id = str(raw.get("external_id", "")).strip()
        if not kind or not external_id:
            raise ValidationFailed(
                "Each source needs a kind and an external_id, e.g. "
                '{"kind": "email", "external_id": "<message-id>"}.',
                field="sources",
            )
        source, _ = Source.objects.get_or_create(
            project=entry.project,
            kind=kind,
            external_id=external_id,
            defaults={"url": raw.get("url") or "", "title": raw.get("title") or ""},
        )
        if source.pk not in linked:
            entry.sources.add(source)
            added = True
    return added


def _index_text(entry: Entry) -> None:
    """Refresh the weighted full-text vector: title A, tags and path B, body C."""
    config = settings.CAIRN_SEARCH_CONFIG
    path = entry.subtopic.path.replace("/", " ").replace("-", " ") if entry.subtopic_id else ""
    Entry.objects.filter(pk=entry.pk).update(
        search_vector=SearchVector("title", weight="A", config=config)
        + SearchVector(Value(" ".join([*entry.tags, path])), weight="B", config=config)
        + SearchVector("body", weight="C", config=config)
    )


def _save(entry: Entry, actor: Actor, reason: str) -> None:
    """Validate, stamp and save one revision of an entry, then refresh derived data."""
    entry.slug = entry_slug(entry.title)
    entry.content_hash = content_hash(entry.kind, entry.body)
    entry.updated_by = actor.db_user
    entry.generated_by = actor.label
    # Related rows were loaded or created by the service itself: skip re-checking each FK.
    clean(
        entry,
        exclude=[
            "subtopic",
            "project",
            "supersedes",
            "superseded_by",
            "created_by",
            "updated_by",
            "verified_by",
        ],
    )
    record(entry, actor, reason)
    try:
        with transaction.atomic():
            entry.save()
    except IntegrityError as exc:
        raise AlreadyExists(
            f"An entry titled {entry.title!r} already exists in {entry.path}. "
            "Upsert to replace it, or choose another title.",
            title=entry.title,
        ) from exc
    _index_text(entry)
    entry_written(entry.pk)


@transaction.atomic
def entry_upsert(
    *,
    actor: Actor,
    project: str | int,
    title: str,
    body: str,
    subtopic: str | None = None,
    kind: str | None = None,
    tags: list[str] | str | None = None,
    status: str | None = None,
    searchable: bool | None = None,
    metadata: dict | None = None,
    sources: list[dict] | None = None,
    expected_version: int | None = None,
    reason: str = "",
) -> UpsertResult:
    """Create or replace the entry identified by (project, subtopic, title).

    Returns outcome "unchanged" (and writes no revision) when nothing would change.
    """
    require_write(actor)
    title = " ".join((title or "").split())
    if not title:
        raise ValidationFailed("An entry needs a title.", field="title")
    _check_status(status)
    proj = project_get(actor, project, for_write=True)
    node = ensure_path(actor=actor, project=proj, path=subtopic)
    tags = _normalize_tags(tags)
    kind = (kind or "").strip().lower() or None

    # The project is writable (checked above), so lock the matching entry directly.
    entry = _identity_taken(proj, node, title, exclude=None, lock=True)
    if entry is None:
        if expected_version not in (None, 0):
            raise NotFound(
                f"No entry {title!r} in {proj.slug}/{node.path if node else ''} to update at "
                f"version {expected_version}. Omit expected_version to create it.",
            )
        kind = kind or "note"
        entry = Entry(
            project=proj,
            subtopic=node,
            title=title,
            body=body or "",
            kind=kind,
            tags=tags or [],
            status=status or EntryStatus.ACTIVE,
            searchable=searchable if searchable is not None else kind not in NOT_SEARCHABLE_KINDS,
            metadata=metadata or {},
            created_by=actor.db_user,
        )
        _save(entry, actor, reason or f"create {entry.title}")
        _link_sources(entry, sources)
        return UpsertResult(entry, "created")

    _check_version(entry, expected_version)
    new_values = {
        # Identity matched case-insensitively: keep the stored title's spelling.
        "title": entry.title,
        "body": body or "",
        "kind": kind or entry.kind,
        "tags": tags if tags is not None else entry.tags,
        "status": status or entry.status,
        "searchable": searchable if searchable is not None else entry.searchable,
        "metadata": metadata if metadata is not None else entry.metadata,
    }
    changed = {k for k, v in new_values.items() if getattr(entry, k) != v}
    if content_hash(new_values["kind"], new_values["body"]) == entry.content_hash:
        changed -= {"body"}  # only whitespace or line endings differ
    new_links = _link_sources(entry, sources)
    if not changed and not new_links:
        return UpsertResult(entry, "unchanged")
    for field in changed:
        setattr(entry, field, new_values[field])
    if {"body", "title", "kind"} & changed:
        entry.verified_by, entry.verified_at = None, None  # a person confirmed other text
    entry.version += 1
    _save(entry, actor, reason or f"update {entry.title}")
    return UpsertResult(entry, "updated")


@transaction.atomic
def entry_update(
    *,
    actor: Actor,
    entry_id: int | str,
    expected_version: int | None = None,
    title: str | None = None,
    body: str | None = None,
    kind: str | None = None,
    tags: list[str] | str | None = None,
    status: str | None = None,
    searchable: bool | None = None,
    metadata: dict | None = None,
    reason: str = "",
) -> Entry:
    """Edit an entry. Raises EntryConflict when it changed since expected_version."""
    entry = _entry_for_write(actor, entry_id)
    _check_version(entry, expected_version)
    _check_status(status)
    if title is not None:
        title = " ".join(title.split())
        if not title:
            raise ValidationFailed("An entry needs a title.", field="title")
        if _identity_taken(entry.project, entry.subtopic, title, exclude=entry.pk):
            raise AlreadyExists(
                f"Another entry in {entry.path} is already titled {title!r}.", title=title
            )
    updates = {
        "title": title,
        "body": body,
        "kind": (kind or "").strip().lower() or None,
        "tags": _normalize_tags(tags),
        "status": status,
        "searchable": searchable,
        "metadata": metadata,
    }
    changed = {k for k, v in updates.items() if v is not None and getattr(entry, k) != v}
    if not changed:
        return entry
    for field in changed:
        setattr(entry, field, updates[field])
    if {"body", "title", "kind"} & changed:
        entry.verified_by, entry.verified_at = None, None
    entry.version += 1
    _save(entry, actor, reason or f"update {', '.join(sorted(changed))}")
    return entry


@transaction.atomic
def entry_move(
    *,
    actor: Actor,
    entry_id: int | str,
    subtopic: str | None,
    project: str | int | None = None,
    expected_version: int | None = None,
    reason: str = "",
) -> Entry:
    """Move an entry to another subtopic (and optionally another project)."""
    entry = _entry_for_write(actor, entry_id)
    _check_version(entry, expected_version)
    target = project_get(actor, project, for_write=True) if project is not None else entry.project
    node = ensure_path(actor=actor, project=target, path=subtopic)
    if target.pk == entry.project_id and node == entry.subtopic:
        return entry
    if _identity_taken(target, node, entry.title, exclude=entry.pk):
        raise AlreadyExists(
            f"{target.slug}/{node.path if node else ''} already has an entry titled "
            f"{entry.title!r}. Rename one of them first.",
        )
    old_path = entry.path
    if target.pk != entry.project_id and entry.project.sensitivity in HIDDEN_SENSITIVITIES:
        # The new project's readers see this revision's reason: don't name a members-only one.
        old_path = "another project"
    if target.pk != entry.project_id:
        entry.sources.clear()  # sources belong to a project
    entry.project, entry.subtopic = target, node
    entry.version += 1
    _save(entry, actor, reason or f"move from {old_path}")
    return entry


@transaction.atomic
def entry_set_status(
    *,
    actor: Actor,
    entry_id: int | str,
    status: str,
    expected_version: int | None = None,
    reason: str = "",
) -> Entry:
    _check_status(status)
    entry = _entry_for_write(actor, entry_id)
    _check_version(entry, expected_version)
    if entry.status == status:
        return entry
    entry.status = status
    entry.version += 1
    _save(entry, actor, reason or f"status {status}")
    return entry


@transaction.atomic
def entry_delete(*, actor: Actor, entry_id: int | str, reason: str) -> None:
    """Delete an entry; its history stays (the last revision records who deleted it and why)."""
    if not (reason or "").strip():
        raise ValidationFailed("Say why the entry is deleted (reason).", field="reason")
    entry = _entry_for_write(actor, entry_id)
    record(entry, actor, reason)
    entry_id = entry.pk
    entry.delete()
    entry_written(entry_id)


__all__ = [
    "UpsertResult",
    "entry_delete",
    "entry_move",
    "entry_set_status",
    "entry_update",
    "entry_upsert",
]
