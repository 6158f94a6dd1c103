"""Listings: what needs follow-up, what changed recently, a project's tree."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from knowledge import inputs
from knowledge.actors import Actor
from knowledge.reads.listings import entries_open, entries_recent, project_browse
from knowledge.selectors import project_overview
from knowledge.selectors.supersession import unseen_links
from mcp_api import render
from mcp_api.tools.arguments import OptProject, Short, Subtopic
from mcp_api.tools.arguments import ToolArguments as Arguments
from mcp_api.tools.registry import READ, Tool


class ListOpenArguments(Arguments):
    project: OptProject = None
    subtopic: Subtopic = None
    limit: Annotated[int, Field(ge=1, le=200)] = 50


def list_open(actor: Actor, args: ListOpenArguments):
    """Entries needing follow-up (open, or tasks not resolved), newest first."""
    entries = entries_open(
        actor, project=args.project or None, subtopic=args.subtopic or None, limit=args.limit
    )
    return render.open_entries(entries, unseen=unseen_links(actor, entries))


class RecentArguments(Arguments):
    project: OptProject = None
    since: Short = "7d"
    limit: Annotated[int, Field(ge=1, le=200)] = 20


def recent(actor: Actor, args: RecentArguments):
    """Entries changed recently, newest first."""
    start = inputs.when(args.since or "7d", field="since")
    entries = entries_recent(actor, project=args.project or None, since=start, limit=args.limit)
    return render.recent_entries(entries, start, unseen=unseen_links(actor, entries))


class BrowseArguments(Arguments):
    project: OptProject = None
    subtopic: Subtopic = None
    sort: Literal["title", "size"] = "title"  # size: largest first


def browse(actor: Actor, args: BrowseArguments):
    """No project: all projects, with counts. A project: its subtopic tree and the entries
    directly in subtopic."""
    if not args.project:
        return render.projects(project_overview(actor))
    page = project_browse(
        actor, project=args.project, subtopic=args.subtopic or None, sort=args.sort
    )
    unseen = unseen_links(actor, page["entries"])
    return render.project_page(page, args.subtopic or "", unseen=unseen)


LIST_OPEN = Tool("list_open", ListOpenArguments, list_open, READ)
RECENT = Tool("recent", RecentArguments, recent, READ)
BROWSE = Tool("browse", BrowseArguments, browse, READ)
