"""Reading one entry: a window of it, its revisions, a diff between two of them."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from history.selectors import entry_diff, entry_history
from knowledge.actors import Actor
from knowledge.graph.selectors import entry_relations
from knowledge.selectors import entry_get
from knowledge.selectors.supersession import unseen_links
from mcp_api import render
from mcp_api.tools.arguments import EntryRef
from mcp_api.tools.arguments import ToolArguments as Arguments
from mcp_api.tools.registry import READ, Tool


class GetArguments(Arguments):
    id: EntryRef
    offset: Annotated[int, Field(ge=0, description="Start at this character.")] = 0
    max_chars: Annotated[int, Field(ge=200, le=50000)] = 8000


def get(actor: Actor, args: GetArguments):
    """Read one entry: metadata, links, and a window of its body (next_offset continues)."""
    entry = entry_get(actor, args.id)
    return render.entry_window(
        entry,
        offset=args.offset,
        max_chars=args.max_chars,
        unseen=unseen_links(actor, [entry]),
        relations=entry_relations(actor, entry),
    )


class HistoryArguments(Arguments):
    id: EntryRef
    limit: Annotated[int, Field(ge=1, le=200)] = 20


def history(actor: Actor, args: HistoryArguments):
    """An entry's revisions, newest first: version, when, who, why, git commit."""
    entry = entry_get(actor, args.id)
    return render.revisions(entry, entry_history(actor, entry, limit=args.limit))


class DiffArguments(Arguments):
    id: EntryRef
    from_version: Annotated[int, Field(ge=1, description="The older version.")]
    to_version: Annotated[int | None, Field(ge=1, description="Default: the current one.")] = None


def diff(actor: Actor, args: DiffArguments):
    """A unified diff of an entry between two versions (history lists them)."""
    entry = entry_get(actor, args.id)
    text = entry_diff(actor, entry, from_version=args.from_version, to_version=args.to_version)
    return render.entry_diff(entry, args.from_version, args.to_version or entry.version, text)


GET = Tool("get", GetArguments, get, READ)
HISTORY = Tool("history", HistoryArguments, history, READ)
DIFF = Tool("diff", DiffArguments, diff, READ)
