"""Which schema entry gives a note type its schema, in a project or the shared library it
takes schemas from, and that schema parsed (once per stored version: knowledge.note_types.cache).

A schema is an entry of kind `schema` in a project whose title (or Basic Memory's `entity`
key) names the note type; superseded and archived schema entries no longer apply.

Who asks is checked here, not by the callers: project_schema and readable_schema_entry answer
only about a project the actor sees (and a library schema only to the library's readers), so a
surface that names a project by an id it was sent (the admin's entry form, the live preview)
cannot show another project's fields. Only the write path reads a schema unscoped (write_schema).
"""

from __future__ import annotations

from dataclasses import replace

from django.db.models import Q

from knowledge.actors import Actor
from knowledge.models import Entry, EntryStatus, Project, Sensitivity
from knowledge.note_types import Schema, SchemaError, read_schema
from knowledge.note_types.cache import cached_schema
from knowledge.selectors import visible_projects

SCHEMA_KIND = "schema"
RETIRED = (EntryStatus.SUPERSEDED, EntryStatus.ARCHIVED)
# Who reads an entry may read the schema it is checked against: only projects every active user
# can read may lend their schemas to others.
SHAREABLE = (Sensitivity.PUBLIC, Sensitivity.INTERNAL)


def note_type_of(text: str | None) -> str:
    return (text or "").strip().lower()


def load_schema(entry: Entry) -> Schema | None:
    """The schema a schema entry declares, stamped with its version (raises SchemaError)."""
    schema = read_schema(title=entry.title, metadata=entry.metadata, body=entry.body)
    return schema and replace(schema, version=entry.version, entry=entry.short_id)


def stored_schema(entry: Entry) -> Schema | None:
    """load_schema for a schema entry as the database holds it, parsed once per version in
    this process (every page, report and write of the type asks). Never for a draft: it
    carries a saved version's number with other text."""
    return cached_schema((entry.pk, entry.version, entry.updated_at), lambda: load_schema(entry))


def schema_library(project: Project) -> Project | None:
    """The shared project `project` takes schemas from, while it still shares them and everyone
    may read it (a report about an entry must not reveal a project its reader cannot see)."""
    if not project.schema_library_id:
        return None
    return Project.objects.filter(
        pk=project.schema_library_id,
        schemas_shared=True,
        archived=False,
        sensitivity__in=SHAREABLE,
    ).first()


def readable_schema_library(actor: Actor, project: Project) -> Project | None:
    """schema_library, for a caller who may read the library (not a guest, not a token
    narrowed to `project`): its slug alone tells them a project they cannot see."""
    library = schema_library(project)
    if library is None or not visible_projects(actor).filter(pk=library.pk).exists():
        return None
    return library


def schema_entry(project: Project, note_type: str) -> Entry | None:
    """The schema entry of `note_type` in `project` (the newest, when there are several), else
    in the shared project it takes schemas from. Unscoped: readers get it through
    readable_schema_entry (or project_schema), which decide what the actor may see of it, and
    writes through write_schema."""
    kind = note_type_of(note_type)
    if not kind or kind == SCHEMA_KIND:
        return None
    own = _schema_entry_in(project, kind)
    if own is None and (library := schema_library(project)) is not None:
        return _schema_entry_in(library, kind)
    return own


def _schema_entry_in(project: Project, kind: str) -> Entry | None:
    candidates = (
        Entry.objects.filter(project=project, kind=SCHEMA_KIND)
        .filter(Q(title__iexact=kind) | Q(metadata__entity__iexact=kind))
        .exclude(status__in=RETIRED)
        .order_by("-updated_at")
    )
    for entry in candidates[:5]:
        entity = (entry.metadata or {}).get("entity") if isinstance(entry.metadata, dict) else None
        if note_type_of(str(entity) if entity else entry.title) == kind:
            return entry
    return None


def readable_schema_entry(
    actor: Actor, project: Project, note_type: str
) -> tuple[Entry | None, str]:
    """schema_entry for a reader of `project`, and "" or why there is none to show. Nothing,
    and no reason, when the actor cannot see `project` itself: whoever asks (a form that names a
    project by the id it was sent, a preview), a project's schemas are its readers' alone. A
    schema lent by a library the actor cannot see (a guest, a token narrowed to the project)
    would show the library's slug, fields and enum values, so it is withheld and said to be."""
    entry = schema_entry(project, note_type)
    if entry is None:
        return None, ""
    wanted = {project.pk, entry.project_id}
    seen = set(visible_projects(actor).filter(pk__in=wanted).values_list("pk", flat=True))
    if project.pk not in seen:
        return None, ""
    if entry.project_id in seen:
        return entry, ""
    kind = note_type_of(note_type)
    return None, (
        f"The {kind} schema of {project.slug} lives in a schema library project you cannot "
        f"see; ask its maintainers for access, or give {project.slug} its own {kind} schema."
    )


def project_schema(actor: Actor, project: Project, note_type: str) -> Schema | None:
    """The parsed schema of `note_type` in `project` as `actor` may read it: None when the
    actor cannot see the project, or the library that lends the schema (readable_schema_entry),
    or there is none. A schema that no longer parses counts as none (it could not be saved like
    that: it predates the check)."""
    entry, _ = readable_schema_entry(actor, project, note_type)
    return _parsed(entry)


def write_schema(project: Project, note_type: str) -> Schema | None:
    """The schema a write to `project` is checked against, whoever writes: for the write path
    only (knowledge/services/_kernel/note_types.py), which holds the project under the writer's
    access already. A schema lent by a library the writer cannot read binds them all the same;
    what a reader is shown of it goes through project_schema."""
    return _parsed(schema_entry(project, note_type))


def _parsed(entry: Entry | None) -> Schema | None:
    try:
        return stored_schema(entry) if entry is not None else None
    except SchemaError:
        return None
