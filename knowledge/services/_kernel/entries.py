"""Kernel steps of an entry write: find and lock once, check the version, change, move, save
the revision with its derived data, and the composite upsert."""

from __future__ import annotations

from dataclasses import dataclass, replace

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models.functions import Lower
from django.utils import timezone

from knowledge.actors import Actor
from knowledge.db.revisions import save_revision
from knowledge.errors import AlreadyExists, Forbidden, NotFound, ValidationFailed
from knowledge.models import (
    Entry,
    EntryStatus,
    HistoricalEntry,
    Project,
    Sensitivity,
    Source,
    Subtopic,
    content_hash,
    embedding_key,
)
from knowledge.note_types import Report
from knowledge.paths import entry_slug, split_path
from knowledge.reads.conflicts import stale_write
from knowledge.selectors import project_get, project_maintainers
from knowledge.selectors.projects import may_leave
from knowledge.services._kernel.checks import (
    change_reason,
    check_limits,
    check_source,
    check_status,
    clean,
    normalize_kind,
    normalize_tags,
    normalize_title,
    record,
    require_write,
)
from knowledge.services._kernel.graph import graph_change, index_entry_graph
from knowledge.services._kernel.locks import lock_by_identity
from knowledge.services._kernel.note_types import check_schema
from knowledge.services._kernel.runs import run_columns
from knowledge.services._kernel.text import text_vector
from knowledge.services.background import entry_written
from knowledge.services.fields import EntryFields
from knowledge.write_result import EntryBeforeWrite, GraphFacts, Rebased, WriteResult

NOT_SEARCHABLE_KINDS = {"transcript"}
HIDDEN_SENSITIVITIES = {Sensitivity.CONFIDENTIAL, Sensitivity.RESTRICTED}
TEXT_FIELDS = {"body", "title", "kind"}  # a change to these clears "verified"
# Related rows were loaded or created by the service itself: skip re-checking each FK.
_TRUSTED_FKS = ["subtopic", "project", "supersedes", "superseded_by", "created_by", "updated_by",
                "verified_by"]  # fmt: skip


# --- finding and locking ---------------------------------------------------------------------


def check_version(
    entry: Entry, expected_version: int | None, *, actor: Actor, **change
) -> Rebased | None:
    """A write that read another version: when it touches nothing the other writer changed, it
    goes on, on the current version (the Rebased returned says so); otherwise it is refused with
    what changed since as far as the actor may see it, and how to apply only its change.
    `change` says what the write changes (body, redo and edit, or writes;
    knowledge.reads.conflicts.entry_conflict). None: it read the current version."""
    if expected_version is None or entry.version == expected_version:
        return None
    return stale_write(entry, expected_version, actor=actor, **change)


def identity_taken(project: Project, subtopic: Subtopic | None, title: str) -> bool:
    """Whether an entry has this title (in any case) in this place. Its callers ask about a place
    or a title their entry does not hold yet, so it can never find the entry itself."""
    return (
        Entry.objects.annotate(ltitle=Lower("title"))
        .filter(project=project, subtopic=subtopic, ltitle=title.strip().lower())
        .exists()
    )


def ensure_path(*, actor: Actor, project: Project, path: str | None) -> Subtopic | None:
    """Create every missing level of `path`. None = the project root."""
    parent = None
    slugs: list[str] = []
    for slug, name in split_path(path):
        slugs.append(slug)
        full = "/".join(slugs)
        node = Subtopic.objects.filter(project=project, path=full).first()
        if node is None:
            node = Subtopic(project=project, parent=parent, slug=slug, name=name, path=full)
            record(node, actor, f"create subtopic {full}")
            # A concurrent writer may create the same node: the savepoint lets us fall back.
            try:
                with transaction.atomic():
                    node.save()
            except IntegrityError:
                node = Subtopic.objects.get(project=project, path=full)
        parent = node
    return parent


# --- changing ----------------------------------------------------------------------------------


def apply_changes(entry: Entry, fields: EntryFields) -> set[str]:
    """Set the given fields (None = keep) on an existing entry; return the names that changed.

    A body that differs only in whitespace or line endings is no change; new text clears the
    verification (a person confirmed other text).
    """
    check_status(fields.status)
    title = fields.title
    if title is not None:
        title = normalize_title(title)
        renamed = title.lower() != entry.title.lower()  # a change of case keeps the identity
        if renamed and identity_taken(entry.project, entry.subtopic, title):
            raise AlreadyExists(
                f"Another entry in {entry.path} is already titled {title!r}.", title=title
            )
    updates = replace(
        fields, title=title, kind=normalize_kind(fields.kind), tags=normalize_tags(fields.tags)
    ).given()
    changed = {k for k, v in updates.items() if getattr(entry, k) != v}
    # The new text against the old under the old kind: a new kind alone makes no body change.
    if "body" in changed and content_hash(entry.kind, fields.body) == entry.content_hash:
        changed.discard("body")
    for field in changed:
        setattr(entry, field, updates[field])
    if TEXT_FIELDS & changed:
        entry.verified_by, entry.verified_at = None, None
    return changed


def place_entry(
    actor: Actor, entry: Entry, *, project: Project, subtopic: Subtopic | None
) -> str | None:
    """Move the entry to another subtopic or project; returns the reason to record, or None
    when it is already there. A move is saved with save_entry(moved=True): links waiting for
    an entry at the new place may resolve."""
    if project.pk == entry.project_id and subtopic == entry.subtopic:
        return None
    if identity_taken(project, subtopic, entry.title):
        raise AlreadyExists(
            f"{project.slug}/{subtopic.path if subtopic else ''} already has an entry titled "
            f"{entry.title!r}. Rename one of them first.",
        )
    old_path = entry.path
    carried: list[dict] = []
    if project.pk != entry.project_id:
        if entry.project.sensitivity in HIDDEN_SENSITIVITIES:
            if not may_leave(actor, entry.project):
                raise Forbidden(
                    f"{entry.project.slug} is members-only: moving entry {entry.short_id} out of "
                    f"it makes it readable in {project.slug}, and that needs a maintainer of "
                    f"{entry.project.slug}. Ask one: {project_maintainers(entry.project)}.",
                    entry=entry.short_id,
                )
            # The new project's readers see this revision's reason: don't name a hidden one.
            old_path = "another project"
        # Sources belong to a project: the same ones in the new project come along.
        carried = list(entry.sources.values("kind", "external_id", "url", "title"))
        entry.sources.clear()
    entry.project, entry.subtopic = project, subtopic
    for fields in carried:
        source, _ = Source.objects.get_or_create(
            project=project, kind=fields["kind"], external_id=fields["external_id"],
            defaults={"url": fields["url"], "title": fields["title"]},
        )  # fmt: skip
        entry.sources.add(source)
    return f"move from {old_path}"


def link_sources(entry: Entry, sources: list[dict] | None) -> bool:
    """Attach sources (get-or-create per project). Returns True when a new link was made."""
    if not sources:
        return False
    if len(sources) > settings.CAIRN_MAX_SOURCES:
        raise ValidationFailed(
            f"At most {settings.CAIRN_MAX_SOURCES} sources per write (got {len(sources)}).",
            field="sources",
            limit=settings.CAIRN_MAX_SOURCES,
        )
    cleaned = [check_source(raw) for raw in sources]  # all checked before any is linked
    linked = set(entry.sources.values_list("pk", flat=True)) if entry.pk else set()
    added = False
    for fields in cleaned:
        source, _ = Source.objects.get_or_create(
            project=entry.project,
            kind=fields["kind"],
            external_id=fields["external_id"],
            defaults={"url": fields["url"], "title": fields["title"]},
        )
        if source.pk not in linked:
            entry.sources.add(source)
            added = True
    return added


# --- saving ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Saved:
    """What one save found out, for the write's result: the graph facts it indexed (None when
    its text did not change) and how the text fits its note type's schema (None: not checked)."""

    facts: GraphFacts | None = None
    schema: Report | None = None


def save_entry(
    entry: Entry,
    actor: Actor,
    reason: str,
    *,
    authored: bool = True,
    new_version: bool = True,
    schema_lenient: bool = False,
    moved: bool = False,
    previous_body: str | None = None,
) -> Saved:
    """Save one revision of an entry: validate, stamp, record who and why, refresh the derived
    data, queue the background work for after the commit. Returns what the save found out (the
    graph facts it indexed, the schema report), for the write's result.

    An existing entry's version goes up by one unless `new_version=False` (a verification).
    `authored=False` is for changes that are not new text (verification, supersession): who
    wrote the text (generated_by) stays, and the schema is not checked. New text is checked
    against its note type's schema per the project's mode (`schema_lenient`: report, never
    refuse). `moved`: place_entry put it somewhere else (its waiting links may resolve).
    `previous_body`: the body before a write that changed nothing else (an edit), so that the
    graph step may read only the lines it added.
    """
    check_limits(entry)
    schema = None
    if authored:
        schema = check_schema(entry, lenient=schema_lenient, actor=actor)
    change = graph_change(entry, moved=moved)  # before the stamps below, which it compares with
    if entry.pk is not None and new_version:
        entry.version += 1
    entry.slug = entry_slug(entry.title)
    entry.content_hash = content_hash(entry.kind, entry.body)
    if entry.embed_pending_since is None and embedding_key(entry) != entry.embedded_hash:
        entry.embed_pending_since = timezone.now()  # the oldest change waiting decides
    entry.updated_by = actor.db_user
    if authored:
        entry.generated_by = actor.label
    # Computed by the save's own statement (set before clean(), which reads every field: the
    # row's old vector is deferred and would cost a query).
    entry.search_vector = text_vector(entry)
    clean(entry, exclude=[*_TRUSTED_FKS, "search_vector"])
    why = change_reason(reason)
    # No savepoint: a failed save fails the whole write (the error below leaves the service's
    # transaction, which rolls back), so nothing needs to go on inside it; an import item has a
    # savepoint of its own.
    created = entry._state.adding  # not loaded from a row: an undelete inserts its old id
    entry.skip_history_when_saving = True  # the revision row is written below, in plain SQL
    try:
        entry.save()
    except IntegrityError as exc:
        raise AlreadyExists(
            f"An entry titled {entry.title!r} already exists in {entry.path}. "
            "Replace it (upsert), or choose another title.",
            title=entry.title,
        ) from exc
    finally:
        # The statement computed it: deferred now (read from the row if anyone asks), so a
        # later plain save() leaves the stored vector as it is.
        entry.__dict__.pop("search_vector", None)
        del entry.skip_history_when_saving  # other saves (a delete) go through simple-history
    who = actor.db_user
    save_revision(entry, created=created, user_id=who.pk if who else None, reason=why,
                  runs=run_columns(actor))  # fmt: skip
    facts = None
    if settings.CAIRN_GRAPH_ON_SAVE:  # benchmarks measure what the graph adds to a write
        facts = index_entry_graph(entry, change, actor, previous_body=previous_body)
    entry_written(entry.pk)
    return Saved(facts, schema)


def delete_entry(entry: Entry, actor: Actor, reason: str) -> None:
    """Delete the row; its history stays (the last revision records who deleted it and why)."""
    record(entry, actor, reason)
    entry_id = entry.pk
    linked = list(entry.sources.values("kind", "external_id"))
    runs = run_columns(actor)  # before the delete: its own row must not count as the latest
    entry.delete()
    # simple-history wrote the delete row; it also keeps the run it belongs to and the links,
    # which go with the row (the delete revision keeps them for an undelete)
    last = HistoricalEntry.objects.filter(id=entry_id, history_type="-")
    last.filter(history_id=last.order_by("-history_id").values("history_id")[:1]).update(
        **runs, **({"sources": linked} if linked else {})
    )
    entry_written(entry_id)


def new_entry(
    actor: Actor,
    *,
    project: Project,
    subtopic: Subtopic | None,
    fields: EntryFields,
    supersedes: Entry | None = None,
) -> Entry:
    """An unsaved entry with Cairn's defaults for the fields the caller left out."""
    kind = normalize_kind(fields.kind) or "note"
    searchable = fields.searchable
    return Entry(
        project=project,
        subtopic=subtopic,
        title=fields.title,
        body=fields.body or "",
        kind=kind,
        searchable=searchable if searchable is not None else kind not in NOT_SEARCHABLE_KINDS,
        status=fields.status or EntryStatus.ACTIVE,
        tags=normalize_tags(fields.tags) or [],
        metadata=fields.metadata or {},
        supersedes=supersedes,
        created_by=actor.db_user,
    )


def upsert_entry(
    actor: Actor,
    *,
    project: str | int,
    subtopic: str | None = None,
    fields: EntryFields,
    sources: list[dict] | None = None,
    expected_version: int | None = None,
    reason: str = "",
    create_only: bool = False,
    schema_lenient: bool = False,
) -> WriteResult:
    """Create or replace the entry identified by (project, subtopic, title); with
    `create_only`, an entry that already has this identity is refused, not replaced.

    The whole body is replaced: no body is an empty one. The other fields not given keep
    their value (or take Cairn's default on create)."""
    require_write(actor)
    fields = replace(fields, title=normalize_title(fields.title), body=fields.body or "")
    check_status(fields.status)
    proj = project_get(actor, project, for_write=True)
    node = ensure_path(actor=actor, project=proj, path=subtopic)
    entry = lock_by_identity(proj, node, fields.title)  # the project is writable: lock directly
    if entry is None:
        if expected_version not in (None, 0):
            raise NotFound(
                f"No entry {fields.title!r} in {proj.slug}/{node.path if node else ''} to "
                f"update at version {expected_version}. Leave out expected_version to create it.",
            )
        entry = new_entry(actor, project=proj, subtopic=node, fields=fields)
        saved = save_entry(
            entry, actor, reason or f"create {entry.title}", schema_lenient=schema_lenient
        )
        link_sources(entry, sources)
        return WriteResult(
            entry, "created", facts=saved.facts, schema=saved.schema, sources=tuple(sources or ())
        )
    if create_only:
        raise AlreadyExists(
            f"An entry titled {entry.title!r} already exists in {entry.path}.",
            field="title",
            entry=entry.short_id,
        )

    check_version(entry, expected_version, actor=actor, body=fields.body)
    before = EntryBeforeWrite.of(entry)
    # The identity matched case-insensitively: the title as stored stays.
    changed = apply_changes(entry, replace(fields, title=entry.title))
    new_links = link_sources(entry, sources)
    if not changed and not new_links:
        return WriteResult(entry, "unchanged", sources=tuple(sources or ()))
    saved = save_entry(
        entry, actor, reason or f"update {entry.title}", schema_lenient=schema_lenient
    )
    return WriteResult(
        entry, "updated", before, saved.facts, saved.schema, sources=tuple(sources or ())
    )
