"""/oauth/authorize: where a person lands when their MCP client asks to connect.

The request is checked first (RFC 6749 §4.1.2.1: an unknown client or a redirect URI it did
not register is said on a page here, never sent anywhere; any other fault goes back to the
client). A person who is not signed in goes through the pages' own sign-in (single sign-on
when configured, else a local account) and comes back. Then the consent page: which client
(its name, where its answers go, whether it registered itself), what it asks, and the person's
choice of projects and of read or write. Allow sends the client a code (with `iss`, RFC 9207);
deny sends access_denied. The page's form may send the browser on to the client's redirect
URI, so its Content-Security-Policy names that one origin in form-action and nothing else.
"""

from __future__ import annotations

import re
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpResponse
from django.shortcuts import render
from django.utils.cache import add_never_cache_headers
from django.utils.csp import CSP
from django.views.decorators.http import require_http_methods
from mcp.server.auth.handlers.authorize import AuthorizationRequest
from mcp.shared.auth import InvalidRedirectUriError
from pydantic import AnyUrl, ValidationError

from knowledge.actors import Actor
from knowledge.errors import KnowledgeError
from knowledge.selectors.oauth import consent_projects, redirect_host
from knowledge.services import oauth_consent
from mcp_api.protected_resource import canonical_origin, mcp_resources, origin_of
from memory_site.oauth.clients import ClientUnknown, lookup_client

LOGIN_URL = "/accounts/login/"
CHALLENGE = re.compile(r"^[A-Za-z0-9_-]{43}$")  # base64url of a sha256, unpadded (S256)
MAX_STATE = 1000


class Redirected(Exception):
    """A fault to send back to the client (it has a valid client and redirect URI)."""

    def __init__(self, error: str, description: str):
        super().__init__(description)
        self.error, self.description = error, description


def _origin(request) -> str:
    return origin_of(
        {"scheme": request.scheme, "headers": [(b"host", request.get_host().encode())]}
    )


def _page(request, title: str, message: str, status: int = 400):
    response = render(
        request, "oauth/refused.html", {"title": title, "message": message}, status=status
    )
    add_never_cache_headers(response)
    return response


def _send_back(redirect_uri: str, **params) -> HttpResponse:
    parts = urlsplit(redirect_uri)
    query = "&".join(
        q for q in (parts.query, urlencode({k: v for k, v in params.items() if v})) if q
    )
    # Not HttpResponseRedirect, which takes http, https and ftp only: an app's own scheme
    # (cursor://…) is what it registered, and registration refused the schemes a browser runs.
    response = HttpResponse(status=302)
    response["Location"] = parts._replace(query=query).geturl()
    add_never_cache_headers(response)
    return response


def _checked(request) -> AuthorizationRequest:
    try:
        asked = AuthorizationRequest.model_validate(request.GET.dict())
    except ValidationError as exc:
        wrong = {".".join(str(p) for p in e["loc"]) for e in exc.errors()}
        if "response_type" in wrong:
            raise Redirected(
                "unsupported_response_type", "Cairn answers response_type=code only."
            ) from exc
        if "code_challenge_method" in wrong:
            raise Redirected(
                "invalid_request", "Cairn takes PKCE with code_challenge_method=S256 only."
            ) from exc
        raise Redirected(
            "invalid_request", f"Missing or malformed: {', '.join(sorted(wrong))}."
        ) from exc
    if not CHALLENGE.match(asked.code_challenge):
        raise Redirected(
            "invalid_request", "code_challenge must be the S256 challenge (43 characters)."
        )
    if asked.state and len(asked.state) > MAX_STATE:
        raise Redirected("invalid_request", f"state is over {MAX_STATE} characters.")
    return asked


def _resource(asked: AuthorizationRequest, origin: str) -> str:
    if not asked.resource:
        return f"{origin}/mcp"
    parts = urlsplit(asked.resource)
    resource = f"{canonical_origin(asked.resource)}{parts.path.rstrip('/')}"
    if parts.fragment or resource not in mcp_resources():
        raise Redirected("invalid_target", f"Cairn issues tokens for {origin}/mcp only.")
    return resource


def _form_action(redirect_uri: str) -> dict:
    parts = urlsplit(redirect_uri)
    target = f"{parts.scheme}://{parts.netloc}" if parts.netloc else f"{parts.scheme}:"
    return {**settings.SECURE_CSP, "form-action": [CSP.SELF, target]}


@require_http_methods(["GET", "POST"])
def authorize(request):
    client_id = request.GET.get("client_id", "")
    if not client_id:
        return _page(
            request,
            "This link is incomplete",
            "The sign-in link has no client_id. Start the connection again from your MCP client.",
        )
    try:
        client = lookup_client(client_id)
    except ClientUnknown as exc:
        return _page(request, "Cairn does not know this client", exc.message)
    try:
        raw = request.GET.get("redirect_uri")
        redirect_uri = str(client.validate_redirect_uri(AnyUrl(raw) if raw else None))
    except (InvalidRedirectUriError, ValidationError) as exc:
        return _page(
            request,
            "This client cannot be answered",
            getattr(exc, "message", "") or "The redirect_uri is not a URI.",
        )
    state = request.GET.get("state", "")[:MAX_STATE]
    origin = _origin(request)
    try:
        asked = _checked(request)
        resource = _resource(asked, origin)
    except Redirected as fault:
        return _send_back(
            redirect_uri,
            error=fault.error,
            error_description=fault.description,
            state=state,
            iss=origin,
        )
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path(), LOGIN_URL)
    scopes = client.validate_scope(asked.scope) or ["read", "write"]
    context = {
        "client": client,
        "redirect_host": redirect_host(redirect_uri),
        "loopback": urlsplit(redirect_uri).hostname in ("127.0.0.1", "localhost", "::1"),
        "asks_write": "write" in scopes,
        "projects": consent_projects(Actor.for_user(request.user)),
        "origin": origin,
        "error": "",
    }
    if request.method == "POST":
        if request.POST.get("decision") != "allow":
            return _send_back(
                redirect_uri,
                error="access_denied",
                error_description="The person declined.",
                state=state,
                iss=origin,
            )
        access = request.POST.get("access", "read")
        ticked = request.POST.getlist("projects")[:500]
        try:
            # A ticked project narrows, whichever radio button is on: the narrower reading.
            some = request.POST.get("reach") == "some" or ticked
            chosen = [int(p) for p in ticked] if some else None
            if access == "write" and not context["asks_write"]:
                access = "read"
            code = oauth_consent(
                actor=Actor.for_user(request.user),
                client_id=client.client_id,
                redirect_uri=redirect_uri,
                redirect_uri_given=bool(raw),
                code_challenge=asked.code_challenge,
                resource=resource,
                scope=access,
                projects=chosen,
            )
        except (KnowledgeError, ValueError) as exc:
            context["error"] = getattr(exc, "message", "Choose projects from the list.")
        else:
            return _send_back(redirect_uri, code=code, state=state, iss=origin)
    response = render(
        request, "oauth/consent.html", context, status=400 if context["error"] else 200
    )
    response._csp_config = _form_action(redirect_uri)
    add_never_cache_headers(response)
    return response
