"""The REST API: one NinjaAPI, endpoints under /api/v1, docs at /api/docs."""

from ninja import NinjaAPI

from api.auth import BrowserSessionAuth, TokenAuth
from api.problems import register_error_handlers
from api.routers import entries, graph, history, note_types, projects, runs, search


class CairnAPI(NinjaAPI):
    def get_openapi_operation_id(self, operation) -> str:
        # ninja derives ids from the module; clients generated from the spec know the ids the
        # endpoints got when they all lived in one module, knowledge.api (now api/routers/),
        # so they keep them.
        return f"knowledge_api_{operation.view_func.__name__}"


api = CairnAPI(
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
for resource in (projects, entries, history, runs, search, graph, note_types):
    api.add_router("/v1/", resource.router)
