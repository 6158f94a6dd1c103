"""The search answers' generation (knowledge.search.result_cache): a sequence every write that
can change an answer advances after it commits."""

from __future__ import annotations

import logging

import psycopg
from django.conf import settings
from django.db import DatabaseError, connection

SEQUENCE = "knowledge_search_generation"
# The generation now. A sequence not advanced yet (fresh from its migration) has is_called
# false and last_value the value its next nextval will give: it reads as the one before (0), so
# that first advance moves the generation. memory_site/backup/restore.py reads it too.
CURRENT = f"SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM {SEQUENCE}"
log = logging.getLogger(__name__)


def advance() -> None:
    """Advance the search generation (knowledge.search.result_cache): run after a commit."""
    # After the commit: a failure here must not turn a committed write into an error. Kept
    # answers then stay until CAIRN_SEARCH_RESULT_CACHE_SECONDS, which is what the bound is for.
    try:
        # The driver's own connection: every write pays this, and Django's cursor (its wrappers,
        # the timing hook) would cost several times the statement.
        connection.ensure_connection()
        connection.connection.execute(f"SELECT nextval('{SEQUENCE}')")
    except (DatabaseError, psycopg.Error) as exc:
        connection.errors_occurred = True  # Django checks the connection before its next use
        log.warning(
            "Could not advance the search generation (%s); repeated searches may answer from "
            "before this write for up to %ss.",
            exc,
            float(settings.CAIRN_SEARCH_RESULT_CACHE_SECONDS),
        )


def generation_statement(visible: tuple[str, list]) -> tuple[str, list]:
    """The generation and the ids of the `visible` projects (the access rule's statement and
    its parameters), as one statement."""
    visible_sql, params = visible
    return (
        f"SELECT ({CURRENT}), ARRAY(SELECT v.id FROM ({visible_sql}) v(id) ORDER BY 1)",
        list(params),
    )


def fetch(statement: tuple[str, list]) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(*statement)
        return cursor.fetchall()
