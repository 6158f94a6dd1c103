"""Search results and the source check."""

from datetime import datetime
from typing import Literal

from ninja import Field, Schema

from api.schemas.entries import SourceIn
from api.schemas.fields import NoNul, PathText, ProjectRef, SearchText, Short, StrictIn
from knowledge import limits


class SearchHitOut(Schema):
    id: int
    short_id: str
    title: str
    path: str
    address: str = Field(description="The entry's memory:// address, accepted as a reference.")
    kind: str
    tags: list[str]
    status: str
    updated: datetime
    score: float
    snippet: str


class SearchOut(Schema):
    results: list[SearchHitOut]
    note: str = Field(
        "",
        description="Set when entries of the searched set wait for their vectors: they are "
        "found by their words only until the embedding workers reach them (usually seconds).",
    )


class SourceCheckIn(StrictIn):
    project: ProjectRef | None = None  # none: every project the caller can see
    sources: list[SourceIn] = Field(..., min_length=1, max_length=limits.ITEMS)


class SourceCheckOut(Schema):
    kind: str
    external_id: str
    logged: bool
    entries: list[str]


class SearchParams(NoNul):
    # The filters by SearchFilters' names (a docstring would show in the OpenAPI schema); an
    # alias is the published query parameter.
    q: SearchText = ""
    project: ProjectRef | None = None
    subtopic: PathText | None = None
    kinds: list[Short] | None = None
    tags: list[Short] | None = None
    tags_all: bool = False
    status: list[Short] | None = None
    after: Short | None = None
    before: Short | None = None
    limit: int = 10
    include_history: bool = False
    include_transcripts: bool = False
    mode: Literal["hybrid", "text", "semantic"] = "hybrid"
    categories: list[Short] | None = Field(None, alias="category")
