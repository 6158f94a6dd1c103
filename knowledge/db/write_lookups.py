"""The statement behind a write's report (knowledge.reads.write_lookups): the link targets it
shows, and for a new entry the entries whose titles are alike (pg_trgm's `%` through the title's
GIN index) and those whose body is the same (the entry_body_key index), in one statement.

Plain SQL: building these queries cost a write more CPU than running them
(bench/write_path.py), and one round trip serves all three lookups.
tests/knowledge/db/test_statements.py holds it to the ORM's three querysets.
"""

from __future__ import annotations

from django.db import connection

from knowledge.models import EntryStatus

MAX_SIMILAR = 3
SIMILAR_CANDIDATES = MAX_SIMILAR + 3  # titles alike by trigrams, kept when alike enough

_COLUMNS = """e.id, e.short_id, e.title, e.slug, e.kind, e.status, e.updated_at, p.slug,
       s.path, %(score)s
  FROM knowledge_entry e
  JOIN knowledge_project p ON p.id = e.project_id
  LEFT JOIN knowledge_subtopic s ON s.id = e.subtopic_id"""
_TARGETS = f"""SELECT 't', {_COLUMNS % {"score": "0::real"}}
 WHERE e.id = ANY(%(targets)s::bigint[]) AND e.project_id IN ({{visible}})"""
# The writer just wrote to this project, so it can see the project's entries; like search,
# superseded entries and transcripts (not searchable) are left out.
_SIMILAR = f"""(SELECT 's', {_COLUMNS % {"score": "similarity(e.title, %(title)s)"}}
 WHERE e.project_id = %(project)s AND e.title %% %(title)s AND e.id <> %(id)s
   AND e.status <> '{EntryStatus.SUPERSEDED.value}' AND e.searchable
 ORDER BY 11 DESC, e.id LIMIT {SIMILAR_CANDIDATES})"""
# The very expression of the entry_body_key index (knowledge.models.entries.body_key), the new
# body's key computed by PostgreSQL from the body sent, so the two always agree.
_KEY = "MD5(LOWER(TRIM(REGEXP_REPLACE({}, '\\s+', ' ', 'g'))))"
_SAME_BODY = f"""(SELECT 'b', {_COLUMNS % {"score": "0::real"}}
 WHERE {_KEY.format("e.body")} = {_KEY.format("%(body)s::text")}
   AND e.project_id IN ({{visible}}) AND e.id <> %(id)s
 ORDER BY e.updated_at DESC LIMIT {MAX_SIMILAR})"""


def report_rows(
    visible: tuple[str, dict],
    *,
    targets: list[int],
    similar: bool,
    same_body: bool,
    title: str,
    project: int,
    entry_id: int | None,
    body: str,
) -> list[tuple]:
    """('t' | 's' | 'b', id, short_id, title, slug, kind, status, updated_at, project slug,
    subtopic path, score) rows: the `targets` among the `visible` projects (the access rule's
    statement and its parameters), and with `similar` the lookalike titles in `project`, with
    `same_body` the visible entries whose body is the same."""
    parts = ([_TARGETS] if targets else []) + ([_SIMILAR] if similar else [])
    parts += [_SAME_BODY] if same_body else []
    if not parts:
        return []
    visible_sql, visible_params = visible
    sql = "\nUNION ALL\n".join(parts).replace("{visible}", visible_sql)
    params = {"targets": targets, "title": title, "project": project, "id": entry_id,
              "body": body, **visible_params}  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()
