"""ASGI entry point: /mcp (and its protected-resource metadata) goes to the MCP Streamable HTTP
app, MCP authorization's machine endpoints (token, registration, revocation, server metadata)
to memory_site.oauth.endpoints, everything else to Django (the consent page among it).

Django's ASGI handler does not speak the lifespan protocol; the MCP app needs it (its session
manager runs for the server's lifetime), so lifespan events go to the MCP app.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_site.settings")

django_app = get_asgi_application()

from django.conf import settings  # noqa: E402

from mcp_api.app import streamable_http_app  # noqa: E402  (needs Django set up)
from mcp_api.protected_resource import METADATA_PATH  # noqa: E402
from memory_site.oauth import endpoints  # noqa: E402

mcp_app = streamable_http_app()
oauth_app = endpoints.app() if settings.CAIRN_OAUTH else None
OAUTH_PATHS = frozenset(endpoints.PATHS)
MCP_METADATA_PATHS = frozenset({METADATA_PATH, f"{METADATA_PATH}/mcp"})


def _is_mcp(scope) -> bool:
    if scope["type"] == "lifespan":
        return True
    path = scope.get("path", "")
    return path == "/mcp" or path.startswith("/mcp/") or path in MCP_METADATA_PATHS


async def application(scope, receive, send):
    if _is_mcp(scope):
        await mcp_app(scope, receive, send)
    elif oauth_app is not None and scope.get("path") in OAUTH_PATHS:
        await oauth_app(scope, receive, send)
    else:
        await django_app(scope, receive, send)
