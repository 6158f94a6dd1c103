"""How a client id is found, and the client as the mcp SDK's handlers see it.

Redirect URIs are matched exactly as registered (after URL normalisation), except that a
loopback one may come back on any port (RFC 8252 §7.3: native apps bind whatever port is free).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from mcp.shared.auth import InvalidRedirectUriError, OAuthClientInformationFull
from pydantic import AnyUrl, ValidationError

from knowledge.models import OAuthClient
from knowledge.selectors.oauth import oauth_client, oauth_client_any
from mcp_api.protected_resource import SCOPES
from memory_site.oauth.documents import DocumentRefused, document_client
from memory_site.oauth.registration import LOOPBACK_HOSTS


def _normal(uri) -> str | None:
    try:
        return str(AnyUrl(str(uri)))
    except ValidationError:
        return None


def _loopback_match(asked: str, registered: str) -> bool:
    a, r = urlsplit(asked), urlsplit(registered)
    return (
        a.scheme == r.scheme == "http"
        and (a.hostname or "") in LOOPBACK_HOSTS
        and a.hostname == r.hostname
        and a.path == r.path
        and a.query == r.query
    )


class CairnClient(OAuthClientInformationFull):
    """A client as the SDK's handlers see it, with Cairn's redirect and scope rules."""

    kind: str = OAuthClient.Kind.REGISTERED
    secret_hash: str = ""

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        registered = [str(u) for u in self.redirect_uris or []]
        if redirect_uri is None:
            if len(registered) == 1:
                return AnyUrl(registered[0])
            raise InvalidRedirectUriError(
                "redirect_uri is required: this client registered several."
            )
        asked = _normal(redirect_uri)
        for uri in registered:
            if asked is not None and (asked == _normal(uri) or _loopback_match(asked, uri)):
                return redirect_uri
        raise InvalidRedirectUriError(
            f"The redirect URI {str(redirect_uri)[:200]!r} is not one this client registered. "
            "Remove the server from your client and add it again, so that it registers the "
            "address it listens on."
        )

    def validate_scope(self, requested_scope: str | None) -> list[str] | None:
        """Cairn's scopes are read and write; a client may ask for others (openid,
        offline_access): they are left out, and asking for none of ours asks for both. What
        the client gets is the person's choice on the consent page."""
        if requested_scope is None:
            return None
        known = [s for s in requested_scope.split() if s in SCOPES]
        return known or list(SCOPES)


def as_client(client: OAuthClient) -> CairnClient:
    return CairnClient(
        client_id=client.client_id,
        client_name=client.name,
        redirect_uris=client.redirect_uris,
        token_endpoint_auth_method=client.auth_method,
        grant_types=client.grant_types or ["authorization_code", "refresh_token"],
        response_types=["code"],
        scope=client.scope or None,
        kind=client.kind,
        secret_hash=client.secret_hash,
    )


def is_document_id(client_id: str) -> bool:
    return client_id.startswith("https://")


class ClientUnknown(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


AGAIN = "Remove Cairn from the client and add it again: it will register afresh."


def lookup_client(client_id: str) -> CairnClient:
    """The client with this id: registered, or (an https id) named by its metadata document,
    fetched when unknown or due again. ClientUnknown says why there is none, for a person."""
    if not is_document_id(client_id or ""):
        found = oauth_client(client_id)
        if found is None:
            known = oauth_client_any(client_id)
            if known is not None and known.revoked_at is not None:
                raise ClientUnknown(f"This client was revoked by a Cairn administrator. {AGAIN}")
            raise ClientUnknown(
                "This client is not registered with Cairn (a registration nobody uses expires "
                f"after {settings.CAIRN_OAUTH_UNUSED_CLIENT_HOURS} hours). {AGAIN}"
            )
        return as_client(found)
    if not settings.CAIRN_OAUTH_CLIENT_METADATA_DOCUMENTS:
        raise ClientUnknown(
            "This Cairn does not fetch client metadata documents "
            "(CAIRN_OAUTH_CLIENT_METADATA_DOCUMENTS is off); use a client that registers itself."
        )
    try:
        return as_client(document_client(client_id))
    except DocumentRefused as exc:
        message = f"Cairn could not use this client's metadata document: {exc.message}"
        raise ClientUnknown(message) from exc


def find_client(client_id: str) -> CairnClient | None:
    """lookup_client for the SDK's handlers, which take None for "no such client"."""
    try:
        return lookup_client(client_id)
    except ClientUnknown:
        return None
