"""The mcp SDK's authorization-server provider interface, on knowledge's selectors and
services: the SDK's handlers parse and check the protocol (grant types, PKCE S256, redirect
URI equality, expiry), and every decision that reads or writes Cairn's data is made here.

The authorization endpoint is not the SDK's: /oauth/authorize is a page of the site
(views.py), because it signs the person in and asks for their consent.
"""

from __future__ import annotations

from asgiref.sync import sync_to_async
from mcp.server.auth.provider import AccessToken, AuthorizationCode, RefreshToken, TokenError
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from knowledge.actors import Actor
from knowledge.selectors.oauth import oauth_code, oauth_grant_of_access_token, oauth_refresh_token
from knowledge.services import (
    ClientRegistration,
    TokenRefusal,
    oauth_client_register,
    oauth_code_exchange,
    oauth_token_refresh,
    oauth_token_revoke,
)
from mcp_api.connections import recycle_connection
from memory_site.oauth.clients import CairnClient, find_client


async def run(fn, *args, **kwargs):
    """A database call from the async handlers, hygiene first (as /mcp's calls do)."""

    def call():
        recycle_connection()
        return fn(*args, **kwargs)

    return await sync_to_async(call, thread_sensitive=False)()


class GrantAccessToken(AccessToken):
    grant_id: int


class GrantRefreshToken(RefreshToken):
    grant_id: int


def _scopes(scope: str) -> list[str]:
    return ["read", "write"] if scope == "write" else ["read"]


def _register(info: OAuthClientInformationFull) -> None:
    registration = ClientRegistration(
        name=(info.client_name or "MCP client").strip() or "MCP client",
        redirect_uris=[str(u) for u in info.redirect_uris or []],
        auth_method=info.token_endpoint_auth_method or "none",
        grant_types=list(info.grant_types),
        scope=info.scope or "",
        client_uri=str(info.client_uri or ""),
        metadata=info.model_dump(mode="json", exclude_none=True, exclude={"client_secret"}),
    )
    oauth_client_register(
        actor=Actor.system(),
        client_id=info.client_id,
        secret=info.client_secret,
        registration=registration,
    )


def _code(client_id: str, code: str) -> AuthorizationCode | None:
    found = oauth_code(code, client_id)
    if found is None:
        return None
    return AuthorizationCode(
        code=code,
        scopes=_scopes(found.scope),
        expires_at=found.expires_at.timestamp(),
        client_id=client_id,
        code_challenge=found.code_challenge,
        redirect_uri=found.redirect_uri,
        redirect_uri_provided_explicitly=found.redirect_uri_given,
        resource=found.resource,
        subject=str(found.user_id),
    )


def _refresh(client_id: str, token: str) -> GrantRefreshToken | None:
    found = oauth_refresh_token(token, client_id)
    if found is None:
        return None
    return GrantRefreshToken(
        token=token,
        client_id=client_id,
        scopes=_scopes(found.grant.scope),
        expires_at=int(found.expires_at.timestamp()),
        resource=found.grant.resource,
        subject=str(found.grant.user_id),
        grant_id=found.grant_id,
    )


def _access(token: str) -> GrantAccessToken | None:
    grant = oauth_grant_of_access_token(token)
    if grant is None:
        return None
    return GrantAccessToken(
        token=token,
        client_id=grant.client.client_id,
        scopes=_scopes(grant.scope),
        resource=grant.resource,
        grant_id=grant.pk,
    )


def _answer(outcome) -> OAuthToken:
    if isinstance(outcome, TokenRefusal):  # what it revoked is committed
        raise TokenError(error=outcome.error, error_description=outcome.description)
    return OAuthToken(
        access_token=outcome.access_token,
        expires_in=outcome.expires_in,
        scope=outcome.scope,
        refresh_token=outcome.refresh_token,
    )


class CairnProvider:
    """OAuthAuthorizationServerProvider for the SDK's token, registration and revocation
    handlers."""

    async def get_client(self, client_id: str) -> CairnClient | None:
        return await run(find_client, client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        await run(_register, client_info)

    async def authorize(self, client, params) -> str:
        raise NotImplementedError("/oauth/authorize is memory_site.oauth.views.authorize")

    async def load_authorization_code(self, client, authorization_code: str):
        return await run(_code, client.client_id, authorization_code)

    async def exchange_authorization_code(self, client, authorization_code) -> OAuthToken:
        outcome = await run(
            oauth_code_exchange,
            actor=Actor.system(),
            client_id=client.client_id,
            code=authorization_code.code,
        )
        return _answer(outcome)

    async def load_refresh_token(self, client, refresh_token: str):
        return await run(_refresh, client.client_id, refresh_token)

    async def exchange_refresh_token(self, client, refresh_token, scopes) -> OAuthToken:
        outcome = await run(
            oauth_token_refresh,
            actor=Actor.system(),
            client_id=client.client_id,
            refresh_token=refresh_token.token,
        )
        return _answer(outcome)

    async def load_access_token(self, token: str):
        return await run(_access, token)

    async def revoke_token(self, token) -> None:
        await run(
            oauth_token_revoke,
            actor=Actor.system(),
            client_id=token.client_id,
            grant_id=token.grant_id,
        )
