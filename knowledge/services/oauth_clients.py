"""The programs that ask people for access through MCP authorization: registered (RFC 7591),
remembered from their metadata documents, revoked, and forgotten when unused.

What a client may register (sizes, redirect URIs) is checked by the site before these run
(memory_site/oauth/clients.py); these store what passed and keep the rules of who may end what.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from knowledge.actors import Actor
from knowledge.errors import Forbidden, NotFound
from knowledge.models import OAuthClient, OAuthCode, OAuthGrant, OAuthRefreshToken, secret_digest
from knowledge.services._kernel.oauth import revoke_grant


@dataclass(frozen=True)
class ClientRegistration:
    """What a client said about itself, already checked for size and shape."""

    name: str
    redirect_uris: list[str]
    auth_method: str = "none"
    grant_types: list[str] = field(default_factory=lambda: ["authorization_code"])
    scope: str = ""
    client_uri: str = ""
    metadata: dict = field(default_factory=dict)


def _fill(client: OAuthClient, registration: ClientRegistration) -> None:
    client.name = registration.name[:200]
    client.redirect_uris = list(registration.redirect_uris)
    client.auth_method = registration.auth_method
    client.grant_types = list(registration.grant_types)
    client.scope = registration.scope[:200]
    client.client_uri = registration.client_uri[:500]
    client.metadata = registration.metadata


@transaction.atomic(durable=True)
def oauth_client_register(
    *, actor: Actor, client_id: str, secret: str | None, registration: ClientRegistration
) -> OAuthClient:
    """Store a client that registered itself; only the digest of its secret (if it asked for
    one) is kept. Open to anyone, like the registration endpoint: a client can do nothing until
    a person consents, and one nobody used is forgotten (oauth_clients_sweep)."""
    client = OAuthClient(client_id=client_id, kind=OAuthClient.Kind.REGISTERED)
    _fill(client, registration)
    client.secret_hash = secret_digest(secret) if secret else ""
    client.save()
    return client


@transaction.atomic(durable=True)
def oauth_client_document_save(
    *, actor: Actor, client_id: str, registration: ClientRegistration, refresh_after: datetime
) -> OAuthClient:
    """Remember (or refresh) what a client's metadata document said, until `refresh_after`.
    A revoked client stays revoked: its document does not bring it back."""
    client, _ = OAuthClient.objects.select_for_update().get_or_create(
        client_id=client_id, defaults={"kind": OAuthClient.Kind.DOCUMENT, "name": "?"}
    )
    _fill(client, registration)
    client.refresh_after = refresh_after
    client.save()
    return client


def _may_end_clients(actor: Actor) -> bool:
    return bool(
        actor.token_id is None
        and (getattr(actor.user, "is_superuser", False) or actor.agent == "system:cairn")
    )


@transaction.atomic(durable=True)
def oauth_client_revoke(*, actor: Actor, client_pk: int) -> int:
    """Revoke a client for everyone: it may not ask anyone again and every grant it holds ends
    (its tokens refused on their next request). Superusers only; returns the grants ended."""
    if not _may_end_clients(actor):
        raise Forbidden("Only a superuser may revoke a client for everyone; disconnect yours "
                        "from your tokens page instead.")  # fmt: skip
    client = OAuthClient.objects.select_for_update().filter(pk=client_pk).first()
    if client is None:
        raise NotFound(f"No client {client_pk}.", client=client_pk)
    if client.revoked_at is None:
        client.revoked_at = timezone.now()
        client.save(update_fields=["revoked_at"])
    ended = 0
    for grant in OAuthGrant.objects.select_for_update().filter(client=client):
        ended += revoke_grant(grant, "the client was revoked by an administrator")
    return ended


@dataclass(frozen=True)
class SweepReport:
    clients: int
    codes: int
    refresh_tokens: int


# A used refresh token is kept this long to recognise it if it comes back (then the grant is
# revoked); after that a replay is simply unknown.
REPLAY_MEMORY = timedelta(days=14)


@transaction.atomic(durable=True)
def oauth_clients_sweep(*, actor: Actor) -> SweepReport:
    """Forget what no longer serves: clients that registered (or were fetched) and were never
    consented to within CAIRN_OAUTH_UNUSED_CLIENT_HOURS, codes past their minutes, and used
    refresh tokens past REPLAY_MEMORY. Run by Celery beat; safe to run at any time."""
    now = timezone.now()
    unused = now - timedelta(hours=settings.CAIRN_OAUTH_UNUSED_CLIENT_HOURS)
    codes, _ = OAuthCode.objects.filter(expires_at__lt=now - timedelta(hours=1)).delete()
    stale = OAuthClient.objects.filter(created_at__lt=unused, revoked_at__isnull=True).exclude(
        Exists(OAuthGrant.objects.filter(client=OuterRef("pk")))
    )
    clients = stale.count()
    stale.delete()
    refreshes, _ = OAuthRefreshToken.objects.filter(used_at__lt=now - REPLAY_MEMORY).delete()
    return SweepReport(clients=clients, codes=codes, refresh_tokens=refreshes)
