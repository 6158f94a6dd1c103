"""What a client may register: checked for size and shape before the mcp SDK's handler parses
it. At most MAX_REDIRECT_URIS redirect URIs of at most MAX_URI_CHARS each: https anywhere, http
on a loopback address only (RFC 8252 §7.3), an app's own scheme (RFC 8252 §7.1) but never one a
browser acts on itself (javascript:, data:, file:…); no fragment, no credentials."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

MAX_REGISTRATION_BYTES = 16_384
MAX_REDIRECT_URIS = 10
MAX_URI_CHARS = 1000
MAX_NAME_CHARS = 200
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
# Schemes a browser acts on itself: a redirect there would run or read something, not reach
# an app.
FORBIDDEN_SCHEMES = frozenset(
    {"javascript", "data", "file", "vbscript", "blob", "about", "filesystem", "view-source",
     "ws", "wss", "ftp", "chrome", "mailto", "tel"}
)  # fmt: skip
SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*$")
AUTH_METHODS = ("none", "client_secret_post", "client_secret_basic")


class RegistrationRefused(ValueError):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def redirect_uri_problem(uri: object) -> str | None:
    """Why `uri` cannot be a redirect URI, or None."""
    if not isinstance(uri, str) or not uri:
        return "each redirect URI must be a non-empty string"
    if len(uri) > MAX_URI_CHARS:
        return f"a redirect URI is {len(uri)} characters; at most {MAX_URI_CHARS} are accepted"
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if not SCHEME.match(scheme):
        return f"{uri!r} is not an absolute URI"
    if "#" in uri:
        return f"{uri!r} has a fragment; a redirect URI may not (RFC 6749 §3.1.2)"
    if scheme in FORBIDDEN_SCHEMES:
        return f"{uri!r} uses the {scheme}: scheme, which cannot receive an answer"
    if parts.username or parts.password:
        return f"{uri!r} carries credentials"
    if scheme == "http" and (parts.hostname or "") not in LOOPBACK_HOSTS:
        return (
            f"{uri!r} is plain http on another host than this computer: use https, or "
            "http://127.0.0.1:<port>/… for an app on the same computer"
        )
    if scheme in ("http", "https") and not parts.hostname:
        return f"{uri!r} has no host"
    return None


def check_registration(body: object) -> None:
    """Refuse a registration whose size or shape Cairn does not take, saying which part."""
    if not isinstance(body, dict):
        raise RegistrationRefused("The registration must be a JSON object (RFC 7591 §2).")
    uris = body.get("redirect_uris")
    if not isinstance(uris, list) or not uris:
        raise RegistrationRefused("redirect_uris must list where answers go (1 or more URIs).")
    if len(uris) > MAX_REDIRECT_URIS:
        raise RegistrationRefused(
            f"{len(uris)} redirect URIs; at most {MAX_REDIRECT_URIS} are accepted."
        )
    for uri in uris:
        if problem := redirect_uri_problem(uri):
            raise RegistrationRefused(f"redirect_uris: {problem}.")
    name = body.get("client_name")
    if name is not None and (not isinstance(name, str) or len(name) > MAX_NAME_CHARS):
        raise RegistrationRefused(
            f"client_name must be text of at most {MAX_NAME_CHARS} characters."
        )
    method = body.get("token_endpoint_auth_method")
    if method is not None and method not in AUTH_METHODS:
        raise RegistrationRefused(
            f"token_endpoint_auth_method {method!r} is not supported; use one of "
            f"{', '.join(AUTH_METHODS)} ('none' with PKCE for an app)."
        )
