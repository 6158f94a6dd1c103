"""The steps the OAuth services share: a grant's tokens issued (or given new secrets), and a
grant revoked with everything it holds."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone
from django.utils.text import slugify

from knowledge.models import ApiToken, OAuthGrant, OAuthRefreshToken, TokenScope
from knowledge.services._kernel.secrets import new_secret


@dataclass(frozen=True)
class IssuedTokens:
    """What the token endpoint answers: the secrets are here only, their digests in the tables."""

    access_token: str
    expires_in: int  # seconds
    scope: str  # "read" or "read write", as OAuth spells granted scopes
    refresh_token: str
    grant: OAuthGrant


@dataclass(frozen=True)
class TokenRefusal:
    """A token request refused after something was written (a replayed code or refresh token
    revokes its grant): returned, not raised, so the revocation commits."""

    error: str  # the OAuth error code, e.g. invalid_grant
    description: str


SIGN_IN_AGAIN = "Connect the client again (it opens Cairn's sign-in page)."


def granted_scopes(scope: str) -> str:
    return "read write" if scope == TokenScope.WRITE else "read"


def grant_end(now: datetime) -> datetime | None:
    """When a connection made now ends, whatever its refreshes: CAIRN_TOKEN_MAX_DAYS."""
    days = settings.CAIRN_TOKEN_MAX_DAYS
    return now + timedelta(days=days) if days else None


def _until(now: datetime, seconds: float, end: datetime | None) -> datetime:
    until = now + timedelta(seconds=seconds)
    return min(until, end) if end else until


def issue_tokens(grant: OAuthGrant, *, access: ApiToken | None = None) -> IssuedTokens:
    """A new access secret and refresh token for `grant`. The grant has one ApiToken; a refresh
    gives it a new secret in place (the old one stops at once: token_authenticate checks the
    digest), so the person's list shows one token per connection, not one per hour."""
    now = timezone.now()
    seconds = settings.CAIRN_OAUTH_ACCESS_TOKEN_SECONDS
    made = new_secret(ApiToken.PREFIX)
    created = access is None
    if access is None:
        access = ApiToken(
            user=grant.user,
            name=grant.client.name[:100],
            scope=grant.scope,
            agent_label=f"agent:{slugify(grant.client.name)[:60] or 'mcp'}",
            narrowed=grant.narrowed,
            grant=grant,
            resource=grant.resource,
        )
    access.prefix, access.secret_hash = made.shown, made.digest
    access.expires_at = _until(now, seconds, grant.expires_at)
    access.save()
    if created and grant.narrowed:
        access.projects.set(grant.projects.all())
    refresh = new_secret(OAuthRefreshToken.PREFIX)
    days = settings.CAIRN_OAUTH_REFRESH_TOKEN_DAYS
    OAuthRefreshToken.objects.create(
        grant=grant,
        token_hash=refresh.digest,
        expires_at=_until(now, days * 86400, grant.expires_at),
    )
    return IssuedTokens(
        access_token=made.secret,
        expires_in=max(1, int((access.expires_at - now).total_seconds())),
        scope=granted_scopes(grant.scope),
        refresh_token=refresh.secret,
        grant=grant,
    )


def revoke_grant(grant: OAuthGrant, reason: str) -> bool:
    """Revoke a grant, its access token and its refresh tokens; False when it already was."""
    if grant.revoked_at is not None:
        return False
    now = timezone.now()
    grant.revoked_at, grant.revoked_reason = now, reason[:200]
    grant.save(update_fields=["revoked_at", "revoked_reason"])
    ApiToken.objects.filter(grant=grant, revoked_at__isnull=True).update(revoked_at=now)
    OAuthRefreshToken.objects.filter(grant=grant, used_at__isnull=True).update(used_at=now)
    return True
