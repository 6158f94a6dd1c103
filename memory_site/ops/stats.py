"""The memory's state for operators (readiness and metrics): whole-site counts, no names.

Kept for CAIRN_READY_CACHE_SECONDS per process, so polling /readyz or scraping /metrics every
few seconds costs a handful of indexed counts at most that often.
"""

from __future__ import annotations

import threading
import time

from django.conf import settings
from django.utils import timezone

_lock = threading.Lock()
_cached: tuple[float, dict] | None = None


def snapshot(*, fresh: bool = False) -> dict:
    global _cached
    with _lock:
        if (
            not fresh
            and _cached
            and time.monotonic() - _cached[0] < settings.CAIRN_READY_CACHE_SECONDS
        ):
            return _cached[1]
    state = {
        "mirror": mirror_state(),
        "embeddings": embedding_state(),
        **sizes(),
    }
    with _lock:
        _cached = (time.monotonic(), state)
    return state


def forget() -> None:
    global _cached
    with _lock:
        _cached = None


def mirror_state() -> dict:
    from history.mirror.repo import parked, pending

    queue = pending()
    oldest = queue.order_by("history_id").values_list("history_date", flat=True).first()
    lag = (timezone.now() - oldest).total_seconds() if oldest else 0.0
    stale_before = timezone.now() - timezone.timedelta(seconds=settings.CAIRN_READY_MIRROR_MAX_LAG)
    return {
        "pending": queue.count(),
        "lag_seconds": round(lag, 1),
        # Set aside with their error (mirror status / mirror retry), and pending too long.
        "parked": parked().count(),
        "stale": queue.filter(history_date__lt=stale_before).count() if oldest else 0,
    }


def embedding_state() -> dict:
    from knowledge.search.providers import get_provider
    from knowledge.selectors.embeddings import stale_embeddings

    try:
        provider = get_provider()
    except Exception as exc:  # a misconfigured provider is reported, not raised
        return {"provider": settings.CAIRN_EMBEDDING_PROVIDER, "backlog": 0, "error": str(exc)}
    if provider is None:
        return {"provider": "none", "backlog": 0, "model_loaded": None}
    backlog = stale_embeddings(model_name=provider.name).count()
    return {
        "provider": settings.CAIRN_EMBEDDING_PROVIDER,
        "model": provider.name,
        "backlog": backlog,
        # A local model loads on first use in each process; a remote one is not ours to load.
        "model_loaded": getattr(provider, "loaded", None),
    }


def sizes() -> dict:
    from history.mirror.repo import HistoricalEntry
    from knowledge.models import Entry, Project

    return {
        "entries": Entry.objects.count(),
        "revisions": HistoricalEntry.objects.count(),
        "projects": Project.objects.count(),
    }
