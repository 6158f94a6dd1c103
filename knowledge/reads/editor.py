"""What an editor will save, before it is saved: the observations and relations a body produces,
each link with the entry it would name (or none yet), and whether the title is taken where the
entry goes. The same parser and link rules as a save (knowledge.graph), scoped by the actor;
and how the draft fits its note type's schema (a schema draft: the fields it declares).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from django.conf import settings
from django.db.models.functions import Lower

from knowledge.actors import Actor
from knowledge.errors import KnowledgeError, ValidationFailed
from knowledge.graph.parsing import Observation, Relation, parse
from knowledge.graph.resolve import resolve_targets
from knowledge.models import Entry, Subtopic
from knowledge.note_types import Facts, Report, Schema, SchemaError, read_schema, validate
from knowledge.note_types.reads import SCHEMA_KIND, note_type_of, project_schema
from knowledge.note_types.targets import draft_target_kinds
from knowledge.paths import normalize_path
from knowledge.selectors import project_get, visible_entries


@dataclass(frozen=True)
class PreviewLink:
    relation: Relation
    entry: Entry | None  # the entry the link names now; None: missing (it waits for one)

    @property
    def resolved(self) -> bool:
        return self.entry is not None


@dataclass
class BodyPreview:
    observations: list[Observation] = field(default_factory=list)
    links: list[PreviewLink] = field(default_factory=list)
    taken_by: Entry | None = None  # another entry with this title in the same place
    place: str = ""  # `project/subtopic` the entry goes to, when known

    @property
    def missing(self) -> int:
        return sum(1 for link in self.links if not link.resolved)


def body_preview(
    actor: Actor,
    *,
    body: str,
    project: str | int | None = None,
    subtopic: str | None = None,
    title: str = "",
    entry: int | None = None,
) -> BodyPreview:
    """The graph `body` would give an entry titled `title` at `project`/`subtopic` (`entry`: the
    one being edited, which a link never names). Without a project (not chosen yet) the links
    are listed, unresolved. Raises ValidationFailed for a body over the size limit."""
    limit = settings.CAIRN_MAX_BODY_BYTES
    if len(body) > limit or len(body.encode()) > limit:
        raise ValidationFailed(
            f"The body is over the limit of {limit:,} bytes; shorten it or split it into "
            "several entries.",
            field="body",
            limit=limit,
        )
    parsed = parse(body)
    preview = BodyPreview(observations=parsed.observations)
    try:
        proj = project_get(actor, project) if project not in (None, "") else None
        path = normalize_path(subtopic)
    except KnowledgeError:  # a project or path the form will refuse on save
        proj, path = None, ""
    if proj is None:
        preview.links = [PreviewLink(r, None) for r in parsed.relations]
        return preview
    node = Subtopic.objects.filter(project=proj, path=path).first() if path else None
    source = Entry(project=proj, subtopic=node)
    source.pk = entry
    preview.place = f"{proj.slug}/{path}" if path else proj.slug
    found = resolve_targets(source, [r.target for r in parsed.relations], actor)
    shown = visible_entries(actor).select_related("project", "subtopic")
    targets = shown.in_bulk([pk for pk in found.values() if pk])
    preview.links = [PreviewLink(r, targets.get(found.get(r.target))) for r in parsed.relations]
    name = " ".join((title or "").split()).lower()
    if name and (node is not None or not path):
        same = shown.annotate(ltitle=Lower("title"))
        same = same.filter(project=proj, subtopic=node, ltitle=name)
        preview.taken_by = same.exclude(pk=entry).first() if entry else same.first()
    return preview


@dataclass
class SchemaPreview:
    """What the note type's schema says of a draft, before it is saved."""

    schema: Schema | None = None  # a schema draft's fields, or the schema the draft must fit
    report: Report | None = None  # how the draft fits `schema` (None for a schema draft)
    error: str = ""  # a schema draft that does not parse: a save would be refused
    mode: str = ""  # the project's schema_mode: what a save that does not fit would meet

    @property
    def declares(self) -> bool:
        return self.report is None


MAX_METADATA_TEXT = 20_000


def _draft_metadata(text: str) -> dict:
    if not text or len(text) > MAX_METADATA_TEXT:
        return {}
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # json.loads recurses: 5,000 [ overflow the stack
        return {}  # the form says what is wrong with it on save
    return value if isinstance(value, dict) else {}


def schema_preview(
    actor: Actor,
    *,
    project: str | int | None,
    kind: str = "",
    body: str = "",
    title: str = "",
    tags: str = "",
    status: str = "",
    metadata: str = "",
    entry: int | None = None,
) -> SchemaPreview | None:
    """A draft against its note type's schema in `project` (a schema draft: its parsed fields,
    or why they do not parse). None when no schema applies or no project is chosen yet. The
    body is bounded by the caller (body_preview refuses one over the limit)."""
    kind = note_type_of(kind)[:60]
    meta = _draft_metadata(metadata)
    if kind == SCHEMA_KIND:
        try:
            schema = read_schema(title=title, metadata=meta, body=body)
        except SchemaError as exc:
            return SchemaPreview(error=f"This schema does not parse: {exc.message}")
        if schema is None:
            return SchemaPreview(
                error="A schema lists its fields in a ```yaml block of its body, one per "
                "line, e.g. role: string, job title (role?: string when optional)."
            )
        return SchemaPreview(schema=schema)
    try:
        proj = project_get(actor, project) if project not in (None, "") else None
    except KnowledgeError:
        return None
    schema = project_schema(actor, proj, kind) if proj is not None and kind else None
    if schema is None:
        return None
    targets = None
    if schema.has_relations:  # the kinds of the entries its links name, as a save resolves them
        source = Entry(project=proj, body=body)
        source.pk = entry
        targets = draft_target_kinds(source, actor)
    facts = Facts.of(
        targets=targets,
        body=body,
        tags=[t.strip().lower().lstrip("#") for t in tags[:2000].split(",") if t.strip()],
        status=status[:20],
        kind=kind,
        metadata=meta,
    )
    return SchemaPreview(schema=schema, report=validate(schema, facts), mode=proj.schema_mode)
