"""Search's statements that the ORM cannot say."""

from __future__ import annotations

from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import BooleanField, FloatField, QuerySet
from django.db.models.expressions import RawSQL

from knowledge.db.round_trip import statement_of


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


# Every chunk of a small scope, compared exactly: "+ 0" keeps the planner off the HNSW index
# (it would stop after ef_search rows). Written by hand: the ORM built it slower than it ran.
_EXACT_SQL = """
SELECT entry_id, (embedding <=> %s::vector) + 0.0 AS distance, id
FROM knowledge_entrychunk
WHERE model = %s AND entry_id IN ({scope})
ORDER BY distance
LIMIT %s
"""


def exact_distances(scope: QuerySet, vector, model: str, limit: int) -> tuple[str, list]:
    """(entry id, distance, chunk id) of every chunk of `model` of the entries `scope` holds,
    nearest first: compared one by one (a small scope), never through the HNSW index."""
    scope_sql, scope_params = statement_of(scope.order_by().values("pk"))
    return _EXACT_SQL.format(scope=scope_sql), [vector, model, *scope_params, limit]


def hnsw_scan(ef_search: int) -> tuple[str, list]:
    """The HNSW settings of one transaction, as a statement sent with the query: filtered scans
    go on until enough rows pass the filters (pgvector 0.8), and the settings end with it."""
    return (
        "SELECT set_config('hnsw.ef_search', %s, true), "
        "set_config('hnsw.iterative_scan', 'relaxed_order', true)",
        [str(ef_search)],
    )


def _or_sql(func: str, items: list[str], config: str) -> tuple[str, list]:
    sql = " || ".join(f"{func}(%s::regconfig, %s)" for _ in items)
    params: list = []
    for item in items:
        params += [config, item]
    return f"({sql})", params


def text_constraint(required: list[list[str]], excluded: list[str], config: str) -> RawSQL | None:
    """Entries that match one phrase of each `required` group and none of the `excluded`
    words or phrases (an entry without a vector is kept by an exclusion); None: no constraint."""
    parts: list[str] = []
    params: list = []
    for group in required:
        s, p = _or_sql("phraseto_tsquery", group, config)
        parts.append(f"search_vector @@ {s}")
        params += p
    for value in excluded:
        func = "phraseto_tsquery" if " " in value else "plainto_tsquery"
        parts.append(f"NOT coalesce(search_vector @@ {func}(%s::regconfig, %s), false)")
        params += [config, value]
    if not parts:
        return None
    return RawSQL(" AND ".join(f"({p})" for p in parts), params, BooleanField())


def word_stats_sql(
    words: list[str],
    config: str,
    projects: QuerySet | tuple[str, tuple],
    *,
    searched: int | None = None,
) -> tuple[str, list]:
    """Per lexeme of `words` (as `config` parses them), how many entries of `projects` hold it,
    and the number of searchable entries of those projects and of `searched`: rows of
    (quoted lexeme, ndoc, NULL) and one (NULL, entries, entries searched). The ORM cannot
    select FROM unnest() of a tsvector."""

    if isinstance(projects, tuple):
        scope_sql, scope_params = projects
    else:
        try:
            scope_sql, scope_params = projects.values("pk").query.sql_with_params()
        except EmptyResultSet:  # no project at all (anonymous): nothing counted
            scope_sql, scope_params = "SELECT NULL::bigint WHERE false", ()
    return (
        f"""
        WITH scope AS MATERIALIZED ({scope_sql})
        SELECT quote_literal(u.lexeme), coalesce(sum(s.ndoc), 0)::int, NULL::int
        FROM unnest(to_tsvector(%s::regconfig, %s)) u
        LEFT JOIN knowledge_lexemestat s
          ON s.word = u.lexeme AND s.project_id IN (SELECT * FROM scope)
        GROUP BY u.lexeme
        UNION ALL
        SELECT NULL, coalesce(sum(ndoc), 0)::int,
               (sum(ndoc) FILTER (WHERE %s::bigint IS NULL OR project_id = %s))::int
        FROM knowledge_lexemestat
        WHERE word = '' AND project_id IN (SELECT * FROM scope)
        """,
        [*scope_params, config, " ".join(words), searched, searched],
    )


def fetch_rows(statement: tuple[str, list]) -> list[tuple]:
    """The rows of one statement."""
    with connection.cursor() as cursor:
        cursor.execute(*statement)
        return cursor.fetchall()


def matches(tsquery: str) -> RawSQL:
    """Entries whose vector matches `tsquery` (a tsquery's text, not words to parse)."""
    return RawSQL("search_vector @@ %s::tsquery", [tsquery], BooleanField())


def weighted_rank(weights: list[float], tsquery: str, normalization: int) -> RawSQL:
    """ts_rank of an entry's vector against `tsquery`, its fields weighed by `weights`."""
    return RawSQL(
        f"ts_rank(%s::float4[], search_vector, %s::tsquery, {int(normalization)})",
        [weights, tsquery],
        FloatField(),
    )


def idf_rank_sum(
    terms: list[tuple[float, str]], weights: list[float], normalization: int
) -> RawSQL:
    """Sum over (idf, tsquery) of idf times ts_rank: BM25-like, saturating with repetition."""
    sql = " + ".join(
        f"%s * ts_rank(%s::float4[], search_vector, %s::tsquery, {int(normalization)})"
        for _ in terms
    )
    params: list = []
    for idf, tsquery in terms:
        params += [idf, weights, tsquery]
    return RawSQL(sql, params, FloatField())


def idf_held(terms: list[tuple[float, str]]) -> RawSQL:
    """Sum over (idf, tsquery) of the idf of each lexeme the entry's vector holds: how much of
    the query's weight it matches at all (a common word weighs little)."""
    sql = " + ".join(
        "(CASE WHEN search_vector @@ %s::tsquery THEN %s::float8 ELSE 0 END)" for _ in terms
    )
    params: list = []
    for idf, tsquery in terms:
        params += [tsquery, idf]
    return RawSQL(sql, params, FloatField())


# One round trip for both: per entry, the current observation that best matches the words
# ("o": category, content), and the place of the chunk its vector matched among its chunks of
# the same model ("c": place, count).
_MATCHES_SQL = """
SELECT * FROM (
    SELECT DISTINCT ON (entry_id) 'o', entry_id, category, content, NULL::int, NULL::int
    FROM knowledge_observation
    WHERE entry_id = ANY(%s) AND valid_to IS NULL AND search_vector @@ %s::tsquery
    ORDER BY entry_id, ts_rank(search_vector, %s::tsquery) DESC, position
) observations
UNION ALL
SELECT 'c', b.entry_id, NULL, NULL, b.ordinal + 1,
       (SELECT count(*) FROM knowledge_entrychunk x
        WHERE x.entry_id = b.entry_id AND x.model = b.model)::int
FROM knowledge_entrychunk b WHERE b.id = ANY(%s)
UNION ALL
SELECT 'a', e.id, NULL, NULL, NULL::int, NULL::int
FROM knowledge_entry e WHERE e.id = ANY(%s) AND e.search_vector @@ %s::tsquery
"""


def hit_matches(
    word_ids: list[int], tsquery: str, chunk_ids: list[int], every: str
) -> tuple[str, list]:
    """('o', entry id, category, content, NULL, NULL) for the observation of each of `word_ids`
    that best matches `tsquery`, ('c', entry id, NULL, NULL, place from 1, count) for the
    chunks `chunk_ids` among their entry's chunks of the same model, and ('a', entry id, …) for
    each of `word_ids` whose text holds every word of the query (`every`)."""
    return _MATCHES_SQL, [word_ids, tsquery, tsquery, chunk_ids, word_ids, every]


# %s: the headline's tsquery (NULL: none), entry ids, chunk ids; e.id = ANY() reads by key.
_ROWS_SQL = """
SELECT e.id, e.short_id, e.title, e.slug, e.body, e.kind, e.tags, e.status, e.updated_at,
       p.slug, s.path,
       CASE WHEN %s::tsquery IS NOT NULL AND e.id = ANY(%s)
            THEN ts_headline(%s::regconfig, e.body, %s::tsquery, %s) END,
       coalesce(c.text, '')
FROM knowledge_entry e
JOIN knowledge_project p ON p.id = e.project_id
LEFT JOIN knowledge_subtopic s ON s.id = e.subtopic_id
LEFT JOIN knowledge_entrychunk c ON c.entry_id = e.id AND c.id = ANY(%s)
WHERE e.id = ANY(%s)
"""


def hit_rows(
    ids: list[int],
    *,
    chunk_ids: list[int],
    headline: str | None,
    headed: list[int],
    config: str,
    options: str,
) -> tuple[str, list]:
    """Entries `ids` as search hits show them (id, short_id, title, slug, body, kind, tags,
    status, updated_at, project slug, subtopic path, ts_headline of the `headed` ones against
    `headline`, the text of their chunk among `chunk_ids`): read by primary key."""
    return _ROWS_SQL, [headline, headed, config, headline, options, chunk_ids, ids]


# Per candidate of the second stage: which of the query's lexemes its text holds, which its
# title holds (weight A), and the start of its body when asked (a "when" question).
_STAGE_SQL = """
SELECT e.id,
       ARRAY(SELECT t FROM unnest(%s::text[]) t WHERE e.search_vector @@ t::tsquery),
       ARRAY(SELECT t FROM unnest(%s::text[]) t WHERE e.search_vector @@ (t || ':A')::tsquery),
       CASE WHEN %s THEN left(e.body, %s) ELSE '' END
FROM knowledge_entry e
WHERE e.id = ANY(%s)
"""


def stage_rows(
    ids: list[int], lexemes: list[str], *, bodies: bool, body_chars: int
) -> tuple[str, list]:
    """(entry id, the `lexemes` (quoted tsquery literals) its search vector holds, those its
    title holds, its body's first `body_chars` characters when `bodies` else '') of entries
    `ids`: read by primary key."""
    return _STAGE_SQL, [lexemes, lexemes, bodies, body_chars, ids]
