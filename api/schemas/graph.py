"""The knowledge graph: context, relations, graph data and observations."""

from datetime import datetime
from typing import Literal

from ninja import Field, Schema

from api.schemas.fields import NoNul, ProjectRef, Ref, SearchText, Short


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
    observations_cut: bool = Field(False, description="the entry held more facts than shown")


class RelatedEntryOut(ContextEntryOut):
    relation: ContextRelationOut


class ContextLinkOut(Schema):
    source: str = Field(description="The linking entry's short id.")
    source_title: str
    type: str
    target: str = Field(description="The linked entry's short id.")
    target_title: str


class ContextOut(Schema):
    url: str
    matched: Literal["entry", "glob", "search"]
    depth: int
    timeframe: str | None
    as_of: datetime | None
    primary: list[ContextEntryOut]
    primary_cut: bool
    links: list[ContextLinkOut] = Field(
        description="Relations among the primary entries (a glob's or a search's)."
    )
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
    edges_cut: bool = Field(False, description="more edges joined these nodes than were sent")


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
