"""ASGI entry point. The MCP endpoint will be mounted at /mcp next to Django."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_site.settings")

application = get_asgi_application()
