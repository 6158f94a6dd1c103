"""The authorization server's machine endpoints: its metadata (RFC 8414, with the OpenID
discovery alias), registration (RFC 7591), token and revocation (RFC 7009).

Each is the mcp SDK's handler behind what Cairn adds: a per-address rate limit, a body bound
read before any parsing, registration's size and shape rules (registration.py), the resource
check of the token request (RFC 8707: tokens are for this server's /mcp and nothing else),
client secrets checked against their digest, and refusals worded so the reader knows what to
do next. memory_site/asgi.py sends these paths here.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from base64 import b64decode
from urllib.parse import unquote, urlsplit

from django.conf import settings
from mcp.server.auth.handlers.register import RegistrationHandler
from mcp.server.auth.handlers.revoke import RevocationHandler
from mcp.server.auth.handlers.token import TokenHandler
from mcp.server.auth.json_response import PydanticJSONResponse
from mcp.server.auth.middleware.client_auth import AuthenticationError, ClientAuthenticator
from mcp.server.auth.routes import cors_middleware
from mcp.server.auth.settings import ClientRegistrationOptions
from mcp.server.transport_security import RequestBodyLimitMiddleware
from mcp.shared.auth import OAuthMetadata
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcp_api.protected_resource import SCOPES, canonical_origin, mcp_resources, origin_of
from memory_site.oauth.clients import ClientUnknown, lookup_client
from memory_site.oauth.limits import over_limit
from memory_site.oauth.provider import CairnProvider, run
from memory_site.oauth.registration import (
    AUTH_METHODS,
    MAX_REGISTRATION_BYTES,
    RegistrationRefused,
    check_registration,
)

TOKEN_BYTES = 16_384
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
AGAIN = "Start the connection again from your MCP client: it opens Cairn's sign-in page."


def authorization_metadata(origin: str) -> OAuthMetadata:
    return OAuthMetadata(
        issuer=origin,
        authorization_endpoint=f"{origin}/oauth/authorize",
        token_endpoint=f"{origin}/oauth/token",
        registration_endpoint=f"{origin}/oauth/register",
        revocation_endpoint=f"{origin}/oauth/revoke",
        scopes_supported=list(SCOPES),
        response_types_supported=["code"],
        grant_types_supported=["authorization_code", "refresh_token"],
        token_endpoint_auth_methods_supported=list(AUTH_METHODS),
        revocation_endpoint_auth_methods_supported=list(AUTH_METHODS),
        code_challenge_methods_supported=["S256"],
        client_id_metadata_document_supported=settings.CAIRN_OAUTH_CLIENT_METADATA_DOCUMENTS,
        authorization_response_iss_parameter_supported=True,
    )


async def _metadata(request: Request) -> Response:
    return PydanticJSONResponse(
        content=authorization_metadata(origin_of(request.scope)),
        headers={"Cache-Control": "public, max-age=300"},
    )


def refusal(error: str, description: str, status: int = 400, **headers) -> JSONResponse:
    return JSONResponse(
        {"error": error, "error_description": description}, status, headers=NO_STORE | headers
    )


def _limited(scope, what: str, per_minute: int) -> JSONResponse | None:
    wait = over_limit(scope, what, per_minute)
    if not wait:
        return None
    return refusal(
        "temporarily_unavailable" if what == "token" else "invalid_client_metadata",
        f"Too many {what} requests from your address; try again in {wait} seconds.",
        429,
        **{"Retry-After": str(wait)},
    )


class HashedSecretAuthenticator(ClientAuthenticator):
    """The SDK's client authentication, against the secret's digest (only that is stored)."""

    async def authenticate_request(self, request: Request):
        form = await request.form()
        basic_id, secret = _basic_credentials(request)
        client_id = form.get("client_id") or basic_id
        if not isinstance(client_id, str) or not client_id:
            raise AuthenticationError("client_id is missing.")
        try:
            client = await run(lookup_client, client_id)
        except ClientUnknown as exc:
            raise AuthenticationError(exc.message) from exc
        if client.token_endpoint_auth_method == "none":
            return client
        if secret is None and isinstance(form.get("client_secret"), str):
            secret = form["client_secret"]
        digest = hashlib.sha256((secret or "").encode()).hexdigest()
        if not secret or basic_id not in (None, client_id):
            raise AuthenticationError("This client must send its client_secret.")
        if not hmac.compare_digest(digest, client.secret_hash):
            raise AuthenticationError("The client_secret is wrong for this client_id.")
        return client


def _basic_credentials(request: Request) -> tuple[str | None, str | None]:
    header = request.headers.get("authorization", "")
    if not header.lower().startswith("basic "):
        return None, None
    try:
        client_id, _, secret = b64decode(header[6:]).decode().partition(":")
    except (ValueError, UnicodeDecodeError):
        return None, None
    return unquote(client_id), unquote(secret)


provider = CairnProvider()
authenticator = HashedSecretAuthenticator(provider)
registration_handler = RegistrationHandler(
    provider, options=ClientRegistrationOptions(enabled=True, default_scopes=list(SCOPES))
)
token_handler = TokenHandler(provider, authenticator)
revocation_handler = RevocationHandler(provider, authenticator)


async def _register(request: Request) -> Response:
    if limited := _limited(request.scope, "registration", _per_minute("REGISTRATIONS")):
        return limited
    try:
        body = json.loads(await request.body())
    except ValueError:
        return refusal("invalid_client_metadata", "The registration must be a JSON object.")
    try:
        check_registration(body)
    except RegistrationRefused as exc:
        return refusal("invalid_client_metadata", exc.message)
    return await registration_handler.handle(request)  # reads the body Starlette kept


def _per_minute(what: str) -> int:
    return getattr(settings, f"CAIRN_OAUTH_{what}_PER_MINUTE")


def _resource_problem(resources: list[str], origin: str) -> str | None:
    ours = mcp_resources()
    for resource in resources:
        parts = urlsplit(resource)
        if parts.fragment or not parts.scheme:
            return f"The resource {resource[:200]!r} is not an absolute URI without a fragment."
        if f"{canonical_origin(resource)}{parts.path.rstrip('/')}" not in ours:
            return (
                f"Cairn issues tokens for {origin}/mcp only, not for {resource[:200]!r}: "
                "send resource=" + f"{origin}/mcp (or leave it out)."
            )
    return None


# The SDK's own refusals, said with what to do next.
REWORDED = {
    "incorrect code_verifier": "The code_verifier does not match the code_challenge sent to "
    f"/oauth/authorize (PKCE S256), so the code stays unused. {AGAIN}",
    "authorization code does not exist": f"This authorization code is unknown. {AGAIN}",
    "authorization code has expired": "This authorization code expired (codes last "
    f"{{seconds}} seconds). {AGAIN}",
    "redirect_uri did not match the one used when creating auth code": "redirect_uri must be "
    "the one sent to /oauth/authorize for this code.",
    "refresh token does not exist": f"This refresh token is unknown. {AGAIN}",
    "refresh token has expired": f"This refresh token expired. {AGAIN}",
}


def _reworded(response: Response) -> Response:
    if response.status_code < 400:
        return response
    try:
        body = json.loads(response.body)
    except ValueError:
        return response
    said = body.get("error_description") or ""
    better = REWORDED.get(said)
    if better is None and "code_verifier" in said and "required" in said.lower():
        better = "code_verifier is missing: Cairn requires PKCE (S256) for every code."
    if better is None:
        return response
    body["error_description"] = better.format(seconds=settings.CAIRN_OAUTH_CODE_SECONDS)
    return JSONResponse(body, response.status_code, headers=NO_STORE)


async def _token(request: Request) -> Response:
    if limited := _limited(request.scope, "token", _per_minute("TOKEN_REQUESTS")):
        return limited
    form = await request.form()  # kept on the request for the SDK's handler
    if problem := _resource_problem(form.getlist("resource"), origin_of(request.scope)):
        return refusal("invalid_target", problem)
    return _reworded(await token_handler.handle(request))


async def _revoke(request: Request) -> Response:
    if limited := _limited(request.scope, "token", _per_minute("TOKEN_REQUESTS")):
        return limited
    return await revocation_handler.handle(request)


class _Bounded:
    """An endpoint behind a body bound checked before anything is parsed: a declared length
    over it is refused with the bound named; a body that grows past it while read, with 413.
    (A class: Starlette takes a plain function for a request handler, not an ASGI app.)"""

    def __init__(self, endpoint, limit: int, methods: list[str]):
        self.inner = RequestBodyLimitMiddleware(cors_middleware(endpoint, methods), limit)
        self.limit = limit

    async def __call__(self, scope, receive, send):
        declared = dict(scope.get("headers") or []).get(b"content-length", b"0")
        if declared.isdigit() and int(declared) > self.limit:
            problem = f"The request body is over {self.limit} bytes."
            return await refusal("invalid_request", problem, 413)(scope, receive, send)
        return await self.inner(scope, receive, send)


PATHS = (
    "/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
    "/oauth/register",
    "/oauth/token",
    "/oauth/revoke",
)


def app() -> Starlette:
    """The endpoints above as one ASGI app (CORS open: browser-based clients call them)."""
    metadata = cors_middleware(_metadata, ["GET", "OPTIONS"])
    post = ["POST", "OPTIONS"]
    return Starlette(
        routes=[
            Route(PATHS[0], metadata, methods=["GET", "OPTIONS"]),
            Route(PATHS[1], metadata, methods=["GET", "OPTIONS"]),
            Route(PATHS[2], _Bounded(_register, MAX_REGISTRATION_BYTES, post), methods=post),
            Route(PATHS[3], _Bounded(_token, TOKEN_BYTES, post), methods=post),
            Route(PATHS[4], _Bounded(_revoke, TOKEN_BYTES, post), methods=post),
        ]
    )
