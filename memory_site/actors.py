"""Who a request acts as: `request.actor`, set once for every Django request.

Pages, the admin and REST all read `request.actor` instead of rebuilding an `Actor` from
`request.user`. It costs no query: `request.user` is still Django's lazy object here, so the
session is read only when something asks the actor who it is (`/healthz` never does).

REST overrides it in `api/auth.py` with the actor its authentication found (a token's actor
for a bearer token), so a token call never acts as the browser session beside it. `/mcp` is
mounted in ASGI outside Django's middleware and finds its actor in `mcp_api/auth.py`.
"""

from __future__ import annotations

from knowledge.actors import Actor


class ActorMiddleware:
    """After AuthenticationMiddleware, which gives `request.user`."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.actor = Actor.for_user(request.user)
        return self.get_response(request)
