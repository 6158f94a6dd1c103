"""The meaning list of a search: the scope's entries by their best chunk's similarity to the
query, read exactly (a small scope) or by walking the HNSW index, in the same round trip as
the text ranking when the query's vector is ready in time."""

from __future__ import annotations

import contextlib
from concurrent.futures import Future

from django.conf import settings
from django.core.exceptions import EmptyResultSet
from django.db.models import OuterRef, QuerySet, Subquery
from pgvector import Vector
from pgvector.django import CosineDistance

from knowledge.db import fetch_together
from knowledge.db.round_trip import statement_of
from knowledge.db.search import exact_distances, hnsw_scan
from knowledge.models import Entry, EntryChunk
from knowledge.search import stages


def semantic_ranking(
    scope: QuerySet[Entry],
    provider,
    vector: Future,
    n: int,
    *,
    exact: bool,
    along: QuerySet | None = None,
) -> tuple[tuple, list[tuple]]:
    """The scope's entries by their best chunk's similarity to the query, and the rows of
    `along` (a query sent in the same round trip: the text ranking when the vector was ready
    before it ran).

    exact: every chunk of the scope is compared (a few thousand at most). Otherwise the HNSW
    index is walked nearest first and each chunk is checked against the scope by a correlated
    subquery: as a join, the planner would read the whole scope and every chunk first
    (0.3-0.4 s at 100k entries instead of 5-10 ms, bench/scale.py).
    """
    with stages.stage("embed wait"):
        vector = vector.result()  # started before the full-text SQL; usually done by now
    statements = []
    if along is not None:
        with contextlib.suppress(EmptyResultSet):  # a scope that cannot hold anything
            statements.append(statement_of(along))
    texts = len(statements)
    with contextlib.suppress(EmptyResultSet):  # an actor who sees no project
        statements += vector_statements(scope, provider, vector, n, exact=exact)
    with stages.stage("text + vector SQL" if texts else "vector SQL"):
        results = fetch_together(statements) if statements else []
    rows = results[-1] if len(results) > texts else []
    return by_similarity(rows, n), results[0] if texts else []


def vector_statements(scope: QuerySet[Entry], provider, vector, n: int, *, exact: bool) -> list:
    """The statements whose last one reads (entry id, distance, chunk id), nearest first."""
    # Only ids and distances here: chunk texts are read for the few hits shown.
    # A chunk row per hit and a few more: entries have 1-2 chunks. Reading more costs nothing
    # when exact, and ~1 ms per 15 rows when walking the index with the scope check.
    if exact:
        return [exact_distances(scope, Vector._to_db(vector), provider.name, n * 3)]
    chunks = EntryChunk.objects.filter(model=provider.name)
    in_scope = scope.order_by().filter(pk=OuterRef("entry_id")).values("pk")[:1]
    query = (
        chunks.annotate(in_scope=Subquery(in_scope))
        .filter(in_scope__isnull=False)
        .annotate(distance=CosineDistance("embedding", vector))
        .order_by("distance")
        .values_list("entry_id", "distance", "pk")[: n * 2]
    )
    # Sent with the query in one round trip, both statements run as one transaction
    # (instead of BEGIN, set_config, query, COMMIT).
    scan = hnsw_scan(max(settings.CAIRN_SEARCH_EF_SEARCH, n * 4))
    return [scan, statement_of(query)]


def by_similarity(
    rows: list, n: int
) -> tuple[list[int], dict[int, int], dict[int, float], dict[int, list[float]]]:
    rows = sorted(rows, key=lambda row: row[1])  # relaxed_order may return rows out of order
    ranking: list[int] = []
    best: dict[int, int] = {}
    similarity: dict[int, float] = {}
    every: dict[int, list[float]] = {}  # each chunk read, for the second stage
    for entry_id, distance, chunk_id in rows:
        every.setdefault(entry_id, []).append(1.0 - float(distance))
        if entry_id not in best:
            best[entry_id] = chunk_id
            similarity[entry_id] = 1.0 - float(distance)
            ranking.append(entry_id)
    return ranking[:n], best, similarity, every
