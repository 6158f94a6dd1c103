"""The REST API: one NinjaAPI, endpoints under /api/v1, docs at /api/docs."""

from ninja import NinjaAPI

from knowledge.api import router as knowledge_router
from knowledge.api_auth import BrowserSessionAuth, TokenAuth, register_error_handlers

api = NinjaAPI(
    title="Cairn API",
    version="1",
    description=(
        "Team memory for agents and people. Authenticate with `Authorization: Bearer <token>` "
        "(a personal API token) or a signed-in browser session with CSRF. Errors are RFC 7807 "
        "problem+json with a `code` from Cairn's error hierarchy."
    ),
    auth=[TokenAuth(), BrowserSessionAuth()],
    urls_namespace="api",
    docs_url="/docs",
    openapi_url="/openapi.json",
)
register_error_handlers(api)
api.add_router("/v1/", knowledge_router)
