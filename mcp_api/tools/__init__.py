"""The MCP tools, each declared once: an argument model and a handler, registered together
(registry.Tool) in the module of its group. TOOLS is the order of tools/list."""

from typing import Any

from mcp_types import CallToolResult

from knowledge.actors import Actor
from mcp_api.tools import listings, note_types, projects, reads, search, writes
from mcp_api.tools.registry import Tool

TOOLS: list[Tool] = [
    search.SEARCH,
    reads.GET,
    writes.UPSERT,
    writes.EDIT,
    writes.UPDATE,
    listings.LIST_OPEN,
    listings.RECENT,
    listings.BROWSE,
    reads.HISTORY,
    reads.DIFF,
    writes.DELETE,
    search.CHECK_SOURCES,
    projects.CREATE_PROJECT,
    writes.CORRECT,
    search.BUILD_CONTEXT,
    projects.WHOAMI,
    note_types.SCHEMA_VALIDATE,
    note_types.SCHEMA_INFER,
    note_types.SCHEMA_DIFF,
]
BY_NAME: dict[str, Tool] = {tool.name: tool for tool in TOOLS}


def answer(name: str, actor: Actor, arguments: dict[str, Any]) -> CallToolResult:
    """The answer of tool `name` to `arguments`, in this thread (prompts and tests)."""
    return BY_NAME[name].answer(actor, arguments)
