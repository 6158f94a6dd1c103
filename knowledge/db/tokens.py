"""The per-request check of a cached token actor, as one statement."""

from __future__ import annotations

from functools import cache

from django.contrib.auth import get_user_model
from django.db import connection

from knowledge.models import ApiToken


@cache
def _recheck_sql() -> str:
    """The cached actor's per-request check as plain SQL: the same conditions as `live` and an
    active user, without building an ORM query on every request (that cost more than the
    query itself)."""
    quote = connection.ops.quote_name
    token, user = ApiToken._meta, get_user_model()._meta
    user_id, user_pk = token.get_field("user").column, user.pk.column
    through = ApiToken.projects.through._meta
    to_token = quote(through.get_field("apitoken").column)
    to_project = quote(through.get_field("project").column)
    # The secret's digest too: a client's token is given a new secret in place when it
    # refreshes (knowledge/services/_kernel/oauth.py), and the old one must stop at once.
    return (
        "SELECT t.last_used_at, t.agent_label, u.is_superuser, t.scope, t.narrowed, "
        f"ARRAY(SELECT p.{to_project} FROM {quote(through.db_table)} p "
        f"WHERE p.{to_token} = t.id), t.resource FROM {quote(token.db_table)} t "
        f"JOIN {quote(user.db_table)} u ON u.{quote(user_pk)} = t.{quote(user_id)} "
        "WHERE t.id = %s AND t.secret_hash = %s AND t.revoked_at IS NULL AND u.is_active "
        "AND (t.expires_at IS NULL OR t.expires_at > %s) "
        "AND (%s::timestamptz IS NULL OR t.created_at > %s)"
    )


def token_recheck(token_id: int, digest: str, *, now, oldest) -> tuple | None:
    """(last_used_at, agent_label, is_superuser, scope, narrowed, project ids, resource) of a
    token still live with this secret and an active user (made after `oldest`, when given), or
    None: one primary-key read, without building an ORM query on every request."""
    with connection.cursor() as cursor:
        cursor.execute(_recheck_sql(), [token_id, digest, now, oldest, oldest])
        return cursor.fetchone()
