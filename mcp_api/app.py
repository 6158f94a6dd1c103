"""The MCP endpoint: the official SDK's server with Cairn's tools, bearer-token auth, and the
Streamable HTTP app that memory_site/asgi.py mounts at /mcp.

Stateless with JSON responses: every POST carries its own token, so any web process can answer
any request and nothing is buffered or kept open between calls.

Imports run one way: app → tools → render; auth and connections stand apart.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import (
    ListResourcesResult,
    ReadResourceResult,
    TextResourceContents,
)
from mcp_types import Tool as MCPTool
from pydantic import ValidationError

from knowledge import limits
from knowledge.inputs import find_nul
from mcp_api import render, resources
from mcp_api.auth import CairnTokenVerifier, ClientHintMiddleware, DatabaseDownMiddleware
from mcp_api.protected_resource import METADATA_PATH, ChallengeMiddleware, metadata_endpoint
from mcp_api.tools import BY_NAME, TOOLS
from ops.version import VERSION

# Stateless mode "terminates" a session after every request: not news worth a log line.
logging.getLogger("mcp.server.streamable_http").setLevel(logging.WARNING)

INSTRUCTIONS = """\
Cairn is your team's shared, versioned memory: projects → subtopics (paths like a/b/c) → \
Markdown entries. Five rules:
1. Search first: search(query) before answering from memory or writing anything.
2. Read only what search points to: get(id) for one entry, with offset for long ones; \
build_context(id) for it with what it links to and what links to it.
3. Upsert rather than duplicate: the same project + subtopic + title replaces the entry; \
change one part with edit(id, operation, …). \
Write facts as `- [category] fact #tag` and links as `- relation_type [[Other entry]]`.
4. Correct rather than rewrite history: when an entry was wrong, correct(id, body, reason) \
keeps both; never delete to fix a mistake.
5. Ask the user before storing secrets, personal data or anything sensitive.
Arguments every tool reads alike: id (an entry) is its number (42), short id, \
project/subtopic/title or memory:// address; project is a slug or name, any case, and left \
out means every project you can see; subtopic is a path 'a/b' (or 'a > b'), created on write; \
lists (tags, kinds, status, category) are arrays, or one string 'a, b'; dates are ISO dates or \
ages like '7d', '2 weeks', '12h'; with expected_version, a write whose entry moved on \
applies if it touches nothing changed since (and says so), else fails with a conflict; status \
open means it needs follow-up, resolved when done. Long texts have limits (a call over one is \
refused, naming it)."""


# Old argument names still accepted: one name for an entry reference (id) and one for "changed
# since" (since) in every tool. (search's `since` and `category` are themselves the published
# aliases of SearchFilters' `after` and `categories`, declared on its argument model.)
ALIASES = {"id_or_path": "id", "url": "id", "after": "since", "timeframe": "since"}


def _renamed(arguments: dict[str, Any], valid: list[str]) -> dict[str, Any]:
    out = {}
    for name, value in arguments.items():
        new = ALIASES.get(name)
        if name not in valid and new in valid and new not in arguments:
            name = new
        out[name] = value
    return out


class CairnMCP(MCPServer):
    """MCPServer serving the tools of mcp_api.tools (each checked by its own argument model,
    with the valid arguments named when a call uses unknown or malformed ones) and the entries
    the caller can see as resources (mcp_api.resources)."""

    async def _handle_list_resources(self, ctx, params) -> ListResourcesResult:
        found, cursor = await resources.list_page(getattr(params, "cursor", None))
        return ListResourcesResult(resources=found, next_cursor=cursor)

    async def list_resource_templates(self):
        return resources.TEMPLATES

    async def _handle_read_resource(self, ctx, params) -> ReadResourceResult:
        text = await resources.read(str(params.uri))
        return ReadResourceResult(
            contents=[TextResourceContents(uri=params.uri, text=text, mime_type=resources.MARKDOWN)]
        )

    async def list_tools(self) -> list[MCPTool]:
        return LISTED

    def _tool_input_schema(self, name: str) -> dict[str, Any] | None:
        return SCHEMAS.get(name)

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
        tool = BY_NAME.get(name)
        if tool is None:
            names = ", ".join(BY_NAME)
            return render.error(
                f"No tool {name!r}. Tools: {names}.", {"code": "unknown_tool", "tool": name}
            )
        valid = list(SCHEMAS[name].get("properties", {}))
        arguments = _renamed(arguments or {}, valid)
        unknown = sorted(set(arguments) - set(valid))
        if unknown:
            return render.error(
                f"{name}() has no argument {', '.join(map(repr, unknown))}. "
                f"Valid arguments: {', '.join(valid)}.",
                {"code": "unknown_argument", "unknown": unknown, "valid": valid},
            )
        if (where := find_nul(arguments)) is not None:
            return render.error(
                f"{name}(): {where} contains a NUL byte (\\x00), which cannot be stored. "
                "Remove it and call again.",
                {"code": "validation_failed", "field": where},
            )
        try:
            args = tool.arguments.model_validate(arguments)
        except ValidationError as exc:
            problems = _problems(exc.errors())
            return render.error(
                f"{name}() arguments are invalid — " + "; ".join(problems) + ". "
                f"Valid arguments: {', '.join(valid)}.",
                {"code": "validation_failed", "problems": problems, "valid": valid},
            )
        return await tool.call(args)


def _problems(errors: list[dict]) -> list[str]:
    """One line per problem. An argument over its length limit gets just that line, with the
    length and the limit, not the union's other branches (`int`, `str`) it failed too."""
    too_long = {err["loc"][0] for err in errors if limits.too_long(err) and err["loc"]}
    problems = []
    for err in errors:
        where = ".".join(str(p) for p in err["loc"] if not _is_branch(p)) or "arguments"
        if message := limits.too_long(err):
            problems.append(f"{where}: {message}")
        elif not (err["loc"] and err["loc"][0] in too_long):
            problems.append(f"{where}: {err['msg']}")
    return problems


def _is_branch(part: object) -> bool:
    """pydantic's name for a union member in an error's location (`int`, `constrained-str`)."""
    return isinstance(part, str) and (part in ("int", "str", "none") or "[" in part or "-" in part)


def _transport_security() -> TransportSecuritySettings:
    hosts, origins = [], list(settings.CAIRN_MCP_ALLOWED_ORIGINS)
    for host in settings.ALLOWED_HOSTS:
        if host == "*" or host.startswith("."):
            continue  # wildcards are Django's; MCP needs names: list them explicitly
        hosts += [host, f"{host}:*"]
    hosts += settings.CAIRN_MCP_ALLOWED_HOSTS
    site = urlsplit(settings.SITE_URL)
    origins.append(f"{site.scheme}://{site.netloc}")
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


# Length limits from here up are safety caps (knowledge.limits: references, reasons, dates,
# lists of 500 items), not facts an agent writes by: tools/list leaves them out. The ones below
# (a title's 300 characters, a kind's 40) stay listed.
SAFETY_CAP = 1_000


def _lean(schema: Any) -> Any:
    """A JSON schema without pydantic's generated titles (`"title": "Max Chars"`, which repeat
    the name), without the null branch of optional arguments, without safety caps, with
    descriptions on one line: tools/list is read into every agent's context. Calls are still
    checked by the full model."""
    if isinstance(schema, list):
        return [_lean(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if schema.get("additionalProperties") is False:  # CairnMCP.call_tool names the valid ones
        schema = {k: v for k, v in schema.items() if k != "additionalProperties"}
    if "default" in schema and schema["default"] is None:  # optional: null says nothing more
        schema = {k: v for k, v in schema.items() if k != "default"}
        branches = [b for b in schema.get("anyOf", []) if b != {"type": "null"}]
        if len(branches) == 1:
            schema = {**{k: v for k, v in schema.items() if k != "anyOf"}, **branches[0]}
        elif branches:
            schema = {**schema, "anyOf": branches}
    out = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if (key == "maxLength" and value >= SAFETY_CAP) or key in ("maxItems", "propertyNames"):
            continue  # a call past a safety cap is refused with the limit named
        if key == "default" and value == "":
            continue  # an empty text is what leaving the argument out sends
        if key in ("properties", "$defs"):
            out[key] = {name: _lean(sub) for name, sub in value.items()}
        elif key == "description" and isinstance(value, str):
            out[key] = " ".join(value.split())
        else:
            out[key] = _lean(value)
    return out


# What tools/list says of each tool, in the order of TOOLS.
SCHEMAS = {t.name: _lean(t.arguments.model_json_schema(by_alias=True)) for t in TOOLS}
LISTED = [
    MCPTool(
        name=t.name,
        description=t.description,
        input_schema=SCHEMAS[t.name],
        annotations=t.annotations,
    )
    for t in TOOLS
]


def build_server() -> CairnMCP:
    """The server with the tools of mcp_api.tools and the prompts of mcp_api.resources."""
    server = CairnMCP(
        name="cairn",
        title="Cairn team memory",
        instructions=INSTRUCTIONS,
        version=VERSION,
        token_verifier=CairnTokenVerifier(),
        auth=AuthSettings(issuer_url=settings.SITE_URL, resource_server_url=None),
        log_level="WARNING",
    )
    for fn in resources.PROMPTS:
        server.prompt(description=" ".join((fn.__doc__ or "").split()))(fn)
    if settings.CAIRN_OAUTH:
        # RFC 9728 §3.1: at the root and at /mcp's own suffix; memory_site/asgi.py routes both.
        for path in (METADATA_PATH, f"{METADATA_PATH}/mcp"):
            server.custom_route(path, methods=["GET", "OPTIONS"])(metadata_endpoint)
    return server


mcp = build_server()


def streamable_http_app():
    """The Starlette app serving /mcp; its lifespan runs the SDK's session manager."""
    app = mcp.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        transport_security=_transport_security(),
    )
    return DatabaseDownMiddleware(ClientHintMiddleware(ChallengeMiddleware(app)))
