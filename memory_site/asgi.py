"""ASGI entry point: /mcp goes to the MCP Streamable HTTP app, everything else to Django.

Django's ASGI handler does not speak the lifespan protocol; the MCP app needs it (its session
manager runs for the server's lifetime), so lifespan events go to the MCP app.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_site.settings")

django_app = get_asgi_application()

from mcp_api.app import streamable_http_app  # noqa: E402  (needs Django set up)

mcp_app = streamable_http_app()


def _is_mcp(scope) -> bool:
    if scope["type"] == "lifespan":
        return True
    path = scope.get("path", "")
    return path == "/mcp" or path.startswith("/mcp/")


async def application(scope, receive, send):
    if _is_mcp(scope):
        await mcp_app(scope, receive, send)
    else:
        await django_app(scope, receive, send)
