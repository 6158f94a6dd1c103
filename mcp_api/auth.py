"""Who is calling: bearer tokens checked against ApiToken, and the optional client hint that
names the agent when the token has no label."""

from __future__ import annotations

import json
from contextvars import ContextVar

from asgiref.sync import sync_to_async
from django.db import InterfaceError, OperationalError
from django.utils.text import slugify
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken

from knowledge.actors import Actor
from knowledge.runs import RUN_HEADER, client_run
from knowledge.search import stages
from knowledge.services.tokens import token_authenticate
from mcp_api.connections import recycle_connection
from mcp_api.hints import DATABASE_DOWN
from mcp_api.protected_resource import mcp_resources
from ops.metrics import auth_failed


def _authenticate(secret: str) -> Actor | None:
    with stages.stage("token auth"):
        recycle_connection()
        # A token a client got through MCP authorization is good here only if it was issued
        # for this /mcp (RFC 8707); a personal token is good everywhere.
        return token_authenticate(secret, resources=mcp_resources())


class CairnTokenVerifier:
    """Checks `Authorization: Bearer <token>` against the hashed ApiToken table."""

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            actor = await sync_to_async(_authenticate, thread_sensitive=False)(token)
        except (OperationalError, InterfaceError):
            outage = _OUTAGE.get()
            if outage is None:  # served without DatabaseDownMiddleware
                raise
            outage.append(True)
            return None
        if actor is None:
            auth_failed("mcp")
            return None
        return AccessToken(
            token=token[:12],  # the prefix is enough to tell tokens apart in logs
            client_id=f"cairn-token-{actor.token_id}",
            scopes=sorted(actor.scopes),
            subject=str(actor.user.pk),
            claims={"actor": actor},
        )


# The optional `X-Cairn-Client: claude-code` header names the agent when the token has no label;
# the optional `X-Cairn-Run: <id>` header marks the writes of one run (knowledge.runs).
CLIENT_HINT: ContextVar[str] = ContextVar("cairn_client_hint", default="")
CLIENT_RUN: ContextVar[str] = ContextVar("cairn_client_run", default="")


class ClientHintMiddleware:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        hint = run = ""
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            hint = slugify(headers.get(b"x-cairn-client", b"").decode("latin-1"))[:60]
            run = client_run(headers.get(RUN_HEADER.lower().encode(), b""))
        token, marked = CLIENT_HINT.set(hint), CLIENT_RUN.set(run)
        try:
            with stages.stage("MCP request"):  # the server's whole part of a call
                await self.app(scope, receive, send)
        finally:
            CLIENT_HINT.reset(token)
            CLIENT_RUN.reset(marked)


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
    if run := CLIENT_RUN.get():
        actor = actor.in_run(run)
    return actor


# Set by DatabaseDownMiddleware for each request; the token check notes a database outage in it.
_OUTAGE: ContextVar[list | None] = ContextVar("cairn_database_outage", default=None)


class DatabaseDownMiddleware:
    """A database outage while the token is checked answers 503 with Retry-After and a JSON-RPC
    error the agent can read, not a 401 (the token is fine) or a bare 500."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        outage: list = []
        token = _OUTAGE.set(outage)

        async def replying(message):
            if not outage:
                return await send(message)
            if message["type"] == "http.response.start":  # the SDK's 401: replaced
                body = json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": None,
                        "error": {"code": -32000, "message": DATABASE_DOWN},
                    }
                ).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 503,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"retry-after", b"5"),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})

        try:
            await self.app(scope, receive, replying)
        finally:
            _OUTAGE.reset(token)
