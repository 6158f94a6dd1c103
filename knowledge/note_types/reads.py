"""Reads for note-type schemas: validate, infer and diff a note type's schema against the
entries of that type the actor may see, and list a project's note types. Every surface asks
these. Finding and parsing the schema itself: knowledge.note_types.lookup (its names are
importable from here too). The reports read the entries' stored observations and relations
(knowledge.note_types.stored_facts), never their bodies.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from django.db.models import Count, F, Q, Window
from django.db.models.functions import RowNumber

from knowledge.actors import Actor
from knowledge.errors import ValidationFailed
from knowledge.models import Entry, EntryStatus, Project, Relation
from knowledge.note_types import (
    THRESHOLD,
    Drift,
    Facts,
    Inference,
    Report,
    Schema,
    SchemaError,
    diff,
    infer,
    validate,
)
from knowledge.note_types.lookup import (
    RETIRED,
    SCHEMA_KIND,
    note_type_of,
    project_schema,
    readable_schema_entry,
    schema_library,
    stored_schema,
)
from knowledge.note_types.lookup import SHAREABLE as SHAREABLE  # callers read these here
from knowledge.note_types.lookup import load_schema as load_schema
from knowledge.note_types.lookup import schema_entry as schema_entry
from knowledge.note_types.stored_facts import stored_facts
from knowledge.note_types.targets import Targets, stored_target_kinds
from knowledge.selectors import entry_get, project_get, visible_entries, visible_projects

MAX_ENTRIES = 2000  # entries of one type a report reads (newest first); the report says so
MAX_TYPES = 200  # note types a project lists
MAX_SCHEMAS = 500  # schema entries of one project read at once


def facts_of(entry: Entry, targets: Targets | None = None) -> Facts:
    return Facts.of(
        body=entry.body,
        tags=entry.tags,
        status=entry.status,
        kind=entry.kind,
        metadata=entry.metadata,
        targets=targets,
    )


def fits_of(actor: Actor, schema: Schema, entries: list[Entry]) -> list[Report]:
    """Each saved entry against `schema`, from its stored observations and relations (not its
    body); a relation field also checks the kind of the entry each link names (one query, only
    when the schema has such a field)."""
    needed = schema.has_relations and entries
    targets = stored_target_kinds(actor, [e.pk for e in entries]) if needed else {}
    return [validate(schema, facts) for facts in stored_facts(entries, targets)]


def _entries_of(actor: Actor, project: Project, note_type: str):
    return (
        visible_entries(actor)
        .filter(project=project, kind=note_type_of(note_type))
        .exclude(status=EntryStatus.SUPERSEDED)
        .select_related("project", "subtopic")
        .defer("body")  # the reports read the stored observations and relations instead
        .order_by("-updated_at")
    )


def _schema_or_error(actor: Actor, project: Project, note_type: str) -> tuple[Schema | None, str]:
    entry, hidden = readable_schema_entry(actor, project, note_type)
    if entry is None:
        return None, hidden
    try:
        return stored_schema(entry), ""
    except SchemaError as exc:
        return None, f"The schema entry {entry.short_id} does not parse: {exc.message}"


@dataclass
class EntryFit:
    entry: Entry
    report: Report


@dataclass
class ValidationRun:
    """One note type's entries against its schema (schema None: the type has none)."""

    project: Project
    note_type: str
    schema: Schema | None
    results: list[EntryFit] = field(default_factory=list)
    total: int = 0  # entries of the type (results may hold fewer: cut at MAX_ENTRIES)
    error: str = ""  # the schema entry does not parse

    @property
    def misfits(self) -> list[EntryFit]:
        return [r for r in self.results if not r.report.fits]

    @property
    def fitting(self) -> int:
        return len(self.results) - len(self.misfits)

    @property
    def cut(self) -> bool:
        return self.total > len(self.results)


def _run(actor: Actor, project: Project, note_type: str, entries=None) -> ValidationRun:
    schema, error = _schema_or_error(actor, project, note_type)
    run = ValidationRun(project, note_type_of(note_type), schema, error=error)
    if schema is None:
        run.total = _entries_of(actor, project, note_type).count() if entries is None else 1
        return run
    if entries is None:
        found = _entries_of(actor, project, note_type)
        run.total = found.count()
        entries = list(found[:MAX_ENTRIES])
    else:
        run.total = len(entries)
    reports = fits_of(actor, schema, entries)
    run.results = [EntryFit(e, r) for e, r in zip(entries, reports, strict=True)]
    return run


def schema_validate(
    actor: Actor,
    *,
    project: str | int | None = None,
    note_type: str | None = None,
    ref: str | int | None = None,
) -> list[ValidationRun]:
    """Validate one entry (`ref`), the entries of one note type, or, with neither, every note
    type that has a schema in the project. Only entries the actor may see are read."""
    if ref not in (None, ""):
        entry = entry_get(actor, ref)
        return [_run(actor, entry.project, entry.kind, [entry])]
    if project in (None, ""):
        raise ValidationFailed("Name the project (or an entry) to validate.", field="project")
    proj = project_get(actor, project)
    if note_type:
        return [_run(actor, proj, note_type)]
    kinds = list(
        visible_entries(actor)
        .filter(project=proj, kind=SCHEMA_KIND)
        .exclude(status__in=RETIRED)
        .values_list("title", "metadata")
    )
    library = schema_library(proj)
    if library is not None and visible_projects(actor).filter(pk=library.pk).exists():
        kinds += (
            Entry.objects.filter(project=library, kind=SCHEMA_KIND)
            .exclude(status__in=RETIRED)
            .values_list("title", "metadata")
        )
    types = {note_type_of(str((meta or {}).get("entity") or title)) for title, meta in kinds}
    return [_run(actor, proj, kind) for kind in sorted(types - {""})]


def _relation_targets(actor: Actor, entries: list[Entry]) -> dict[tuple[int, str], Counter]:
    """(index of the entry, relation type) → the kinds of the visible entries it links to."""
    index = {e.pk: i for i, e in enumerate(entries)}
    rows = (
        Relation.objects.filter(
            source_id__in=list(index),
            valid_to__isnull=True,
            target__in=visible_entries(actor),
        )
        .values_list("source_id", "relation_type", "target__kind")
        .order_by()
    )
    found: dict[tuple[int, str], Counter] = {}
    for source_id, kind, target_kind in rows:
        found.setdefault((index[source_id], kind), Counter())[target_kind] += 1
    return found


@dataclass
class InferenceRun:
    project: Project
    inference: Inference
    schema: Schema | None  # the type's current schema, if it has one
    total: int = 0


def schema_infer(
    actor: Actor, *, project: str | int, note_type: str, threshold: float = THRESHOLD
) -> InferenceRun:
    """A suggested schema for `note_type` from the entries of that type the actor may see."""
    if not 0 < threshold <= 1:
        raise ValidationFailed(
            "threshold is a share between 0 and 1, e.g. 0.25.", field="threshold"
        )
    proj = project_get(actor, project)
    found = _entries_of(actor, proj, note_type)
    entries = list(found[:MAX_ENTRIES])
    facts = stored_facts(entries)
    inference = infer(
        note_type_of(note_type),
        facts,
        threshold=threshold,
        targets=_relation_targets(actor, entries),
    )
    schema, _ = _schema_or_error(actor, proj, note_type)
    return InferenceRun(proj, inference, schema, total=found.count())


@dataclass
class DiffRun:
    project: Project
    note_type: str
    schema: Schema | None
    drift: Drift | None
    error: str = ""


def schema_diff(
    actor: Actor, *, project: str | int, note_type: str, threshold: float = THRESHOLD
) -> DiffRun:
    """The type's schema against how its entries (those the actor may see) use fields today."""
    proj = project_get(actor, project)
    schema, error = _schema_or_error(actor, proj, note_type)
    if schema is None:
        return DiffRun(proj, note_type_of(note_type), None, None, error)
    entries = list(_entries_of(actor, proj, note_type)[:MAX_ENTRIES])
    drift = diff(schema, stored_facts(entries), threshold=threshold)
    return DiffRun(proj, schema.note_type, schema, drift)


def entry_schema_fit(actor: Actor, entry: Entry) -> Report | None:
    """How an entry (found with entry_get) fits its type's schema; None when it has none."""
    schema = project_schema(actor, entry.project, entry.kind)
    return fits_of(actor, schema, [entry])[0] if schema else None


@dataclass
class NoteType:
    kind: str
    entries: int
    schema: Schema | None = None
    fitting: int | None = None  # entries that fit (None: no schema)
    checked: int = 0  # entries checked (the newest MAX_ENTRIES of the type)

    @property
    def misfit_count(self) -> int:
        return self.checked - (self.fitting or 0)


def project_schemas(project: Project) -> dict[str, Schema]:
    """Every note type with a schema in `project` → its parsed schema (the newest schema entry
    of each type; one that does not parse counts as none). One query."""
    found: dict[str, Schema] = {}
    seen: set[str] = set()
    rows = (
        Entry.objects.filter(project=project, kind=SCHEMA_KIND)
        .exclude(status__in=RETIRED)
        .order_by("-updated_at")[:MAX_SCHEMAS]
    )
    for entry in rows:
        meta = entry.metadata if isinstance(entry.metadata, dict) else {}
        kind = note_type_of(str(meta.get("entity") or entry.title))
        if not kind or kind == SCHEMA_KIND or kind in seen:
            continue
        seen.add(kind)
        try:
            schema = stored_schema(entry)
        except SchemaError:
            schema = None
        if schema is not None:
            found[kind] = schema
    return found


def note_types_of(actor: Actor, project: Project) -> list[NoteType]:
    """The note types of a project the actor holds (by entry count), each with its schema and
    how many of its newest MAX_ENTRIES entries fit: at most four queries, however many types."""
    counts = (
        visible_entries(actor)
        .filter(project=project)
        .exclude(status=EntryStatus.SUPERSEDED)
        .values("kind")
        .annotate(n=Count("id"))
        .order_by("-n", "kind")
    )
    types = [NoteType(row["kind"], row["n"]) for row in counts[:MAX_TYPES]]
    present = {t.kind for t in types}
    schemas = {k: s for k, s in project_schemas(project).items() if k in present} if types else {}
    fitting: Counter = Counter()
    checked: Counter = Counter()
    if schemas:
        newest = Window(RowNumber(), partition_by=F("kind"), order_by=F("updated_at").desc())
        rows = (
            visible_entries(actor)
            .filter(project=project, kind__in=list(schemas))
            .exclude(status=EntryStatus.SUPERSEDED)
            .annotate(rank=newest)
            .filter(rank__lte=MAX_ENTRIES)
            .only("tags", "status", "kind", "metadata")
        )
        rows = list(rows)
        linked = any(s.has_relations for s in schemas.values())
        targets = stored_target_kinds(actor, [e.pk for e in rows]) if linked and rows else {}
        for entry, facts in zip(rows, stored_facts(rows, targets), strict=True):
            checked[entry.kind] += 1
            fitting[entry.kind] += validate(schemas[entry.kind], facts).fits
    for item in types:
        if item.kind in schemas:
            item.schema = schemas[item.kind]
            item.fitting, item.checked = fitting[item.kind], checked[item.kind]
    return types


def project_note_types(actor: Actor, project: str | int) -> list[NoteType]:
    """The note types of a project (by entry count), each with its schema and how many fit."""
    return note_types_of(actor, project_get(actor, project))


def projects_with_type(actor: Actor, note_type: str) -> list[str]:
    """Slugs of the projects the actor may see that hold entries of `note_type` (or its
    schema): where a call without a project can only mean one of them."""
    kind = note_type_of(note_type)
    found = (
        visible_entries(actor)
        .filter(Q(kind=kind) | Q(kind=SCHEMA_KIND, title__iexact=kind))
        .values_list("project__slug", flat=True)
        .distinct()
        .order_by("project__slug")
    )
    return list(found[:20])
