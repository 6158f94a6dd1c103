"""Hybrid search: Postgres full text and pgvector similarity, fused (knowledge/search/fusion.py).

Both rankings run over the same filtered set of entries (knowledge/search/scope.py: what the
actor may see, narrowed by the caller's filters, inside the SQL) so fusion never has to drop
hits afterwards; knowledge/search/hits.py turns the fused ids into hits with snippets. The
query is embedded in a worker thread while the full-text side runs (query_vectors.py).
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import replace

from django.conf import settings
from django.core.exceptions import EmptyResultSet

from knowledge.actors import Actor
from knowledge.db import fetch_together
from knowledge.errors import ValidationFailed
from knowledge.search import result_cache, stages
from knowledge.search.by_filters import filtered_entries
from knowledge.search.explain import annotate, matches_statement
from knowledge.search.filters import NO_FILTERS, SearchFilters
from knowledge.search.freshness import pending_from, pending_statement
from knowledge.search.fulltext import text_ranking_query, word_stats_from, word_stats_statement
from knowledge.search.fusion import Fusion, floored, fuse_lists
from knowledge.search.hits import load_hits, preload
from knowledge.search.providers import EmbeddingUnavailable
from knowledge.search.query import check_query, filter_expression, parse
from knowledge.search.query_vectors import start_query_vector
from knowledge.search.reranking import mark, rerank
from knowledge.search.scope import scope_is_small, search_scope
from knowledge.search.semantic import semantic_ranking
from knowledge.search.types import Rankings, SearchResults
from knowledge.selectors import visible_projects_sql

log = logging.getLogger(__name__)

MODES = ("hybrid", "text", "semantic")
MAX_LIMIT = 100


def _ready(vector) -> bool:
    """Whether the query's vector is at hand (a Future done without failing)."""
    has_done = getattr(vector, "done", None) is not None  # embed-ahead switched off: none
    return has_done and not _still_embedding(vector) and vector.exception() is None


def _take_text(result: Rankings, scored: list[tuple[int, float, float]]) -> None:
    result.text = [pk for pk, _, _ in scored]
    result.text_scores = {pk: rank for pk, rank, _ in scored}
    result.text_held = {pk: held for pk, _, held in scored}


def _still_embedding(vector) -> bool:
    done = getattr(vector, "done", None)  # a Future; embed-ahead switched off has none
    return done is not None and not done()


def _prefetch(result: Rankings, count: int) -> None:
    with stages.stage("prefetch"):
        result.loaded, result.highlights = preload(result.text[:count], result.rank_tsquery)


def rankings(
    actor: Actor,
    query: str,
    *,
    mode: str = "hybrid",
    candidates: int | None = None,
    prefetch: int = 0,
    filters: SearchFilters = NO_FILTERS,
    started: tuple | None = None,
    first: tuple[str, list] | None = None,
) -> Rankings:
    """The full-text and semantic candidate lists for a query, both already filtered.
    `started`: the (provider, vector) of `start_query_vector` for this query, if begun;
    `first`: result_cache's generation statement, sent ahead of the first statements."""
    if mode not in MODES:
        raise ValidationFailed(
            f"Unknown search mode {mode!r}; use hybrid, text or semantic.", field="mode"
        )
    query = " ".join((query or "").split())
    if not query:
        raise ValidationFailed("Search needs a query, e.g. 'deployment checklist'.", field="query")
    n = candidates or settings.CAIRN_SEARCH_CANDIDATES
    config = settings.CAIRN_SEARCH_CONFIG
    provider, vector = started or start_query_vector(query, mode)
    result = Rankings(degraded=mode == "hybrid" and vector is None)
    with stages.stage("parse + scope"):
        parsed = parse(query)
        scope, searched = search_scope(actor, filters)
        searched_set = scope  # before the query's own words narrow it
        constraint = filter_expression(parsed, config)
        if constraint is not None:
            scope = scope.filter(constraint)
    words = [*parsed.words, *(phrase for group in parsed.required for phrase in group)]
    terms, known = [], None
    statements = {"generation": first} if first is not None else {}
    if vector is not None:  # a search by meaning misses the entries that have no vectors yet
        with contextlib.suppress(EmptyResultSet):  # a scope that cannot hold anything
            statements["pending"] = pending_statement(searched_set)
    if words or vector is not None:
        # Word statistics of every project the actor may see (also when one project is
        # searched: the wider sample ranks better), never of one they cannot.
        statements["idf"] = word_stats_statement(
            words, config, visible_projects_sql(actor), searched=searched
        )
    if statements:
        with stages.stage("idf lookup"):  # and the pending entries: one round trip
            found = dict(zip(statements, fetch_together(list(statements.values())), strict=True))
        if "generation" in found:
            result.stamp = result_cache.stamp(found["generation"])
        if "pending" in found:
            result.pending = pending_from(found["pending"])
        if "idf" in found:
            stats = word_stats_from(found["idf"])
            terms, known = stats.terms, stats.entries
            result.idf = {t.tsquery: t.idf for t in terms}
    # Settled while the query is embedded: it picks how the vector SQL reads the chunks.
    narrowed = bool(constraint) or filters.narrowed
    small = scope_is_small(scope, known, narrowed) if vector is not None else True
    text_query = None
    if terms:  # none when the query holds only stop words
        result.rank_tsquery = " | ".join(t.tsquery for t in terms)
        result.every_tsquery = " & ".join(t.tsquery for t in terms)
        if mode in ("hybrid", "text"):
            text_query = text_ranking_query(scope, terms, n)
    # A vector already at hand (a repeated query) goes with the text ranking in one round trip.
    together = text_query is not None and _ready(vector)
    if text_query is not None and not together:
        with stages.stage("text SQL"):
            _take_text(result, list(text_query))

    if (
        prefetch
        and result.text
        and _still_embedding(vector)
        and settings.CAIRN_SEARCH_SNIPPETS != "headline"
    ):
        _prefetch(result, prefetch)  # the request would only wait for the model meanwhile
    if vector is not None:
        try:
            semantic, text_rows = semantic_ranking(
                scope, provider, vector, n, exact=small, along=text_query if together else None
            )
            result.semantic, result.chunks, result.semantic_scores, result.similarities = semantic
            if together:
                _take_text(result, text_rows)
        except EmbeddingUnavailable as exc:
            if mode == "semantic":
                raise
            log.warning("Hybrid search fell back to full text: %s", exc.message)
            result.degraded = True
    return result


def search_entries(
    actor: Actor,
    query: str,
    *,
    filters: SearchFilters = NO_FILTERS,
    limit: int = 10,
    mode: str = "hybrid",
    weak: bool = False,
) -> SearchResults:
    """Entries the actor may see that match `query`, best first.

    mode: hybrid (full text and semantic, fused), text or semantic. The filters apply before
    ranking; superseded entries and transcripts are left out unless the filters'
    include_history / include_transcripts (or an explicit status) ask for them. Without words
    (an empty query), the entries the filters select, newest first. The hits' `note` says when
    entries of the searched set wait for their vectors ("" otherwise).
    """
    try:
        limit = int(limit)
    except (TypeError, ValueError):
        limit = 0
    if not 1 <= limit <= MAX_LIMIT:
        raise ValidationFailed(f"limit must be between 1 and {MAX_LIMIT}.", field="limit")
    check_query(query)
    if parse(query).is_empty and not parse(query).excluded:
        return SearchResults(filtered_entries(actor, filters, limit=limit))  # nothing to embed
    query = " ".join(query.split())
    # The model starts now: a new question's kept-answer lookup then costs it no time, and a
    # repeated one finds its vector remembered (nothing to compute).
    started = start_query_vector(query, mode)
    return result_cache.cached(
        actor,
        ("search", query, mode, limit, filters, weak),
        lambda first: _ranked(
            actor,
            query,
            filters=filters,
            limit=limit,
            mode=mode,
            started=started,
            first=first,
            weak=weak,
        ),
        # A question whose vector was not remembered was not asked lately: no kept answer.
        look=started[1] is None or _ready(started[1]),
    )


def _ranked(
    actor: Actor,
    query: str,
    *,
    filters: SearchFilters,
    limit: int,
    mode: str,
    started: tuple,
    first: tuple[str, list] | None,
    weak: bool = False,
) -> SearchResults:
    fused, found, relaxed = first_stage(
        actor,
        query,
        mode=mode,
        filters=filters,
        candidates=max(settings.CAIRN_SEARCH_CANDIDATES, limit),
        weak=weak,
        prefetch=limit,
        started=started,
        first=first,
    )
    unfloored, below = found.unfloored, found.below_floor
    with stages.stage("second stage"):
        fused, moved = rerank(query, fused, found, mode)
        fused = fused[:limit]
    left_out = sum(1 for i, _ in unfloored[:limit] if i in below)
    with stages.stage("hits + snippets"):
        # What the signals show of the hits is read in the same round trip.
        matches = matches_statement([pk for pk, _ in fused], found)
        shown, matched = load_hits(fused, found, alongside=matches)
        hits = SearchResults(shown)
    _carry_signals(hits, found, mode, matched if matches is not None else [])
    mark(hits, query, moved)
    if relaxed and hits.words_matched:  # they hold the words, none the phrase asked for
        hits.words_matched = False
    hits.left_out = left_out
    hits.note = found.pending.note(mode) if found.pending else ""
    hits.cacheable = not found.degraded  # kept only when both lists ran as asked
    hits.stamp = found.stamp  # of the first rankings (a relaxed one sends no such statement)
    return hits


def first_stage(
    actor: Actor,
    query: str,
    *,
    mode: str,
    filters: SearchFilters = NO_FILTERS,
    candidates: int | None = None,
    weak: bool = False,
    **ahead,
) -> tuple[list[tuple[int, float]], Rankings, bool]:
    """The fused list above the relevance floor, the rankings it came from, and whether the
    query's quoted phrases were relaxed to words: what the second stage reorders (the benches
    dump it to train on). `weak`: no floor. `ahead`: rankings' prefetch, started and first.
    The rankings keep the fused list before the floor and the hits the floor left out (the
    answer says how many of its first hits those were)."""
    found = rankings(actor, query, mode=mode, candidates=candidates, filters=filters, **ahead)
    relaxed = not (found.text or found.semantic) and bool(parse(query).required)
    if relaxed:
        # A quoted title that no entry spells exactly (questions quote books, songs…): rather
        # than answer nothing, search again with the phrase's words as ordinary words.
        stamp = found.stamp
        words = query.replace('"', " ")
        found = rankings(actor, words, mode=mode, candidates=candidates, filters=filters)
        found.stamp = stamp
    with stages.stage("fusion"):
        fused = fuse(found, mode)
        floor = 0.0 if weak else settings.CAIRN_SEARCH_MIN_SIMILARITY
        found.unfloored = fused
        fused, found.below_floor = floored(
            fused, found.text, found.semantic_scores, floor, held=found.text_held
        )
    return fused, found, relaxed


def _carry_signals(hits: SearchResults, found: Rankings, mode: str, matched: list) -> None:
    """Each hit's place and score per list, and whether any hit holds the query's words."""
    with stages.stage("signals"):
        searched = [
            name
            for name, ran in (
                ("words", mode != "semantic" and bool(found.rank_tsquery)),
                ("meaning", bool(found.semantic)),  # none: off, or no vectors to compare
            )
            if ran
        ]
        annotate(hits, found, contributions(found, mode), searched=searched, matched=matched)


def contributions(found: Rankings, mode: str) -> tuple[dict[int, float], dict[int, float]]:
    """What the words and the meaning each add to a hit's fused score: the same fusion, run
    with the other list's weight at 0."""
    if mode == "text":
        return dict(fuse(found, mode)), {}
    if mode == "semantic":
        return {}, dict(fuse(found, mode))
    return dict(fuse(found, mode, semantic_weight=0.0)), dict(fuse(found, mode, text_weight=0.0))


def default_fusion() -> Fusion:
    return Fusion(
        method=settings.CAIRN_SEARCH_FUSION,
        text_weight=settings.CAIRN_SEARCH_TEXT_WEIGHT,
        semantic_weight=settings.CAIRN_SEARCH_SEMANTIC_WEIGHT,
        k=settings.CAIRN_SEARCH_RRF_K,
        text_lead=settings.CAIRN_SEARCH_TEXT_LEAD,
    )


def fuse(
    found: Rankings,
    mode: str,
    *,
    text_weight: float | None = None,
    semantic_weight: float | None = None,
    fusion: Fusion | None = None,
) -> list[tuple[int, float]]:
    fusion = fusion or default_fusion()
    if mode == "text":
        fusion = replace(fusion, text_weight=1.0, semantic_weight=0.0, text_lead=0.0)
    elif mode == "semantic":
        fusion = replace(fusion, text_weight=0.0, semantic_weight=1.0, text_lead=0.0)
    else:
        if text_weight is not None:
            fusion = replace(fusion, text_weight=text_weight)
        if semantic_weight is not None:
            fusion = replace(fusion, semantic_weight=semantic_weight)
    return fuse_lists(fusion, found.text, found.text_scores, found.semantic, found.semantic_scores)
