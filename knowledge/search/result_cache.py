"""Answers of repeated searches, kept per web process until anything they read changes.

Agents repeat their searches (the same question again, the same lookup from several tools).
A repeated search already skips the query model (query_vectors.py); this skips the rest: the
word statistics, both rankings and the hits.

A kept answer is valid for one *generation* of the stored data. The generation is a Postgres
sequence that advances *after* every commit that wrote a table a search reads (an entry, its
chunks and vectors, a project, a subtopic, a membership, the word statistics:
knowledge.db.generation watches every statement, so no write can forget it): a search
that reads the generation afterwards misses and computes again, and an answer computed from
data older than its generation is never kept under a newer one, because it read the
generation first. The sequence is read with the actor's visible projects in one statement (a
new question sends it with the search's first statements, in the same round trip); the visible
project ids and the reader (user and token) are part of the key, so access is decided on every
call and no reader is answered from another's search. Memberships advance the generation too: a
project granted while a search ran cannot leave its hits under the key of a reader who no
longer sees it. A process that died between its commit and the
advance leaves answers stale for at most CAIRN_SEARCH_RESULT_CACHE_SECONDS.

Inside a transaction the cache is neither read nor filled: that transaction may hold writes
of its own, not yet committed, that no other reader may see.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Hashable

from django.conf import settings
from django.db import connection

from knowledge.actors import Actor
from knowledge.db import generation
from knowledge.search import stages
from knowledge.search.types import SearchResults
from knowledge.selectors import visible_projects_sql
from ops.lru import BoundedCache

log = logging.getLogger(__name__)


def _seconds() -> float:
    return float(settings.CAIRN_SEARCH_RESULT_CACHE_SECONDS)


_answers: BoundedCache[SearchResults] = BoundedCache(
    lambda: settings.CAIRN_SEARCH_RESULT_CACHE_BYTES, seconds=_seconds
)


def generation_statement(actor: Actor) -> tuple[str, list]:
    """The generation and the actor's visible project ids, as one statement (sql, params)."""
    return generation.generation_statement(visible_projects_sql(actor))


def stamp(rows: list) -> tuple[int, tuple[int, ...]]:
    """What generation_statement's rows say, as part of a key."""
    generation, ids = rows[0]
    return generation, tuple(ids)


def cached(
    actor: Actor,
    key: Hashable,
    compute: Callable[[tuple[str, list] | None], SearchResults],
    *,
    look: bool = True,
) -> SearchResults:
    """compute()'s answer for `key`, kept for this generation and this actor's projects.

    look: read the generation first and answer from a kept answer if there is one. A question
    that cannot have one (its query vector was not even remembered) skips that round trip:
    compute gets the generation statement to send first in its own first round trip, and sets
    the answer's `stamp` from its rows; the answer is kept under that. Answers marked
    `cacheable = False` (a degraded search) are returned but not kept."""
    if _seconds() <= 0 or connection.in_atomic_block:
        return compute(None)
    # The reader too: a grant that commits between the visible projects' read and the search's
    # own could put a newly visible project's hits under a key another reader shares.
    who = (getattr(actor.user, "pk", None), actor.token_id)
    if look:
        with stages.stage("result cache"):
            full_key = (*stamp(generation.fetch(generation_statement(actor))), who, key)
            kept = _answers.get(full_key)
            if kept is not None:
                return _copy(kept)
        answer = compute(None)
    else:
        answer = compute(generation_statement(actor))
        if answer.stamp is None:
            return answer
        full_key = (*answer.stamp, who, key)
    if answer.cacheable:
        _answers.put(full_key, _copy(answer))
    return answer


def _copy(answer: SearchResults) -> SearchResults:
    # Callers may change what they were given (hits are plain dataclasses); a kept answer never.
    return copy.deepcopy(answer)


def clear() -> None:
    _answers.clear()
