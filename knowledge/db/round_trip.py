"""Several statements in one round trip: parameters are bound on the client, so the statements
travel as one query string and come back as one result set each (`cursor.nextset()`)."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import QuerySet

from knowledge.db.compiled import Bound

Statement = tuple[str, Sequence] | QuerySet | Bound


def statement_of(queryset: QuerySet) -> tuple[str, tuple]:
    """A queryset's (sql, params), to send with others; raises EmptyResultSet for a queryset
    that can match nothing."""
    return queryset.query.sql_with_params()


def fetch_together(items: Sequence[Statement]) -> list[list]:
    """Each item's rows, all sent in one `execute`: a (sql, params) statement and a queryset
    give their rows as they come, a Bound call of a compiled queryset as it reads them. An
    item that can match nothing (EmptyResultSet) gives [] without being sent."""
    statements: list[tuple[int, str, Sequence]] = []
    for i, item in enumerate(items):
        if isinstance(item, Bound):
            if item.sql is not None:
                statements.append((i, item.sql, item.params))
        elif isinstance(item, QuerySet):
            with contextlib.suppress(EmptyResultSet):
                statements.append((i, *statement_of(item)))
        else:
            statements.append((i, *item))
    results: list[list] = [[] for _ in items]
    if not statements:
        return results
    sql = ";\n".join(text.strip().rstrip(";") for _, text, _ in statements)
    params = [param for _, _, statement_params in statements for param in statement_params]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for n, (i, _, _) in enumerate(statements):
            if n:
                cursor.nextset()
            rows = cursor.fetchall()
            item = items[i]
            results[i] = item.read(rows) if isinstance(item, Bound) else rows
    return results
