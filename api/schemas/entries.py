"""Entries: what a writer sends (create, upsert, patch, edit, move, status, correct, verify) and
what a reader gets back."""

from datetime import datetime
from typing import Literal

from ninja import Field, Schema

from api.schemas.fields import Items, NoNul, PathText, ProjectRef, ReasonText, Short, StrictIn
from knowledge import limits
from knowledge.models import Entry
from knowledge.selectors.supersession import shown_link, unseen_links


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
    # An entry the caller may not see is null, with its `_hidden` flag set (issue 32).
    supersedes: int | None
    superseded_by: int | None
    supersedes_hidden: bool
    superseded_by_hidden: bool
    created: datetime
    updated: datetime
    chars: int = Field(description="The body's size in characters.")
    lines: int = Field(description="The body's lines.")

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
    def resolve_supersedes(obj: Entry, context) -> int | None:
        return shown_link(obj, "supersedes", _unseen(obj, context))

    @staticmethod
    def resolve_superseded_by(obj: Entry, context) -> int | None:
        return shown_link(obj, "superseded_by", _unseen(obj, context))

    @staticmethod
    def resolve_supersedes_hidden(obj: Entry, context) -> bool:
        return obj.supersedes_id in _unseen(obj, context)

    @staticmethod
    def resolve_superseded_by_hidden(obj: Entry, context) -> bool:
        return obj.superseded_by_id in _unseen(obj, context)

    @staticmethod
    def resolve_created(obj: Entry) -> datetime:
        return obj.created_at

    @staticmethod
    def resolve_updated(obj: Entry) -> datetime:
        return obj.updated_at

    @staticmethod
    def resolve_chars(obj: Entry) -> int:
        return obj.chars

    @staticmethod
    def resolve_lines(obj: Entry) -> int:
        return obj.lines


def _unseen(obj: Entry, context) -> frozenset[int]:
    """The links of `obj` the caller may not see, asked once per entry (no query without a
    link). Without a request (a schema used outside a response) nothing is shown."""
    if not hasattr(obj, "_unseen_links"):
        request = (context or {}).get("request")
        actor = getattr(request, "auth", None)
        links = frozenset(pk for pk in (obj.supersedes_id, obj.superseded_by_id) if pk)
        obj._unseen_links = unseen_links(actor, [obj]) if actor is not None else links
    return obj._unseen_links


class EntryDetailOut(EntryOut):
    body: str
    metadata: dict
    sources: list[SourceOut]
    verified_at: datetime | None

    @staticmethod
    def resolve_sources(obj: Entry) -> list:
        return list(obj.sources.all())


class ChangeSinceOut(Schema):
    version: int
    at: str
    by: str
    reason: str


class AppliedOnOut(Schema):
    read_version: int = Field(description="The version the writer read (expected_version).")
    version: int = Field(description="The current version the write was applied on.")
    changes: list[ChangeSinceOut] = Field(description="The revisions since: who, when, why.")


class EntryWriteOut(EntryDetailOut):
    applied_on: AppliedOnOut | None = Field(
        None,
        description="Set when expected_version was stale but the write touched nothing changed "
        "since: it applied on the current version, the other writer's changes kept.",
    )

    @staticmethod
    def resolve_applied_on(obj: Entry) -> dict | None:
        return getattr(obj, "applied_on", None)


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
    schema_report: dict | None = None  # warn mode: how the entry fits its note type's schema
    # What the write did: lines added and removed (the removed text with who wrote it), fields
    # changed, observations and relations parsed, sources recorded, similar entries (new one).
    report: dict | None = None


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


class UndeleteIn(StrictIn):
    reason: ReasonText


class EntryFilters(NoNul):
    # Fields by SearchFilters' names (a docstring would show in the OpenAPI schema); the alias
    # is the published query parameter.
    project: ProjectRef | None = None
    subtopic: PathText | None = None
    kinds: list[Short] | None = Field(None, alias="kind")
    status: list[Short] | None = None
    include_history: bool = False
    sort: Literal["updated", "title", "size"] = Field(
        "updated", description="updated: newest first; size: largest body first."
    )
