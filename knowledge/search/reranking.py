"""The learned second stage inside a search: read what it needs of the fused list's top
candidates (one statement), score them (knowledge/search/second_stage.py), reorder.

Runs in hybrid mode only (its weights were learned on the fused lists of both rankings), when
CAIRN_SEARCH_RERANK is "learned", and not when the first hit leads the second by more than
CAIRN_SEARCH_RERANK_SKIP_LEAD (a clear leader, which the stage would rarely move).
"""

from __future__ import annotations

import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from knowledge.db.search import fetch_rows, stage_rows
from knowledge.search import second_stage
from knowledge.search.second_stage import Candidate
from knowledge.search.types import Rankings, SearchResults

CHOICES = ("learned", "off")


def enabled(mode: str) -> bool:
    choice = settings.CAIRN_SEARCH_RERANK
    if choice not in CHOICES:
        raise ImproperlyConfigured(
            f"CAIRN_SEARCH_RERANK is {choice!r}; set it to learned (the second stage on) or off."
        )
    return choice == "learned" and mode == "hybrid"


def rerank(
    query: str, fused: list[tuple[int, float]], found: Rankings, mode: str
) -> tuple[list[tuple[int, float]], dict[int, int]]:
    """The fused list with its top CAIRN_SEARCH_RERANK_TOP reordered by the second stage, and
    {entry id: its place before (from 1)} for the hits the stage moved ({} when it did not
    run: off, another mode, a clear leader)."""
    if not enabled(mode) or second_stage.leads(fused, settings.CAIRN_SEARCH_RERANK_SKIP_LEAD):
        return fused, {}
    top = fused[: max(2, settings.CAIRN_SEARCH_RERANK_TOP)]
    scores = second_stage.installed().score(features(query, top, found))
    new = second_stage.reorder(fused, scores)
    moved = {i: place for place, (i, _) in enumerate(top, 1) if new[place - 1][0] != i}
    return new, moved


def features(query: str, top: list[tuple[int, float]], found: Rankings) -> np.ndarray:
    """The second stage's feature rows of the candidates `top`, as the search computes them
    (the benches dump these rows to train on: bench/locomo.py --dump)."""
    lexemes = list(found.idf)
    when = second_stage.is_when(query)
    rows = fetch_rows(
        stage_rows([i for i, _ in top], lexemes, bodies=when, body_chars=second_stage.DATED_CHARS)
    )
    candidates = {
        pk: Candidate(
            similarities=tuple(found.similarities.get(pk, ())),
            lexemes=frozenset(held),
            title_lexemes=frozenset(in_title),
            body=body,
        )
        for pk, held, in_title, body in rows
    }
    return second_stage.features(query, top, found.text_scores, found.idf, candidates)


def mark(hits: SearchResults, query: str, moved: dict[int, int]) -> None:
    """Each hit's place before the stage, when it moved it, and for a "when" question the
    date it shows (second_stage.date_used: rendering only, no ranking)."""
    when = second_stage.is_when(query)
    for hit in hits:
        if hit.signals is not None:
            hit.signals.first_place = moved.get(hit.id)
            if when:
                own = f"{hit.updated:%Y-%m-%d}"
                hit.signals.date_used = second_stage.date_used(hit.title, hit.snippet, own)
