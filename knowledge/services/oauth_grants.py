"""A person's consent to a client, and the tokens it holds: consent (an authorization code),
the code exchanged for tokens, refresh (rotating, a replay revokes the grant), revocation.

The access token of a grant is an ApiToken narrowed exactly as the person chose, so
token_authenticate, the access rules and the agent label treat it as any other token. The
protocol checks that need no data (PKCE, redirect URI equality, code expiry) are the token
endpoint's (memory_site/oauth); what depends on stored state is decided here, under row locks.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from knowledge.access import signed_in, visible_projects
from knowledge.actors import Actor
from knowledge.errors import Forbidden, NotFound, ValidationFailed
from knowledge.models import (
    ApiToken,
    OAuthClient,
    OAuthCode,
    OAuthGrant,
    OAuthRefreshToken,
    TokenScope,
    secret_digest,
)
from knowledge.services._kernel.oauth import (
    SIGN_IN_AGAIN,
    IssuedTokens,
    TokenRefusal,
    grant_end,
    issue_tokens,
    revoke_grant,
)
from knowledge.services._kernel.secrets import new_secret

CODE_PREFIX = "cairnac_"


@transaction.atomic(durable=True)
def oauth_consent(
    *,
    actor: Actor,
    client_id: str,
    redirect_uri: str,
    redirect_uri_given: bool = True,
    code_challenge: str,
    resource: str,
    scope: str,
    projects: list[int] | None,
) -> str:
    """Record what the signed-in person consents to and return the authorization code (once).

    `projects` None means every project the person may see, now and later; a list narrows the
    client to those, each of which the person must see today. `scope` is read or write."""
    if not signed_in(actor) or actor.token_id is not None or actor.agent:
        raise Forbidden("Only a signed-in person may connect a client to Cairn.")
    if scope not in TokenScope.values:
        raise ValidationFailed(f"Choose read or write access, not {scope!r}.", field="scope")
    client = OAuthClient.objects.filter(client_id=client_id, revoked_at__isnull=True).first()
    if client is None:
        raise NotFound("This client is unknown or was revoked; connect it again from its app.")
    chosen: list[int] = []
    if projects is not None:
        wanted = sorted(set(projects))
        if not wanted:
            raise ValidationFailed(
                "Choose at least one project, or every project.", field="projects"
            )
        chosen = list(visible_projects(actor).filter(pk__in=wanted).values_list("pk", flat=True))
        if len(chosen) != len(wanted):
            raise NotFound("One of the chosen projects is not one you can see; choose again.",
                           field="projects")  # fmt: skip
    made = new_secret(CODE_PREFIX)
    OAuthCode.objects.create(
        code_hash=made.digest,
        client=client,
        user=actor.user,
        scope=scope,
        project_ids=chosen,
        narrowed=projects is not None,
        resource=resource,
        redirect_uri=redirect_uri,
        redirect_uri_given=redirect_uri_given,
        code_challenge=code_challenge,
        expires_at=timezone.now() + timedelta(seconds=settings.CAIRN_OAUTH_CODE_SECONDS),
    )
    return made.secret


def _person_may_connect(user) -> bool:
    return bool(user.is_active)


@transaction.atomic(durable=True)
def oauth_code_exchange(*, actor: Actor, client_id: str, code: str) -> IssuedTokens | TokenRefusal:
    """The tokens for an authorization code whose PKCE proof the token endpoint checked. A code
    used twice is refused and the grant the first use made is revoked (its tokens with it)."""
    found = (
        OAuthCode.objects.select_for_update()
        .select_related("client", "user")
        .filter(code_hash=secret_digest(code), client__client_id=client_id)
        .first()
    )
    if found is None:
        return TokenRefusal("invalid_grant", f"This authorization code is unknown. {SIGN_IN_AGAIN}")
    if found.used_at is not None:
        if found.grant_id is not None:
            revoke_grant(found.grant, "its authorization code was used twice")
        return TokenRefusal(
            "invalid_grant",
            "This authorization code was already used: the connection it made is revoked, in "
            f"case someone else holds the code. {SIGN_IN_AGAIN}",
        )
    now = timezone.now()
    found.used_at = now
    if found.expires_at <= now or found.client.revoked_at or not found.user.is_active:
        found.save(update_fields=["used_at"])
        return TokenRefusal(
            "invalid_grant",
            "This authorization code expired, or its client or person lost access. "
            + SIGN_IN_AGAIN,
        )
    grant = OAuthGrant.objects.create(
        client=found.client,
        user=found.user,
        scope=found.scope,
        narrowed=found.narrowed,
        resource=found.resource,
        redirect_uri=found.redirect_uri,
        expires_at=grant_end(now),
    )
    if found.narrowed:
        # Projects deleted since the consent are simply gone; the grant keeps "narrowed".
        grant.projects.set(found.project_ids)
    found.grant = grant
    found.save(update_fields=["used_at", "grant"])
    return issue_tokens(grant)


@transaction.atomic(durable=True)
def oauth_token_refresh(
    *, actor: Actor, client_id: str, refresh_token: str
) -> IssuedTokens | TokenRefusal:
    """Rotate: the refresh token is spent, the grant's access token gets a new secret and a new
    refresh token comes with it. A spent one presented again means two holders: the grant is
    revoked. A revoked grant, a revoked client or a deactivated person gets nothing."""
    found = (
        OAuthRefreshToken.objects.select_for_update()
        .select_related("grant__client", "grant__user")
        .filter(token_hash=secret_digest(refresh_token), grant__client__client_id=client_id)
        .first()
    )
    if found is None:
        return TokenRefusal("invalid_grant", f"This refresh token is unknown. {SIGN_IN_AGAIN}")
    grant, now = found.grant, timezone.now()
    if grant.revoked_at is not None:
        return TokenRefusal(
            "invalid_grant",
            f"This connection was revoked ({grant.revoked_reason or 'by its person'}). "
            + SIGN_IN_AGAIN,
        )
    if found.used_at is not None:
        revoke_grant(grant, "a refresh token was used twice")
        return TokenRefusal(
            "invalid_grant",
            "This refresh token was already used: the connection is revoked, in case someone "
            f"else holds a copy of it. {SIGN_IN_AGAIN}",
        )
    if not _person_may_connect(grant.user) or grant.client.revoked_at is not None:
        revoke_grant(grant, "its person or client lost access")
        return TokenRefusal("invalid_grant", f"This connection lost its access. {SIGN_IN_AGAIN}")
    if found.expires_at <= now or (grant.expires_at and grant.expires_at <= now):
        return TokenRefusal("invalid_grant", f"This connection expired. {SIGN_IN_AGAIN}")
    found.used_at = now
    found.save(update_fields=["used_at"])
    access = ApiToken.objects.select_for_update().filter(grant=grant).first()
    return issue_tokens(grant, access=access)


def _may_manage(actor: Actor, owner_pk: int) -> bool:
    user = actor.user
    return bool(
        actor.token_id is None
        and getattr(user, "is_authenticated", False)
        and (user.pk == owner_pk or getattr(user, "is_superuser", False))
    )


@transaction.atomic(durable=True)
def oauth_grant_revoke(*, actor: Actor, grant_id: int) -> OAuthGrant:
    """End one connection (your own; superusers: anyone's): its tokens are refused on their
    next request, refresh included. Revoking twice keeps the first time."""
    grant = OAuthGrant.objects.select_for_update().filter(pk=grant_id).first()
    if grant is None or not (_may_manage(actor, grant.user_id) or actor.agent == "system:cairn"):
        raise NotFound(f"No connected client {grant_id} that you may disconnect.", grant=grant_id)
    who = "by its person" if actor.user.pk == grant.user_id else "by an administrator"
    revoke_grant(grant, f"disconnected {who}")
    return grant


@transaction.atomic(durable=True)
def oauth_client_disconnect(*, actor: Actor, client_pk: int) -> int:
    """End every connection of yours with one client at once; returns how many ended."""
    if actor.token_id is not None or not getattr(actor.user, "is_authenticated", False):
        raise Forbidden("Sign in to disconnect a client.")
    grants = OAuthGrant.objects.select_for_update().filter(
        client_id=client_pk, user=actor.user, revoked_at__isnull=True
    )
    return sum(revoke_grant(grant, "disconnected by its person") for grant in grants)


@transaction.atomic(durable=True)
def oauth_token_revoke(*, actor: Actor, client_id: str, grant_id: int) -> bool:
    """A client giving up its own connection (RFC 7009 revocation with its access or refresh
    token): the whole grant ends. False when it was already revoked."""
    grant = (
        OAuthGrant.objects.select_for_update()
        .filter(pk=grant_id, client__client_id=client_id)
        .first()
    )
    return grant is not None and revoke_grant(grant, "revoked by the client")
