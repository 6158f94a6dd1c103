"""The search answers' generation (knowledge.search.result_cache): a sequence that advances after
every commit that wrote a table a search reads.

A rule of the write path, not a list of writes: `watch_writes` wraps every statement of every
connection (installed by knowledge.apps when a connection opens) and, for an INSERT, UPDATE or
DELETE of a searched table, has the generation advance once the transaction commits (at once
outside one). A trigger could not do this: nextval is not transactional, so it would advance
before the commit and a search in between could keep an old answer under the new generation."""

from __future__ import annotations

import functools
import logging
import re

import psycopg
from django.conf import settings
from django.db import DatabaseError, connection, transaction

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


# The tables a search's answer reads: entries and their chunks and vectors, the facts, projects,
# subtopics, memberships (who sees a project) and the word statistics.
SEARCHED = ("Entry", "EntryChunk", "Observation", "Relation", "Project", "Subtopic", "Membership",
            "LexemeStat")  # fmt: skip


@functools.cache
def _writes() -> re.Pattern:
    from django.apps import apps

    tables = sorted({apps.get_model("knowledge", name)._meta.db_table for name in SEARCHED})
    names = "|".join(re.escape(t) for t in tables)
    return re.compile(rf'\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+"?(?:{names})"?(?![\w])')


def _after_commit() -> None:
    if not connection.in_atomic_block:
        advance()
    elif not any(hook is advance for _, hook, *_ in connection.run_on_commit):
        transaction.on_commit(advance)


def watch_writes(execute, sql, params, many, context):
    result = execute(sql, params, many, context)
    # A read is the common case: one prefix check, then nothing.
    if (
        sql.lstrip()[:6].upper() != "SELECT"
        and _writes().search(sql)
        and _changed(sql, many, context)
    ):
        _after_commit()
    return result


def _changed(sql: str, many: bool, context) -> bool:
    """Whether the write touched a row: one that matched none (the sweep finding nothing
    stale) changes no answer. A statement with a WITH reports only its last part's rows."""
    cursor = context.get("cursor")
    rows = getattr(cursor, "rowcount", -1)
    return many or rows != 0 or sql.lstrip()[:4].upper() == "WITH"


def install(connection, **kwargs) -> None:
    """Watch this connection's statements (connection_created). First in the list: Django's
    execute_wrapper() context removes the last one on exit, which must stay its own."""
    if watch_writes not in connection.execute_wrappers:
        connection.execute_wrappers.insert(0, watch_writes)
