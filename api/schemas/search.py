"""Search results and the source check."""

from datetime import datetime
from typing import Literal

from ninja import Field, Schema

from api.schemas.entries import SourceIn
from api.schemas.fields import NoNul, PathText, ProjectRef, SearchText, Short, StrictIn
from knowledge import limits


class SignalsOut(Schema):
    words_rank: int | None = Field(None, description="Place in the full-text list (from 1).")
    words_score: float | None = None
    meaning_rank: int | None = Field(None, description="Place in the list by meaning (from 1).")
    similarity: float | None = Field(None, description="Cosine similarity of its best passage.")
    passage: int | None = Field(None, description="That passage (chunk), from 1.")
    words_part: float = Field(0.0, description="What the words add to the fused score.")
    meaning_part: float = Field(0.0, description="What the meaning adds to the fused score.")
    title_words: list[str] = Field(description="Query words in the title (weighted most).")
    observation: str = Field(description="The observation the words matched best.")
    category: bool = Field(description="A query word names that observation's category.")
    searched: list[str] = Field(description='The lists that ran: "words", "meaning".')
    first_place: int | None = Field(
        None, description="Its place before the learned second stage moved it (None: not moved)."
    )
    date_used: str = Field(
        "", description='A "when" question: the date the hit shows (written in it, else its own).'
    )


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
    matched: list[str] = Field(description='How it was found: "text" (words), "semantic".')
    matched_in: str = Field(description='"observation [category]", "passage 2" or "".')
    chars: int = Field(description="The body's size in characters.")
    lines: int = Field(description="The body's lines.")
    signals: SignalsOut | None = Field(None, description="Each signal's part (explain=true).")


class SearchOut(Schema):
    results: list[SearchHitOut]
    words_matched: bool | None = Field(
        None,
        description="false when no entry holds a word of the query (every hit was found by "
        "meaning); null when words were not searched (mode=semantic).",
    )
    left_out: int = Field(
        0,
        description="Hits of the `limit` asked for left out by the relevance floor: they hold "
        "only common words of the query and are not close in meaning (weak=true lists them).",
    )
    note: str = Field(
        "",
        description="What to know first: that no entry holds the query's words, that weaker "
        "matches were left out, and when "
        "entries of the searched set wait for their vectors (found by their words only until "
        "the embedding workers reach them, usually seconds).",
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
    explain: bool = False
    weak: bool = False
    categories: list[Short] | None = Field(None, alias="category")
