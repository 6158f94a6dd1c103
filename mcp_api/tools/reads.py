"""Reading one entry: a window of it, its revisions, a diff between two of them."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from history.selectors import correction_diff, entry_diff, entry_history
from knowledge.actors import Actor
from knowledge.graph.selectors import entry_relations
from knowledge.selectors import entry_get
from knowledge.selectors.supersession import unseen_links
from mcp_api import history_text, render
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
    """An entry's revisions (and its corrections'), newest first: version, when, who, why."""
    entry = entry_get(actor, args.id)
    rows = entry_history(actor, entry, limit=args.limit, corrections=True)
    return history_text.revisions(entry, rows)


class DiffArguments(Arguments):
    id: EntryRef
    from_version: Annotated[
        int | None,
        Field(ge=1, description="Default: the one before, or the corrected text."),
    ] = None
    to_version: Annotated[int | None, Field(ge=1, description="Default: the current one.")] = None


def diff(actor: Actor, args: DiffArguments):
    """A unified diff of an entry between two versions (history lists them)."""
    entry = entry_get(actor, args.id)
    to_version = args.to_version or entry.version
    newer = entry.superseded_by_id and entry.superseded_by_id not in unseen_links(actor, [entry])
    corrected_by = entry.superseded_by.short_id if newer else ""
    if args.from_version is None and (entry.version == 1 or args.to_version == 1):
        fix = correction_diff(actor, entry, to_version=to_version)
        if fix is not None:
            return history_text.entry_diff(
                entry, fix["from_version"], to_version, fix["diff"], from_entry=fix["from_entry"]
            )
    from_version = args.from_version or max(1, to_version - 1)
    text = entry_diff(actor, entry, from_version=from_version, to_version=to_version)
    return history_text.entry_diff(entry, from_version, to_version, text, corrected_by=corrected_by)


GET = Tool("get", GetArguments, get, READ)
HISTORY = Tool("history", HistoryArguments, history, READ)
DIFF = Tool("diff", DiffArguments, diff, READ)
