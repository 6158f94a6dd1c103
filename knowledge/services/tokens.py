"""Personal API tokens: create (the secret is returned once), revoke, authenticate."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.postgres.aggregates import ArrayAgg
from django.contrib.sessions.models import Session
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from knowledge.actors import Actor
from knowledge.db.tokens import token_recheck
from knowledge.errors import Forbidden, NotFound, ValidationFailed
from knowledge.models import ApiToken, OAuthGrant, Project, TokenScope
from knowledge.services._kernel.secrets import new_secret
from ops.lru import BoundedCache

# last_used_at is informative: writing it on every request would turn each read into a write.
LAST_USED_GRANULARITY = timedelta(minutes=1)


@dataclass(frozen=True)
class CreatedToken:
    token: ApiToken
    secret: str  # shown once; only its sha256 is stored


def _max_lifetime() -> timedelta | None:
    days = settings.CAIRN_TOKEN_MAX_DAYS
    return timedelta(days=days) if days else None


def _bounded_expiry(expires_at: datetime | None) -> datetime | None:
    """No expiry means the longest allowed (CAIRN_TOKEN_MAX_DAYS); longer is refused."""
    longest = _max_lifetime()
    if longest is None:
        return expires_at
    limit = timezone.now() + longest
    if expires_at is None:
        return limit
    if expires_at > limit + timedelta(minutes=1):
        raise ValidationFailed(
            f"A token may live at most {longest.days} days (CAIRN_TOKEN_MAX_DAYS); choose an "
            f"expiry before {limit:%Y-%m-%d}.",
            field="expires_at",
        )
    return expires_at


def _may_manage(actor: Actor, owner) -> bool:
    user = actor.user
    return bool(
        getattr(user, "is_authenticated", False)
        and (user.pk == owner.pk or getattr(user, "is_superuser", False))
    )


@transaction.atomic(durable=True)
def token_create(
    *,
    actor: Actor,
    user,
    name: str,
    scope: str = TokenScope.WRITE,
    projects: list[str | int] | None = None,
    agent_label: str = "",
    expires_at: datetime | None = None,
) -> CreatedToken:
    """Create a token for `user` (yourself, or anyone if you are a superuser)."""
    if not _may_manage(actor, user) and actor.agent != "system:cairn":
        raise Forbidden("You may create tokens only for yourself (superusers: for anyone).")
    if actor.token_id is not None:
        raise Forbidden("A token cannot create tokens; sign in or use manage.py create_token.")
    name = (name or "").strip()
    if not name:
        raise ValidationFailed("Give the token a name, e.g. 'laptop claude-code'.", field="name")
    if scope not in TokenScope.values:
        raise ValidationFailed(
            f"Unknown scope {scope!r}; use one of {', '.join(TokenScope.values)}.", field="scope"
        )
    if expires_at is not None and expires_at <= timezone.now():
        raise ValidationFailed("expires_at is in the past.", field="expires_at")
    expires_at = _bounded_expiry(expires_at)
    chosen = []
    for ref in projects or []:
        text = str(ref).strip()
        lookup = Q(slug__iexact=text) | Q(name__iexact=text)
        if text.isdigit():
            lookup |= Q(pk=int(text))
        project = Project.objects.filter(lookup).first()
        if project is None:
            raise NotFound(f"No project {text!r} to restrict the token to.", project=text)
        chosen.append(project)
    made = new_secret(ApiToken.PREFIX)
    token = ApiToken(
        user=user,
        name=name[:100],
        prefix=made.shown,
        secret_hash=made.digest,
        scope=scope,
        agent_label=agent_label.strip()[:120],
        expires_at=expires_at,
        narrowed=bool(chosen),
    )
    token.save()
    if chosen:
        token.projects.set(chosen)
    return CreatedToken(token=token, secret=made.secret)


@transaction.atomic(durable=True)
def token_revoke(*, actor: Actor, token_id: int) -> ApiToken:
    """Revoke a token at once; revoking twice keeps the first revocation time."""
    token = ApiToken.objects.select_for_update().select_related("user").filter(pk=token_id).first()
    if token is None or not (_may_manage(actor, token.user) or actor.agent == "system:cairn"):
        raise NotFound(f"No token {token_id} that you may revoke.", token=token_id)
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


@transaction.atomic(durable=True)
def token_update(
    *,
    actor: Actor,
    token_id: int,
    name: str,
    agent_label: str = "",
    expires_at: datetime | None = None,
) -> ApiToken:
    """Rename a token or change its label or expiry; its scope and projects stay as created."""
    token = ApiToken.objects.select_for_update().select_related("user").filter(pk=token_id).first()
    if token is None or not _may_manage(actor, token.user):
        raise NotFound(f"No token {token_id} that you may change.", token=token_id)
    if not (name or "").strip():
        raise ValidationFailed("A token needs a name.", field="name")
    expires_at = _bounded_expiry(expires_at)
    token.name, token.agent_label, token.expires_at = name.strip()[:100], agent_label, expires_at
    token.save(update_fields=["name", "agent_label", "expires_at"])
    return token


@dataclass(frozen=True)
class RevokedAccess:
    tokens: int
    sessions: int
    password_disabled: bool  # False when the account had no usable password (SSO only)
    flags_cleared: tuple[str, ...] = ()  # of is_staff, is_superuser: those it had


@transaction.atomic(durable=True)
def user_access_revoke(*, actor: Actor, user) -> RevokedAccess:
    """Deactivate `user` and take away what let them in: every token revoked (connected clients
    too), every session (admin and site) ended, the password made unusable, the staff and
    superuser flags cleared. An inactive account is refused by password and token sign-in, and
    by single sign-on (memory_site/sso/adapters.py), until a superuser ticks 'active' again: for
    someone who left, or lost a group in the identity provider. Superusers (or the system)
    only."""
    if not (getattr(actor.user, "is_superuser", False) or actor.agent == "system:cairn"):
        raise Forbidden("Only a superuser may revoke another person's access.")
    if actor.token_id is not None:
        raise Forbidden("A token cannot revoke access; sign in or use manage.py revoke_access.")
    if actor.user is not None and actor.user.pk == user.pk:
        raise Forbidden("You cannot revoke your own access; ask another superuser.")
    tokens = ApiToken.objects.filter(user=user, revoked_at__isnull=True).update(
        revoked_at=timezone.now()
    )
    # Their connected clients' refresh tokens die with the grants (the access tokens above).
    OAuthGrant.objects.filter(user=user, revoked_at__isnull=True).update(
        revoked_at=timezone.now(), revoked_reason="the person's access was revoked"
    )
    doomed = [
        session.pk
        for session in Session.objects.filter(expire_date__gt=timezone.now()).iterator()
        if str(session.get_decoded().get("_auth_user_id")) == str(user.pk)
    ]
    Session.objects.filter(pk__in=doomed).delete()
    had_password = user.has_usable_password()
    cleared = tuple(flag for flag in ("is_staff", "is_superuser") if getattr(user, flag))
    user.set_unusable_password()
    user.is_active = user.is_staff = user.is_superuser = False
    user.save(update_fields=["password", "is_active", "is_staff", "is_superuser"])
    return RevokedAccess(
        tokens=tokens, sessions=len(doomed), password_disabled=had_password, flags_cleared=cleared
    )


# --- token -> actor cache --------------------------------------------------------------------
# Building an Actor reads the token, its user and its project restriction (a join and an
# aggregate) and makes the objects; each web process keeps the Actor for a few minutes. Whatever
# decides what it may do is re-read on every request by the token's primary key, from the
# database all web processes share: revocation, expiry, the user's active and superuser flags,
# the agent label, the scope and the projects (a restore re-points a narrowed token to the
# restored projects, a deleted project leaves it). A token revoked or re-pointed by any process
# is taken as it now is by every process on its very next request, with nothing to broadcast.
# How long: CAIRN_TOKEN_CACHE_SECONDS (0 turns the cache off).
# An Actor (its user, its project ids) is a few KB; 4 MB keep about a thousand tokens' actors.
ACTOR_CACHE_BYTES = 4 << 20
_actors: BoundedCache[Actor] = BoundedCache(
    ACTOR_CACHE_BYTES,
    seconds=lambda: settings.CAIRN_TOKEN_CACHE_SECONDS,
)  # secret hash -> actor


def _cached_actor(digest: str) -> Actor | None:
    return _actors.get(digest)


def _remember_actor(digest: str, actor: Actor) -> None:
    if settings.CAIRN_TOKEN_CACHE_SECONDS > 0:
        _actors.put(digest, actor)


def _forget_actor(digest: str) -> None:
    _actors.pop(digest)


def _reach(scope: str, narrowed: bool, project_ids) -> tuple[frozenset[str], frozenset[int] | None]:
    """What a token with these columns may do: its scopes and its projects (None: all of its
    user's). A narrowed token whose projects were all deleted sees nothing: an empty frozenset,
    never None."""
    scopes = {"read", "write"} if scope == TokenScope.WRITE else {"read"}
    return frozenset(scopes), frozenset(project_ids or ()) if narrowed else None


def _touch(token_id: int, last_used_at, now) -> None:
    if last_used_at is None or now - last_used_at > LAST_USED_GRANULARITY:
        ApiToken.objects.filter(pk=token_id).update(last_used_at=now)


def token_authenticate(secret: str, *, resources: Collection[str] = ()) -> Actor | None:
    """The Actor for a bearer secret, or None when it is unknown, revoked, expired or inactive.

    A token a client got through MCP authorization is bound to one resource (RFC 8707): it is
    refused unless that resource is among `resources`, the names of the endpoint asking (its
    /mcp URL under each of the site's names). A personal token is good everywhere."""
    if not secret or not secret.startswith(ApiToken.PREFIX) or len(secret) > 200:
        return None
    now = timezone.now()
    digest = ApiToken.hash_secret(secret)
    live = Q(revoked_at__isnull=True) & (Q(expires_at__isnull=True) | Q(expires_at__gt=now))
    if _max_lifetime():
        # Tokens made before the lifetime setting (no expiry) end at the same age.
        live &= Q(created_at__gt=now - _max_lifetime())
    cached = _cached_actor(digest)
    if cached is not None:
        # One primary-key read of what may have changed since the Actor was built.
        oldest = now - _max_lifetime() if _max_lifetime() else None
        row = token_recheck(cached.token_id, digest, now=now, oldest=oldest)
        if row is None:
            _forget_actor(digest)
            return None
        last_used_at, agent_label, is_superuser, scope, narrowed, project_ids, resource = row
        if resource and resource not in resources:
            return None
        same = (
            agent_label == cached.agent
            and is_superuser == cached.user.is_superuser
            and _reach(scope, narrowed, project_ids) == (cached.scopes, cached.project_ids)
        )
        if same:
            _touch(cached.token_id, last_used_at, now)
            return cached
        _forget_actor(digest)  # changed: build it afresh below
    # One query: the token, its user and its project ids together.
    token = (
        ApiToken.objects.select_related("user")
        .filter(live, secret_hash=digest)
        .annotate(project_ids=ArrayAgg("projects__id", filter=Q(projects__isnull=False)))
        .first()
    )
    if token is None or not token.user.is_active:
        return None
    if token.resource and token.resource not in resources:
        return None
    _touch(token.pk, token.last_used_at, now)
    scopes, project_ids = _reach(token.scope, token.narrowed, token.project_ids)
    actor = Actor(
        user=token.user,
        agent=token.agent_label,
        scopes=scopes,
        project_ids=project_ids,
        token_id=token.pk,
    )
    _remember_actor(digest, actor)
    return actor
