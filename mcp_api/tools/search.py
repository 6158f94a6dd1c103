"""Finding things: search, recall around a topic (build_context), and the source check."""

from __future__ import annotations

from typing import Annotated

from django.conf import settings
from pydantic import Field

from knowledge import limits
from knowledge.actors import Actor
from knowledge.reads.context import build_context as context_of
from knowledge.search import (
    EXPLAIN_TOP,
    SearchFilters,
    SearchHit,
    explain_parts,
    left_out_note,
    no_words_note,
    search_entries,
    stages,
)
from knowledge.selectors import sources_check
from mcp_api import render
from mcp_api.tools.arguments import OptProject, Short, Since, Sources, StrList, Subtopic
from mcp_api.tools.arguments import ToolArguments as Arguments
from mcp_api.tools.registry import READ, Tool


class SearchArguments(Arguments):
    query: Annotated[
        str,
        Field(
            max_length=settings.CAIRN_SEARCH_MAX_QUERY_CHARS,
            description="Words; quotes for phrases. Empty: filters only, newest first.",
        ),
    ] = ""
    # The filters, by SearchFilters' names; `since` and `category` are what agents send.
    project: OptProject = None
    subtopic: Subtopic = None
    kinds: StrList = None
    tags: StrList = None
    status: StrList = None
    after: Annotated[Since, Field(alias="since")] = None
    before: Annotated[Short | None, Field(description="Changed before this date or age.")] = None
    limit: Annotated[int, Field(ge=1, le=50)] = 10
    include_history: Annotated[bool, Field(description="Also superseded entries.")] = False
    categories: Annotated[
        StrList,
        Field(
            alias="category",
            description="Only entries with a '- [category] …' observation of these.",
        ),
    ] = None
    explain: Annotated[bool, Field(description="Show each hit's ranking signals.")] = False
    weak: bool = False  # also the hits below the relevance floor (the answer says when)


def search(actor: Actor, args: SearchArguments):
    """Find entries by words or meaning, best first, each with its memory:// address; get(id)
    reads one. Search before writing."""
    with stages.stage("search service"):
        filters = SearchFilters.pick(dict(args))
        found = search_entries(actor, args.query, filters=filters, limit=args.limit, weak=args.weak)
        hits = [_shown(hit, i, args.explain) for i, hit in enumerate(found)]
    with stages.stage("render"):
        return render.search_results(
            args.query,
            hits,
            found.note,
            words_matched=found.words_matched,
            no_words=no_words_note(args.query, found),
            left_out=left_out_note(found),
        )


def _shown(hit: SearchHit, place: int, explain: bool) -> dict:
    """A hit as the answer shows it: its signals only when asked, and why it ranks there for
    the top few (the questions are about those)."""
    shown = hit.as_dict()
    if not explain:
        shown.pop("signals", None)
    elif place < EXPLAIN_TOP:
        shown["why"] = explain_parts(hit)
    return shown


class ContextArguments(Arguments):
    id: Annotated[
        str,
        Field(
            max_length=limits.REF,
            description="An entry reference, a glob memory://project/sub/* (or /** for all "
            "below), or search words.",
        ),
    ]
    depth: Annotated[int, Field(ge=1, le=3, description="Hops through links.")] = 1
    since: Since = None
    max_related: Annotated[int, Field(ge=1, le=50)] = 10
    include_history: Annotated[
        bool, Field(description="Also facts no longer current, and since when.")
    ] = False
    as_of: Annotated[
        Short | None, Field(description="Facts as they were at this ISO date/time.")
    ] = None


def build_context(actor: Actor, args: ContextArguments):
    """Recall a topic in one call: an entry (or a glob's or search's entries), its facts, and
    the entries linked to or from it, up to depth hops."""
    context = context_of(
        actor,
        args.id,
        depth=args.depth,
        timeframe=args.since or None,
        max_related=args.max_related,
        include_history=args.include_history,
        as_of=args.as_of or None,
    )
    return render.context(context)


class CheckSourcesArguments(Arguments):
    sources: Annotated[
        Sources, Field(description='[{"kind": "email", "external_id": "<message-id>"}, …]')
    ]
    project: OptProject = None


def check_sources(actor: Actor, args: CheckSourcesArguments):
    """Which sources (mail, tickets, chats) are already logged, and by which entries."""
    project = args.project or None
    return render.sources_checked(sources_check(actor, project, args.sources), project)


SEARCH = Tool("search", SearchArguments, search, READ)
CHECK_SOURCES = Tool("check_sources", CheckSourcesArguments, check_sources, READ)
BUILD_CONTEXT = Tool("build_context", ContextArguments, build_context, READ)
