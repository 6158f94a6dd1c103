"""/mcp as an OAuth protected resource (RFC 9728, MCP authorization 2025-11-25): the names it
answers to, the metadata document that names Cairn as its own authorization server, and the
401 challenge that points clients at it.

The site's name is CAIRN_SITE_URL. An installation on loopback answers to each loopback name
(127.0.0.1, localhost, [::1]) on the same port as well: a newcomer may add any of them to a
client, and the client checks that the metadata names the address it used.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from django.conf import settings
from mcp.server.auth.routes import cors_middleware
from starlette.requests import Request
from starlette.responses import JSONResponse

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
DEFAULT_PORTS = {"http": 80, "https": 443}
METADATA_PATH = "/.well-known/oauth-protected-resource"
SCOPES = ["read", "write"]


def canonical_origin(url: str) -> str:
    """scheme://host[:port] in lower case, without a default port or a trailing slash."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    port = parts.port
    return f"{scheme}://{host}" + (f":{port}" if port and port != DEFAULT_PORTS.get(scheme) else "")


def site_origins() -> list[str]:
    """The origins this site answers as, its configured one first."""
    main = canonical_origin(settings.SITE_URL)
    parts = urlsplit(main)
    host = parts.hostname or ""
    if f"[{host}]" in LOOPBACK_NAMES or host in LOOPBACK_NAMES:
        port = f":{parts.port}" if parts.port else ""
        aliases = [f"{parts.scheme}://{name}{port}" for name in LOOPBACK_NAMES]
        return [main, *(a for a in aliases if a != main)]
    return [main]


def mcp_resources() -> frozenset[str]:
    """The resource identifiers (RFC 8707) a token for this server's /mcp may carry."""
    return frozenset(f"{origin}/mcp" for origin in site_origins())


def origin_of(scope) -> str:
    """The site origin a request reached: its Host when that is one of the site's names (the
    loopback aliases), else the configured one (behind a proxy, CAIRN_SITE_URL)."""
    headers = dict(scope.get("headers") or [])
    host = headers.get(b"host", b"").decode("latin-1").strip()
    if host:
        asked = canonical_origin(f"{scope.get('scheme', 'http')}://{host}")
        if asked in site_origins():
            return asked
    return site_origins()[0]


def metadata_url(origin: str) -> str:
    return f"{origin}{METADATA_PATH}/mcp"


async def _metadata(request: Request) -> JSONResponse:
    origin = origin_of(request.scope)
    return JSONResponse(
        {
            "resource": f"{origin}/mcp",
            "authorization_servers": [origin],
            "scopes_supported": SCOPES,
            "bearer_methods_supported": ["header"],
            "resource_name": "Cairn team memory",
        },
        headers={"Cache-Control": "public, max-age=300"},
    )


metadata_endpoint = cors_middleware(_metadata, ["GET", "OPTIONS"])

SIGN_IN = (
    "Sign in: add this server to an MCP client that supports MCP authorization (it opens "
    "Cairn's sign-in page), or send a personal token as 'Authorization: Bearer cairn_…' "
    "(manage.py create_token)."
)


class ChallengeMiddleware:
    """A 401 from /mcp says where to sign in: `WWW-Authenticate: Bearer resource_metadata=…,
    scope="read write"` (RFC 9728 §5.1), with the site name the request used, and a body that
    says what to do. Without CAIRN_OAUTH it names only the personal token."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        replaced = False

        async def challenging(message):
            nonlocal replaced
            if message["type"] == "http.response.start" and message["status"] == 401:
                replaced = True
                challenge = 'Bearer error="invalid_token"'
                if settings.CAIRN_OAUTH:
                    url = metadata_url(origin_of(scope))
                    challenge += f', resource_metadata="{url}", scope="{" ".join(SCOPES)}"'
                body = json.dumps({"error": "invalid_token", "error_description": SIGN_IN})
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"content-length", str(len(body.encode())).encode()),
                            (b"www-authenticate", challenge.encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body.encode()})
                return
            if replaced:  # the SDK's own 401 body: already answered
                return
            await send(message)

        await self.app(scope, receive, challenging)
