"""REST authentication: a bearer token or the browser session (with CSRF)."""

from __future__ import annotations

from django.http import HttpRequest
from ninja.security import HttpBearer, SessionAuth

from knowledge.actors import Actor
from knowledge.services.tokens import token_authenticate


class TokenAuth(HttpBearer):
    """`Authorization: Bearer cairn_…` — a personal API token."""

    def authenticate(self, request: HttpRequest, token: str) -> Actor | None:
        return token_authenticate(token)


class BrowserSessionAuth(SessionAuth):
    """A signed-in browser user; ninja checks the CSRF token for cookie auth."""

    def authenticate(self, request: HttpRequest, key: str | None) -> Actor | None:
        user = super().authenticate(request, key)
        return Actor.for_user(user) if user is not None else None
