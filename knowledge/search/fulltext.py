"""Full-text ranking: BM25-style weighting of Postgres ts_rank by how rare each word is.

ts_rank alone treats every query word alike, so in a natural-language question the common
words ("go", "time") swamp the telling ones. Each lexeme's document frequency comes from
knowledge_lexemestat (recounted in the background), giving it a BM25 idf. The counts are kept
per project and summed over the projects the reader may see, so a word's rarity never reveals
what sits in a project the reader cannot open.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db.models import QuerySet, Subquery

from knowledge.db.search import (
    fetch_rows,
    idf_held,
    idf_rank_sum,
    matches,
    weighted_rank,
    word_stats_sql,
)
from knowledge.models import Entry, Project

# ts_rank normalization 1: divide by 1 + log(length), so a long entry that mentions a word
# in passing does not outrank a short one about it; | 32: then rank / (rank + 1), so each word's
# share saturates and one word matched many times cannot outweigh the others (LoCoMo dev: turn
# R@1 +0.008, session unchanged; bench/README.md, issue 35).
RANK_NORMALIZATION = 1 | 32
# Candidates are matched by the rarest lexemes until their counts add up to this.
TEXT_POOL = 5000
# A pool larger than this is first cut to this many by one ts_rank over all the query's words,
# then scored per word: at 100k entries scoring 2,000 candidates per word took 50-100 ms.
FIRST_CUT = 500


def rank_weights() -> str:
    """ts_rank's weights {D, C, B, A} from CAIRN_SEARCH_FIELD_WEIGHTS (title A, tags and path
    B, body C; nothing is indexed as D)."""
    weights = settings.CAIRN_SEARCH_FIELD_WEIGHTS
    if len(weights) != 3 or not all(0 <= w <= 1 for w in weights):
        raise ImproperlyConfigured(
            f"CAIRN_SEARCH_FIELD_WEIGHTS is {weights!r}; give three numbers between 0 and 1 for "
            "title, tags/path and body, e.g. 1.0,1.0,0.4."
        )
    title, place, body = weights
    return f"{{0.1, {body}, {place}, {title}}}"


@dataclass
class Term:
    tsquery: str  # a one-lexeme tsquery literal, e.g. 'support'
    ndoc: int  # entries containing it in the searched projects (0 when not counted yet)
    idf: float


@dataclass
class WordStats:
    terms: list[Term]  # the query's lexemes, rarest first
    entries: int | None  # searchable entries of the searched project(s); None: never counted


def word_stats(
    words: list[str],
    config: str,
    projects: QuerySet[Project] | tuple[str, tuple],
    *,
    searched: int | None = None,
) -> WordStats:
    """The query's distinct lexemes with their BM25 idf, counted over the entries of
    `projects` (which must be projects the reader may see; a queryset, or its ids compiled as
    (sql, params) by selectors.visible_projects_sql), and how many entries the project
    `searched` (else all of `projects`) holds: one query answers both."""
    return word_stats_from(
        fetch_rows(word_stats_statement(words, config, projects, searched=searched))
    )


def word_stats_statement(
    words: list[str],
    config: str,
    projects: QuerySet[Project] | tuple[str, tuple],
    *,
    searched: int | None = None,
) -> tuple[str, list]:
    """word_stats' statement, for a caller that sends it with others (word_stats_from reads
    its rows)."""
    return word_stats_sql(words, config, projects, searched=searched)


def word_stats_from(rows: list[tuple]) -> WordStats:
    total, entries = next(((n, e) for lexeme, n, e in rows if lexeme is None), (0, None))
    pairs = [(lexeme, n) for lexeme, n, _ in rows if lexeme is not None]
    total = max([total, 1, *(n for _, n in pairs)])
    terms = [Term(lexeme, n, math.log(1 + (total - n + 0.5) / (n + 0.5))) for lexeme, n in pairs]
    return WordStats(sorted(terms, key=lambda t: (t.ndoc, t.tsquery)), entries)


def text_ranking(scope: QuerySet[Entry], terms: list[Term], n: int) -> list[tuple[int, float]]:
    """Entries by text_ranking_query, best first: (entry id, score) pairs."""
    return [(pk, rank) for pk, rank, _ in text_ranking_query(scope, terms, n)]


def text_ranking_query(scope: QuerySet[Entry], terms: list[Term], n: int) -> QuerySet:
    """BM25-like: sum over the query's lexemes of idf times ts_rank (which saturates with
    repetition and weighs title > tags/path > body, CAIRN_SEARCH_FIELD_WEIGHTS), over entries
    containing any of them.

    Entries are matched by the rarest lexemes until their counts add up to TEXT_POOL; a word
    in half the corpus would otherwise make the whole corpus a candidate to score. A pool
    above FIRST_CUT is cut to FIRST_CUT by one plain ts_rank first.
    Its rows are (entry id, score, held) triples, best first; `held` sums the idf of the
    query's lexemes the entry holds (the relevance floor reads it, fusion.floored).
    """
    matching: list[Term] = []
    pool = 0
    for term in terms:
        if matching and pool + term.ndoc > TEXT_POOL:
            break
        matching.append(term)
        pool += term.ndoc
    match = " | ".join(t.tsquery for t in matching)
    weights = rank_weights()
    candidates = scope.filter(matches(match))
    if pool > FIRST_CUT:
        every_word = " | ".join(t.tsquery for t in terms)
        first = (
            candidates.annotate(first=weighted_rank(weights, every_word, RANK_NORMALIZATION))
            .order_by("-first", "-updated_at", "-pk")
            .values("pk")[:FIRST_CUT]
        )
        candidates = Entry.objects.filter(pk__in=Subquery(first))
    weighed = [(t.idf, t.tsquery) for t in terms]
    return (
        candidates.annotate(
            rank=idf_rank_sum(weighed, weights, RANK_NORMALIZATION), held=idf_held(weighed)
        )
        .order_by("-rank", "-updated_at", "-pk")
        .values_list("pk", "rank", "held")[:n]
    )
