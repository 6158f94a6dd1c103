"""Query vectors: started before the full-text SQL runs, and remembered per distinct query.

Embedding a query is the slowest step of a hybrid search (tens of milliseconds on a CPU); it
needs no database, so it runs in a small thread pool while the request's thread runs the
full-text ranking. A query embedded while no other waits in this process gets the model's
threads for a lone query (CAIRN_SEARCH_QUERY_THREADS, the cores this process may use): a web
process's model otherwise runs the one thread that leaves the other cores to the other web
processes and the worker. Agents repeat and refine their queries, so the last few thousand
vectors are kept (least recently used first out). A vector depends only on the model and the
query text, never on the stored entries, so no write has to invalidate it; changing the model
changes the provider's name, which is part of the key.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from contextvars import copy_context

import numpy as np
from django.conf import settings

from knowledge.search import stages
from knowledge.search.providers import EmbeddingProvider, EmbeddingUnavailable, get_provider
from ops.lru import BoundedCache

log = logging.getLogger("knowledge.search.engine")  # the search's own log, as before the move

_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="cairn-query-embed")
_lock = threading.Lock()
_vectors: BoundedCache[np.ndarray] = BoundedCache(
    lambda: settings.CAIRN_SEARCH_QUERY_CACHE_BYTES,
    sizeof=lambda vector: vector.nbytes,  # the key (the query) is added when stored
)
_waiting = 0  # queries of this process submitted and not yet embedded


def _remember(key: tuple[str, str], vector: np.ndarray) -> None:
    _vectors.put(key, vector, size=vector.nbytes + len(key[0]) + len(key[1]) + 200)


def _threads_for_next() -> int | None:
    """Counts a query in; its model threads: CAIRN_SEARCH_QUERY_THREADS when no other query of
    this process waits for the model, else None (the provider's own number)."""
    global _waiting
    threads = getattr(settings, "CAIRN_SEARCH_QUERY_THREADS", 0)
    with _lock:
        alone = _waiting == 0
        _waiting += 1
    return threads if alone and threads > 0 else None


def _embed(provider: EmbeddingProvider, query: str, threads: int | None) -> np.ndarray:
    """Embeds a query counted in by _threads_for_next, and counts it out."""
    global _waiting
    try:
        with stages.stage("embed"):
            vector = np.asarray(provider.embed_query(query, threads=threads), dtype=np.float32)
    finally:
        with _lock:
            _waiting -= 1
    vector.setflags(write=False)  # shared between requests: nobody may change it
    _remember((provider.name, query), vector)
    return vector


def query_vector(provider: EmbeddingProvider, query: str) -> Future[np.ndarray]:
    """The query's vector, as a future: already done when the query was seen recently."""
    key = (provider.name, query)
    vector = _vectors.get(key)
    if vector is not None:
        stages.add("embed (cached)", 0.0)
        done: Future[np.ndarray] = Future()
        done.set_result(vector)
        return done
    if not getattr(settings, "CAIRN_SEARCH_EMBED_AHEAD", True):
        return _Later(provider, query)  # the old order: embedded when the vector SQL needs it
    # Counted in now (a submitted task always runs, and counts itself out).
    return _pool.submit(copy_context().run, _embed, provider, query, _threads_for_next())


class _Later:
    """A vector computed in the caller's thread on first .result() (embed-ahead switched off)."""

    def __init__(self, provider: EmbeddingProvider, query: str) -> None:
        self.provider, self.query = provider, query

    def result(self) -> np.ndarray:
        return _embed(self.provider, self.query, _threads_for_next())


def clear() -> None:
    """Forget every remembered vector (tests, and a benchmark that must measure cold)."""
    _vectors.clear()


def start_query_vector(query: str, mode: str):
    """(provider, future vector), started now so the model works while the text SQL runs;
    (None, None) when hybrid search has to do without (semantic search raises instead)."""
    if mode not in ("hybrid", "semantic"):
        return None, None
    try:
        provider = get_provider()
        if provider is None:
            raise EmbeddingUnavailable(
                "Semantic search is switched off (CAIRN_EMBEDDING_PROVIDER=none). "
                "Use mode='text' or 'hybrid', or configure an embedding provider."
            )
    except EmbeddingUnavailable as exc:
        if mode == "semantic":
            raise
        log.warning("Hybrid search fell back to full text: %s", exc.message)
        return None, None
    return provider, query_vector(provider, query)
