"""Search's statements that the ORM cannot say."""

from __future__ import annotations

from django.db import connection


def recount_lexemes() -> None:
    """Rewrite the word statistics (knowledge_lexemestat): per project, how many searchable
    entries hold each lexeme, and under the word '' how many searchable entries there are.
    Readers keep the old counts until the caller's transaction commits. The ORM cannot select
    FROM unnest() of a tsvector."""
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM knowledge_lexemestat")
        cursor.execute(
            """
            INSERT INTO knowledge_lexemestat (project_id, word, ndoc)
            SELECT e.project_id, u.lexeme, count(*)
            FROM knowledge_entry e CROSS JOIN LATERAL unnest(e.search_vector) u
            WHERE e.searchable AND e.search_vector IS NOT NULL
            GROUP BY e.project_id, u.lexeme
            UNION ALL
            SELECT project_id, '', count(*) FROM knowledge_entry WHERE searchable
            GROUP BY project_id
            """
        )
