"""REST authentication: a bearer token or the browser session (with CSRF).

Each sets `request.actor` to the actor it found, so inside a route `request.actor is
request.auth` and a token call never acts as the browser session that may ride along
(memory_site/actors.py set the session's actor before routing).
"""

from __future__ import annotations

from django.http import HttpRequest
from ninja.security import HttpBearer, SessionAuth

from knowledge.actors import Actor
from knowledge.runs import RUN_HEADER, client_run
from knowledge.services.tokens import token_authenticate


def _in_run(request: HttpRequest, actor: Actor | None) -> Actor | None:
    """The actor marking its writes with the request's X-Cairn-Run header, if it sent one."""
    run = client_run(request.headers.get(RUN_HEADER))
    return actor.in_run(run) if actor is not None and run else actor


class TokenAuth(HttpBearer):
    """`Authorization: Bearer cairn_…` — a personal API token."""

    def authenticate(self, request: HttpRequest, token: str) -> Actor | None:
        actor = _in_run(request, token_authenticate(token))
        if actor is not None:
            request.actor = actor
        return actor


class BrowserSessionAuth(SessionAuth):
    """A signed-in browser user; ninja checks the CSRF token for cookie auth."""

    def authenticate(self, request: HttpRequest, key: str | None) -> Actor | None:
        user = super().authenticate(request, key)
        if user is None:
            return None
        request.actor = actor = _in_run(request, Actor.for_user(user))
        return actor
