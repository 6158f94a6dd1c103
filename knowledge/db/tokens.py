"""The per-request check of a cached token actor: the ORM's statement, compiled once per shape."""

from __future__ import annotations

from django.contrib.postgres.expressions import ArraySubquery
from django.db.models import OuterRef, Q, QuerySet

from knowledge.db.compiled import Compiled, Stand, compile_once
from knowledge.models import ApiToken


def _recheck(lifetime: bool) -> Compiled:
    """The same conditions as a live token (knowledge.services.tokens) and an active user, and
    what may have changed since the actor was built (its projects as an ARRAY subquery, no
    aggregate). One shape with a maximum token lifetime, one without."""

    def build(s: Stand) -> QuerySet:
        live = Q(revoked_at__isnull=True) & (
            Q(expires_at__isnull=True) | Q(expires_at__gt=s.time("now"))
        )
        if lifetime:
            live &= Q(created_at__gt=s.time("oldest"))
        projects = ApiToken.projects.through.objects.filter(apitoken_id=OuterRef("pk"))
        # The secret's digest too: a client's token is given a new secret in place when it
        # refreshes (knowledge/services/_kernel/oauth.py), and the old one must stop at once.
        return (
            ApiToken.objects.filter(live, pk=s.int("id"), secret_hash=s.text("digest"))
            .filter(user__is_active=True)
            .annotate(project_ids=ArraySubquery(projects.values("project_id")))
            .order_by()
            .values_list(
                "last_used_at",
                "agent_label",
                "user__is_superuser",
                "scope",
                "narrowed",
                "project_ids",
                "resource",
            )
        )

    return compile_once(("token_recheck", lifetime), build)


def token_recheck(token_id: int, digest: str, *, now, oldest) -> tuple | None:
    """(last_used_at, agent_label, is_superuser, scope, narrowed, project ids, resource) of a
    token still live with this secret and an active user (made after `oldest`, when given), or
    None: one primary-key read, compiled once (building the queryset on every request cost
    more than running it)."""
    if oldest is None:
        return _recheck(False).first(id=token_id, digest=digest, now=now)
    return _recheck(True).first(id=token_id, digest=digest, now=now, oldest=oldest)
