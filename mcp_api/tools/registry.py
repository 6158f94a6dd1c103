"""A tool is one argument model and one handler, declared together in its module; what every
call needs besides (the caller, the hop to a worker thread, connection recycling, timing, and
knowledge errors worded for the agent) is done here, once for all of them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from django.db import InterfaceError, OperationalError
from mcp_types import CallToolResult, ToolAnnotations

from knowledge.actors import Actor
from knowledge.errors import KnowledgeError, NotFound
from knowledge.search import search_entries
from mcp_api import render
from mcp_api.auth import current_actor
from mcp_api.connections import recycle_connection
from mcp_api.tools.arguments import ToolArguments
from ops.timing import content_size, timed

# Hints at the protocol's defaults (readOnlyHint false, idempotentHint false) are left out:
# they say nothing a client does not assume, and tools/list is read into every agent's context.
READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(destructive_hint=False, open_world_hint=False)
IDEMPOTENT_WRITE = ToolAnnotations(
    destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
DESTRUCTIVE = ToolAnnotations(destructive_hint=True, idempotent_hint=True, open_world_hint=False)

Handler = Callable[[Actor, Any], CallToolResult]


@dataclass(frozen=True)
class Tool:
    """One MCP tool. Its description is the handler's docstring (what the agent reads)."""

    name: str
    arguments: type[ToolArguments]
    handler: Handler
    annotations: ToolAnnotations

    @property
    def description(self) -> str:
        return " ".join((self.handler.__doc__ or "").split())

    def answer(self, actor: Actor, arguments: dict[str, Any]) -> CallToolResult:
        """The answer to a call, in this thread (prompts and tests); bad arguments raise
        pydantic's ValidationError."""
        return guarded(self.handler, actor, self.arguments.model_validate(arguments))

    async def call(self, args: ToolArguments) -> CallToolResult:
        """A call over MCP: the caller's actor, then the work in a worker thread."""
        actor = current_actor()
        return await sync_to_async(self._timed, thread_sensitive=False)(actor, args)

    def _timed(self, actor: Actor, args: ToolArguments) -> CallToolResult:
        recycle_connection()  # what Django does around a request, which a tool call doesn't get
        with timed("mcp", self.name, content_bytes=content_size(dict(args))) as timer:
            result = guarded(self.handler, actor, args)
            if result.is_error:
                timer.outcome = "refused"
        return result


def guarded(handler: Handler, actor: Actor, args: ToolArguments) -> CallToolResult:
    """Run one handler; knowledge errors become tool errors the agent can act on."""
    try:
        return handler(actor, args)
    except NotFound as exc:
        return render.knowledge_error(exc, found=_found_instead(actor, exc))
    except KnowledgeError as exc:
        return render.knowledge_error(exc)
    except (OperationalError, InterfaceError):
        return render.database_down()


def _found_instead(actor: Actor, exc: NotFound) -> list[dict]:
    """For an entry that is not there: what a search for its name finds."""
    term = str(exc.data.get("entry") or "").rsplit("/", 1)[-1]
    if not term or term.isdigit() or exc.data.get("deleted"):
        return []
    return [hit.as_dict() for hit in search_entries(actor, term.replace("-", " "), limit=3)]
