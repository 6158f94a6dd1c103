"""Reads for MCP authorization: a client by its id, a code or refresh token by its secret (the
token endpoint checks them before the services act), and what a person has connected."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.db.models import Exists, Max, OuterRef, Q
from django.utils import timezone

from knowledge.access import visible_projects
from knowledge.actors import Actor
from knowledge.models import (
    ApiToken,
    OAuthClient,
    OAuthCode,
    OAuthGrant,
    OAuthRefreshToken,
    Project,
    secret_digest,
)

# The consent page lists at most this many projects to choose from (by name).
CONSENT_PROJECTS = 500


def oauth_client(client_id: str) -> OAuthClient | None:
    """The client with this id that may still ask: not revoked, and not a registration nobody
    consented to within CAIRN_OAUTH_UNUSED_CLIENT_HOURS (gone even before the sweep runs)."""
    if not client_id or len(client_id) > 255:
        return None
    unused_since = timezone.now() - timedelta(hours=settings.CAIRN_OAUTH_UNUSED_CLIENT_HOURS)
    expired = Q(kind=OAuthClient.Kind.REGISTERED, created_at__lt=unused_since) & ~Exists(
        OAuthGrant.objects.filter(client=OuterRef("pk"))
    )
    return (
        OAuthClient.objects.filter(client_id=client_id, revoked_at__isnull=True)
        .exclude(expired)
        .first()
    )


def oauth_client_any(client_id: str) -> OAuthClient | None:
    """The client with this id in any state (a revoked metadata-document client stays known,
    so that fetching its document again does not bring it back)."""
    return OAuthClient.objects.filter(client_id=client_id).first() if client_id else None


def oauth_code(code: str, client_id: str) -> OAuthCode | None:
    """An authorization code of this client, used or not (the exchange decides what a second
    use means)."""
    if not code or len(code) > 200:
        return None
    return (
        OAuthCode.objects.select_related("client")
        .filter(code_hash=secret_digest(code), client__client_id=client_id)
        .first()
    )


def oauth_refresh_token(token: str, client_id: str) -> OAuthRefreshToken | None:
    if not token or len(token) > 200:
        return None
    return (
        OAuthRefreshToken.objects.select_related("grant")
        .filter(token_hash=secret_digest(token), grant__client__client_id=client_id)
        .first()
    )


def oauth_grant_of_access_token(secret: str) -> OAuthGrant | None:
    """The grant whose access token this is (None for a personal token or an unknown one)."""
    if not secret or len(secret) > 200:
        return None
    token = (
        ApiToken.objects.select_related("grant__client")
        .filter(secret_hash=secret_digest(secret), grant__isnull=False)
        .only("grant")
        .first()
    )
    return token.grant if token else None


def consent_projects(actor: Actor) -> list[Project]:
    """The projects a person may narrow a client to: those they can see, by name."""
    return list(
        visible_projects(actor).only("pk", "slug", "name").order_by("name")[:CONSENT_PROJECTS]
    )


@dataclass(frozen=True)
class ConnectedClient:
    """One client a person connected: its live grants taken together."""

    client_pk: int
    name: str
    registered: str  # how it is known: "registered itself" or "metadata document at <host>"
    redirect_host: str
    reach: str  # the projects, in words
    scope: str  # "read" or "read and write"
    connected_at: datetime
    last_used_at: datetime | None
    grants: int


def _reach(grant: OAuthGrant) -> str:
    """The projects as the person reads them on their own page."""
    return grant.reach() if grant.narrowed else "every project you can see"


def _registered(client: OAuthClient) -> str:
    if client.kind == OAuthClient.Kind.DOCUMENT:
        return f"metadata document at {urlsplit(client.client_id).hostname}"
    return "registered itself"


def redirect_host(uri: str) -> str:
    """Where a client's answers go, as a person should read it: the host, or the app scheme."""
    parts = urlsplit(uri)
    if parts.scheme in ("http", "https"):
        return parts.netloc or uri
    return f"{parts.scheme}: (an app on your computer)"


def connected_clients(actor: Actor, *, limit: int = 200) -> list[ConnectedClient]:
    """The clients this person has live connections with, most recently used first."""
    user = actor.user
    if not getattr(user, "is_authenticated", False):
        return []
    grants = (
        OAuthGrant.objects.filter(user=user, revoked_at__isnull=True)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()))
        .select_related("client")
        .prefetch_related("projects")
        .annotate(last_used=Max("access_tokens__last_used_at"))
        .order_by("-created_at")[: limit * 4]
    )
    by_client: dict[int, list[OAuthGrant]] = {}
    for grant in grants:
        by_client.setdefault(grant.client_id, []).append(grant)
    found = []
    for group in by_client.values():
        latest, client = group[0], group[0].client
        used = [g.last_used for g in group if g.last_used]
        found.append(
            ConnectedClient(
                client_pk=client.pk,
                name=client.name,
                registered=_registered(client),
                redirect_host=redirect_host(latest.redirect_uri),
                reach="; ".join(sorted({_reach(g) for g in group})),
                scope="read and write" if latest.scope == "write" else "read",
                connected_at=latest.created_at,
                last_used_at=max(used) if used else None,
                grants=len(group),
            )
        )
    never = timezone.now() - timedelta(days=36500)
    found.sort(key=lambda c: c.last_used_at or c.connected_at or never, reverse=True)
    return found[:limit]


def personal_tokens(actor: Actor, *, limit: int = 200) -> list[ApiToken]:
    """The person's own live personal tokens (not those of connected clients), newest first."""
    user = actor.user
    if not getattr(user, "is_authenticated", False):
        return []
    now = timezone.now()
    return list(
        ApiToken.objects.filter(user=user, grant__isnull=True, revoked_at__isnull=True)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))
        .prefetch_related("projects")
        .order_by("-created_at")[:limit]
    )
