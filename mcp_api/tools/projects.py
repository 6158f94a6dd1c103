"""Projects and the caller: create a project, who am I."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from knowledge import limits
from knowledge.actors import Actor
from knowledge.reads.whoami import actor_profile
from knowledge.services import ProjectFields, project_create
from mcp_api import render
from mcp_api.tools.arguments import ToolArguments as Arguments
from mcp_api.tools.registry import READ, WRITE, Tool
from ops.version import VERSION


class CreateProjectArguments(Arguments):
    slug: Annotated[str, Field(max_length=limits.SLUG, description="e.g. 'customer-x'.")]
    name: Annotated[str | None, Field(max_length=limits.NAME, description="Default: the slug.")] = (
        None
    )
    description: Annotated[str, Field(max_length=limits.DESCRIPTION)] = ""
    sensitivity: Literal["public", "internal", "confidential", "restricted"] = "internal"

    def fields(self) -> ProjectFields:
        return ProjectFields.pick(dict(self))


def create_project(actor: Actor, args: CreateProjectArguments):
    """Create a project; ask the user first (most writes belong in an existing one)."""
    project = project_create(actor=actor, slug=args.slug, fields=args.fields())
    return render.project_created(project)


class WhoamiArguments(Arguments):
    pass


def whoami(actor: Actor, args: WhoamiArguments):
    """Who you are: user, agent, token scope and expiry, your projects and role in each."""
    return render.whoami({**actor_profile(actor), "version": VERSION})


CREATE_PROJECT = Tool("create_project", CreateProjectArguments, create_project, WRITE)
WHOAMI = Tool("whoami", WhoamiArguments, whoami, READ)
