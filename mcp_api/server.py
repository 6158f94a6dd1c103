"""The MCP endpoint: the official SDK's server, bearer-token auth against ApiToken, and the
Streamable HTTP app that memory_site/asgi.py mounts at /mcp.

Stateless with JSON responses: every POST carries its own token, so any web process can answer
any request and nothing is buffered or kept open between calls.
"""

from __future__ import annotations

import logging
import time
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlsplit

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections
from django.utils.text import slugify
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import CallToolResult
from pydantic import ValidationError

from knowledge.actors import Actor
from knowledge.inputs import find_nul
from knowledge.services.tokens import token_authenticate
from mcp_api import render

# Stateless mode "terminates" a session after every request: not news worth a log line.
logging.getLogger("mcp.server.streamable_http").setLevel(logging.WARNING)

INSTRUCTIONS = """\
Cairn is your team's shared, versioned memory: projects → subtopics (paths like a/b/c) → \
Markdown entries. Five rules:
1. Search first: search(query) before answering from memory or writing anything.
2. Read only what search points to: get(id) for one entry, with offset for long ones.
3. Upsert rather than duplicate: the same project + subtopic + title replaces the entry; \
change one part with edit(id, operation, …).
4. Correct rather than rewrite history: when an entry was wrong, correct(id, body, reason) \
keeps both; never delete to fix a mistake.
5. Ask the user before storing secrets, personal data or anything sensitive."""


def recycle_connection() -> None:
    """What Django does around each request, which MCP calls don't get: drop a connection that
    is past CONN_MAX_AGE, broken, or left outside autocommit. Unlike close_old_connections it
    does not force a health-check ping before the next query (a round trip per call): after a
    database restart one call fails and the next one reconnects."""
    for conn in connections.all(initialized_only=True):
        if conn.connection is None:
            continue
        if (
            conn.get_autocommit() != conn.settings_dict["AUTOCOMMIT"]
            or (conn.errors_occurred and not conn.is_usable())
            or (conn.close_at is not None and time.monotonic() >= conn.close_at)
        ):
            conn.close()
        else:
            conn.errors_occurred = False


def _authenticate(secret: str) -> Actor | None:
    recycle_connection()
    return token_authenticate(secret)


class CairnTokenVerifier:
    """Checks `Authorization: Bearer <token>` against the hashed ApiToken table."""

    async def verify_token(self, token: str) -> AccessToken | None:
        actor = await sync_to_async(_authenticate, thread_sensitive=False)(token)
        if actor is None:
            return None
        return AccessToken(
            token=token[:12],  # the prefix is enough to tell tokens apart in logs
            client_id=f"cairn-token-{actor.token_id}",
            scopes=sorted(actor.scopes),
            subject=str(actor.user.pk),
            claims={"actor": actor},
        )


# The optional `X-Cairn-Client: claude-code` header names the agent when the token has no label.
CLIENT_HINT: ContextVar[str] = ContextVar("cairn_client_hint", default="")


class ClientHintMiddleware:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        hint = ""
        if scope["type"] == "http":
            raw = dict(scope["headers"]).get(b"x-cairn-client", b"")
            hint = slugify(raw.decode("latin-1"))[:60]
        token = CLIENT_HINT.set(hint)
        try:
            await self.app(scope, receive, send)
        finally:
            CLIENT_HINT.reset(token)


def current_actor() -> Actor:
    """The Actor of the request being served (set by the bearer-token middleware)."""
    access = get_access_token()
    actor = (access.claims or {}).get("actor") if access else None
    if actor is None:  # the auth middleware guarantees one; this is a wiring error
        raise RuntimeError("MCP tool called without an authenticated token")
    if not actor.agent:
        actor = Actor(
            user=actor.user,
            agent=f"agent:{CLIENT_HINT.get() or 'mcp'}",
            scopes=actor.scopes,
            project_ids=actor.project_ids,
            token_id=actor.token_id,
        )
    return actor


class CairnMCP(MCPServer):
    """MCPServer that names valid arguments when a call uses unknown or malformed ones."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
        tool = self._tool_manager.get_tool(name)
        if tool is None:
            names = ", ".join(t.name for t in self._tool_manager.list_tools())
            return render.error(
                f"No tool {name!r}. Tools: {names}.", {"code": "unknown_tool", "tool": name}
            )
        valid = list(tool.parameters.get("properties", {}))
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
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            problems = [
                f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
                for err in exc.__cause__.errors()
            ]
            return render.error(
                f"{name}() arguments are invalid — " + "; ".join(problems) + ". "
                f"Valid arguments: {', '.join(valid)}.",
                {"code": "validation_failed", "problems": problems, "valid": valid},
            )


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


mcp = CairnMCP(
    name="cairn",
    title="Cairn team memory",
    instructions=INSTRUCTIONS,
    version="0.1.0",
    token_verifier=CairnTokenVerifier(),
    auth=AuthSettings(issuer_url=settings.SITE_URL, resource_server_url=None),
    log_level="WARNING",
)


def streamable_http_app():
    """The Starlette app serving /mcp; its lifespan runs the SDK's session manager."""
    from mcp_api import tools  # noqa: F401  (registers the tools on `mcp`)

    app = mcp.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        transport_security=_transport_security(),
    )
    return ClientHintMiddleware(app)


__all__ = ["CallToolResult", "current_actor", "mcp", "streamable_http_app"]
