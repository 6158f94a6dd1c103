"""ninja In/Out schemas for the REST API (the MCP tools return the same field names)."""

from datetime import datetime
from typing import Annotated, Literal

from django.conf import settings
from ninja import Field, Schema
from pydantic import AfterValidator, ConfigDict, model_validator

from knowledge import limits
from knowledge.inputs import find_nul
from knowledge.models import Entry

NUL_MESSAGE = "contains a NUL byte (\\x00), which cannot be stored; remove it"


def _no_nul(value: str) -> str:
    if "\x00" in value:
        raise ValueError(NUL_MESSAGE)
    return value


# A path or query string: refused with a 422 when it holds a NUL byte. Every string a caller
# sends has a maximum length (knowledge.limits), named in the 422; bodies keep their byte limit.
Text = Annotated[str, AfterValidator(_no_nul)]
Short = Annotated[str, Field(max_length=limits.SHORT), AfterValidator(_no_nul)]
Ref = Annotated[str, Field(max_length=limits.REF), AfterValidator(_no_nul)]
ProjectRef = Annotated[str, Field(max_length=limits.PROJECT), AfterValidator(_no_nul)]
PathText = Annotated[str, Field(max_length=limits.PATH), AfterValidator(_no_nul)]
ReasonText = Annotated[str, Field(max_length=limits.REASON), AfterValidator(_no_nul)]
SearchText = Annotated[
    str, Field(max_length=settings.CAIRN_SEARCH_MAX_QUERY_CHARS), AfterValidator(_no_nul)
]
Items = Annotated[list[Short], Field(max_length=limits.ITEMS)]  # in a JSON body


class NoNul(Schema):
    @model_validator(mode="before")
    @classmethod
    def _refuse_nul(cls, data):
        if (where := find_nul(data)) is not None:
            raise ValueError(f"{where} {NUL_MESSAGE}")
        return data


class StrictIn(NoNul):
    # Unknown fields are a typo the caller wants to hear about, not silently drop.
    model_config = ConfigDict(extra="forbid")


class ProjectIn(StrictIn):
    slug: str = Field(..., max_length=limits.SLUG, examples=["customer-x"])
    name: str = Field("", max_length=limits.NAME)
    description: str = Field("", max_length=limits.DESCRIPTION)
    sensitivity: Literal["public", "internal", "confidential", "restricted"] = "internal"


class ProjectPatch(StrictIn):
    name: str | None = Field(None, max_length=limits.NAME)
    description: str | None = Field(None, max_length=limits.DESCRIPTION)
    sensitivity: Literal["public", "internal", "confidential", "restricted"] | None = None
    archived: bool | None = None


class ProjectOut(Schema):
    id: int
    slug: str
    name: str
    description: str
    sensitivity: str
    archived: bool
    entry_count: int | None = None


class SubtopicIn(StrictIn):
    path: str = Field(..., min_length=1, max_length=limits.PATH, examples=["customer-x/2026-08"])


class SubtopicOut(Schema):
    path: str
    name: str
    depth: int
    entries: int


class SourceIn(Schema):
    kind: str = Field(..., min_length=1, max_length=limits.KIND, examples=["email"])
    external_id: str = Field(..., min_length=1, max_length=limits.EXTERNAL_ID)
    url: str = Field("", max_length=limits.URL)
    title: str = Field("", max_length=limits.SOURCE_TITLE)


class SourceOut(Schema):
    kind: str
    external_id: str
    url: str
    title: str


class EntryOut(Schema):
    id: int
    short_id: str
    title: str
    project: str
    subtopic: str
    path: str
    kind: str
    tags: list[str]
    status: str
    version: int
    generated_by: str
    verified: bool
    supersedes: int | None
    superseded_by: int | None
    created: datetime
    updated: datetime

    @staticmethod
    def resolve_project(obj: Entry) -> str:
        return obj.project.slug

    @staticmethod
    def resolve_subtopic(obj: Entry) -> str:
        return obj.subtopic.path if obj.subtopic_id else ""

    @staticmethod
    def resolve_verified(obj: Entry) -> bool:
        return obj.is_verified

    @staticmethod
    def resolve_supersedes(obj: Entry) -> int | None:
        return obj.supersedes_id

    @staticmethod
    def resolve_superseded_by(obj: Entry) -> int | None:
        return obj.superseded_by_id

    @staticmethod
    def resolve_created(obj: Entry) -> datetime:
        return obj.created_at

    @staticmethod
    def resolve_updated(obj: Entry) -> datetime:
        return obj.updated_at


class EntryDetailOut(EntryOut):
    body: str
    metadata: dict
    sources: list[SourceOut]
    verified_at: datetime | None

    @staticmethod
    def resolve_sources(obj: Entry) -> list:
        return list(obj.sources.all())


class EntryCreateIn(StrictIn):
    project: ProjectRef = Field(..., min_length=1, description="Project slug, name or id.")
    title: str = Field(..., min_length=1, max_length=limits.TITLE)
    body: str = ""
    subtopic: str | None = Field(None, max_length=limits.PATH, description="'a/b' or 'a > b'.")
    kind: str | None = Field(None, max_length=limits.KIND)
    tags: Items | None = None
    status: Short | None = None
    searchable: bool | None = None
    metadata: dict | None = None
    sources: list[SourceIn] | None = Field(None, max_length=limits.ITEMS)
    reason: ReasonText = ""


class EntryUpsertIn(EntryCreateIn):
    expected_version: int | None = Field(None, ge=0)


class UpsertOut(Schema):
    outcome: Literal["created", "updated", "unchanged"]
    entry: EntryDetailOut


class EntryPatch(StrictIn):
    title: str | None = Field(None, min_length=1, max_length=limits.TITLE)
    body: str | None = None
    kind: str | None = Field(None, max_length=limits.KIND)
    tags: Items | None = None
    status: Short | None = None
    searchable: bool | None = None
    metadata: dict | None = None
    expected_version: int | None = Field(None, ge=0)
    reason: ReasonText = ""


class EditIn(StrictIn):
    operation: Literal["append", "prepend", "find_replace", "replace_section"]
    content: str
    find: str | None = None
    section: Short | None = None
    expected_count: int | None = Field(None, ge=1)
    expected_version: int | None = Field(None, ge=0)
    reason: ReasonText = ""


class MoveIn(StrictIn):
    subtopic: str | None = Field(None, max_length=limits.PATH)
    project: ProjectRef | None = None
    expected_version: int | None = Field(None, ge=0)
    reason: ReasonText = ""


class StatusIn(StrictIn):
    status: Literal["active", "open", "resolved", "superseded", "archived"]
    expected_version: int | None = Field(None, ge=0)
    reason: ReasonText = ""


class CorrectIn(StrictIn):
    body: str = Field(..., min_length=1)
    reason: ReasonText = Field(..., min_length=1)
    title: str | None = Field(None, max_length=limits.TITLE)
    expected_version: int | None = Field(None, ge=0)


class CorrectOut(Schema):
    entry: EntryDetailOut
    superseded: EntryOut


class VerifyIn(StrictIn):
    expected_version: int | None = Field(None, ge=0)
    reason: ReasonText = ""


class RevisionOut(Schema):
    revision: int
    version: int
    action: Literal["created", "changed", "deleted"]
    at: datetime
    user: str | None
    generated_by: str
    reason: str
    title: str
    git_commit: str | None = Field(None, description="null until the git mirror commits it")


class DiffOut(Schema):
    entry: str
    from_version: int
    to_version: int
    diff: str = Field(description="unified diff; empty when the versions are the same")


class RevertIn(StrictIn):
    to_version: int = Field(ge=1)
    expected_version: int | None = None
    reason: ReasonText = ""


class SearchHitOut(Schema):
    id: int
    short_id: str
    title: str
    path: str
    kind: str
    tags: list[str]
    status: str
    updated: datetime
    score: float
    snippet: str


class SearchOut(Schema):
    results: list[SearchHitOut]


class SourceCheckIn(StrictIn):
    project: ProjectRef
    sources: list[SourceIn] = Field(..., min_length=1, max_length=limits.ITEMS)


class SourceCheckOut(Schema):
    kind: str
    external_id: str
    logged: bool
    entries: list[str]


# --- the knowledge graph ---------------------------------------------------------------------


class GraphEntryOut(Schema):
    id: int
    short_id: str
    title: str
    path: str
    permalink: str
    project: str
    kind: str
    status: str
    updated: datetime


class ObservationOut(Schema):
    category: str
    content: str
    tags: list[str]
    context: str
    current: bool
    since: datetime
    since_version: int
    until: datetime | None
    until_version: int | None


class ObservationHitOut(ObservationOut):
    entry: GraphEntryOut


class ContextRelationOut(Schema):
    type: str
    direction: Literal["outgoing", "incoming"]
    distance: int
    via: str


class ContextEntryOut(GraphEntryOut):
    excerpt: str
    observations: list[ObservationOut]


class RelatedEntryOut(ContextEntryOut):
    relation: ContextRelationOut


class ContextOut(Schema):
    url: str
    matched: Literal["entry", "glob", "search"]
    depth: int
    timeframe: str | None
    as_of: datetime | None
    primary: list[ContextEntryOut]
    primary_cut: bool
    related: list[RelatedEntryOut]
    total_related: int
    max_related: int
    cut: bool


class OutgoingRelationOut(Schema):
    type: str
    target_text: str
    entry: GraphEntryOut | None = Field(
        None, description="null while the link waits for its entry, or when you may not see it"
    )


class BacklinkOut(Schema):
    type: str
    entry: GraphEntryOut


class RelationsOut(Schema):
    outgoing: list[OutgoingRelationOut]
    backlinks: list[BacklinkOut]


class GraphNodeOut(Schema):
    id: int
    short_id: str
    title: str
    path: str
    project: str
    kind: str
    degree: int


class GraphEdgeOut(Schema):
    source: int
    target: int
    type: str


class GraphOut(Schema):
    nodes: list[GraphNodeOut]
    edges: list[GraphEdgeOut]
    cut: bool
    limit: int


class ContextParams(NoNul):
    url: Ref = Field(..., description="memory://project/path/entry, a /* or /** glob, an "
                       "entry reference, or search words")  # fmt: skip
    depth: int = Field(1, ge=1, le=3)
    timeframe: Short | None = Field(None, description="only entries changed since: 7d, ISO date")
    max_related: int = Field(10, ge=1, le=50)
    include_history: bool = False
    as_of: Short | None = Field(None, description="the facts current at this ISO date/time")


class GraphParams(NoNul):
    project: ProjectRef | None = None
    around: Ref | None = Field(None, description="an entry reference or memory:// URL")
    depth: int = Field(1, ge=1, le=3)
    limit: int = Field(2000, ge=1, le=2000)


class ObservationParams(NoNul):
    q: SearchText = ""
    category: Short | None = None
    project: ProjectRef | None = None
    limit: int = Field(20, ge=1, le=100)
