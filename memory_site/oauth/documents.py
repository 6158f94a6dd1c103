"""Clients named by the https URL of their metadata document (OAuth client ID metadata
documents, draft-ietf-oauth-client-id-metadata-document; MCP authorization 2025-11-25).

Fetching a URL a stranger chose is a request forgery risk, so the fetch is bounded by rule:
https only, a host whose every address is public (no loopback, private, link-local or reserved
address: the connection goes to the address that was checked, so a second DNS answer cannot
swap it), no redirect, DOCUMENT_SECONDS in all and DOCUMENT_BYTES at most, read before parsing.
What the document says is kept (knowledge's OAuthClient) until its Cache-Control max-age, held
between MIN_AGE and MAX_AGE. CAIRN_OAUTH_CLIENT_METADATA_DOCUMENTS off: no fetch at all.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import logging
import re
import socket
import ssl
import time
from datetime import timedelta
from urllib.parse import SplitResult, urlsplit

from django.utils import timezone

from knowledge.actors import Actor
from knowledge.models import OAuthClient
from knowledge.selectors.oauth import oauth_client_any
from knowledge.services import ClientRegistration, oauth_client_document_save
from memory_site.oauth.registration import MAX_NAME_CHARS, MAX_REDIRECT_URIS, redirect_uri_problem

log = logging.getLogger(__name__)

DOCUMENT_BYTES = 16_384
DOCUMENT_SECONDS = 5.0
MIN_AGE, DEFAULT_AGE, MAX_AGE = timedelta(minutes=5), timedelta(hours=1), timedelta(hours=24)
# A document that cannot be fetched again is still used this long after it was due.
STALE_GRACE = timedelta(days=7)


class DocumentRefused(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def check_url(url: str) -> SplitResult:
    parts = urlsplit(url)
    if len(url) > 255:
        raise DocumentRefused("The client id URL is longer than 255 characters.")
    if parts.scheme != "https" or not parts.hostname:
        raise DocumentRefused("A client id URL must be an https URL with a host.")
    if parts.username or parts.password or parts.fragment or "#" in url:
        raise DocumentRefused("A client id URL may carry no credentials and no fragment.")
    if parts.path in ("", "/") or "/./" in parts.path or "/../" in parts.path:
        raise DocumentRefused("A client id URL must have a path, without dot segments.")
    return parts


def address_allowed(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return ip.is_global and not (ip.is_multicast or ip.is_reserved)


def public_address(host: str, port: int) -> str:
    """The address to connect to: every address the host has must be public."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise DocumentRefused(f"The host {host!r} of the client id URL does not resolve.") from exc
    addresses = [info[4][0] for info in found]
    if not addresses or not all(address_allowed(a) for a in addresses):
        raise DocumentRefused(
            f"The host {host!r} of the client id URL has a private, loopback or reserved "
            "address; Cairn fetches metadata documents from public addresses only."
        )
    return addresses[0]


def open_document(url: str) -> tuple[int, dict[str, str], bytes]:
    """GET `url` from its checked address: (status, headers, at most DOCUMENT_BYTES + 1 bytes)."""
    parts = check_url(url)
    port = parts.port or 443
    address = public_address(parts.hostname, port)
    deadline = time.monotonic() + DOCUMENT_SECONDS
    conn = http.client.HTTPSConnection(
        parts.hostname, port, timeout=DOCUMENT_SECONDS, context=ssl.create_default_context()
    )
    # Connect to the address checked above; TLS still verifies the certificate for the host.
    conn._create_connection = lambda _address, *args, **kwargs: socket.create_connection(
        (address, port), *args, **kwargs
    )
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    try:
        conn.request("GET", target, headers={"Accept": "application/json", "User-Agent": "Cairn"})
        response = conn.getresponse()
        body = b""
        while len(body) <= DOCUMENT_BYTES and (chunk := response.read(4096)):
            body += chunk
            if time.monotonic() > deadline:
                raise DocumentRefused(f"The metadata document took over {DOCUMENT_SECONDS:g} s.")
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body
    except (OSError, http.client.HTTPException) as exc:
        raise DocumentRefused(f"The metadata document could not be fetched ({exc}).") from exc
    finally:
        conn.close()


def _max_age(headers: dict[str, str]) -> timedelta:
    found = re.search(r"max-age=(\d+)", headers.get("cache-control", ""))
    age = timedelta(seconds=int(found.group(1))) if found else DEFAULT_AGE
    return min(max(age, MIN_AGE), MAX_AGE)


def parse_document(url: str, status: int, headers: dict[str, str], body: bytes):
    """(ClientRegistration, how long to keep it) from a fetched document, or DocumentRefused."""
    if status != 200:
        raise DocumentRefused(f"The metadata document answered HTTP {status}, not 200.")
    if len(body) > DOCUMENT_BYTES:
        raise DocumentRefused(f"The metadata document is over {DOCUMENT_BYTES} bytes.")
    try:
        doc = json.loads(body)
    except ValueError as exc:
        raise DocumentRefused("The metadata document is not JSON.") from exc
    if not isinstance(doc, dict) or doc.get("client_id") != url:
        raise DocumentRefused("The metadata document's client_id must be its own URL, exactly.")
    if "client_secret" in doc or doc.get("token_endpoint_auth_method", "none") != "none":
        raise DocumentRefused("A client named by a metadata document is public: no secret, "
                              "token_endpoint_auth_method 'none', and PKCE.")  # fmt: skip
    uris = doc.get("redirect_uris")
    if not isinstance(uris, list) or not uris or len(uris) > MAX_REDIRECT_URIS:
        raise DocumentRefused(f"redirect_uris must list 1 to {MAX_REDIRECT_URIS} URIs.")
    for uri in uris:
        if problem := redirect_uri_problem(uri):
            raise DocumentRefused(f"redirect_uris: {problem}.")
    name = doc.get("client_name") or urlsplit(url).hostname
    if not isinstance(name, str):
        raise DocumentRefused("client_name must be text.")
    grants = doc.get("grant_types") or ["authorization_code"]
    if not isinstance(grants, list) or "authorization_code" not in grants:
        raise DocumentRefused("grant_types must include authorization_code.")
    client_uri = doc.get("client_uri") if isinstance(doc.get("client_uri"), str) else ""
    registration = ClientRegistration(
        name=name[:MAX_NAME_CHARS],
        redirect_uris=uris,
        grant_types=[g for g in grants if isinstance(g, str)][:5],
        scope=doc.get("scope") if isinstance(doc.get("scope"), str) else "",
        client_uri=client_uri[:500],
        metadata=doc,
    )
    return registration, _max_age(headers)


def document_client(url: str) -> OAuthClient:
    """The client named by `url`: as remembered while its document is fresh, else fetched
    again (a stale copy serves up to STALE_GRACE while the fetch fails). DocumentRefused says
    why there is none."""
    known = oauth_client_any(url)
    if known is not None and known.kind != OAuthClient.Kind.DOCUMENT:
        raise DocumentRefused("This client id is taken by a registered client.")
    if known is not None and known.revoked_at is not None:
        raise DocumentRefused("This client was revoked by a Cairn administrator.")
    now = timezone.now()
    if known is not None and known.refresh_after and known.refresh_after > now:
        return known
    try:
        registration, age = parse_document(url, *open_document(url))
    except DocumentRefused as exc:
        log.warning("Client metadata document %s refused: %s", url, exc.message)
        if known is not None and known.refresh_after and known.refresh_after + STALE_GRACE > now:
            return known
        raise
    return oauth_client_document_save(
        actor=Actor.system(), client_id=url, registration=registration, refresh_after=now + age
    )
