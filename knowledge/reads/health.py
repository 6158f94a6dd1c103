"""The memory's size and embedding backlog for operators (readiness and metrics): whole-site
counts, no names, so no actor."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Count, Min
from django.db.models.functions import Coalesce
from django.utils import timezone

from knowledge.models import Entry, Project
from knowledge.search.providers import get_provider
from knowledge.selectors.embeddings import stale_embeddings


def entry_count() -> int:
    return Entry.objects.count()


def project_count() -> int:
    return Project.objects.count()


def embedding_state() -> dict:
    try:
        provider = get_provider()
    except Exception as exc:  # a misconfigured provider is reported, not raised
        return {
            "provider": settings.CAIRN_EMBEDDING_PROVIDER,
            "backlog": 0,
            "oldest_seconds": 0.0,
            "error": str(exc),
        }
    if provider is None:
        return {"provider": "none", "backlog": 0, "oldest_seconds": 0.0, "model_loaded": None}
    waiting = stale_embeddings(model_name=provider.name).aggregate(
        backlog=Count("pk"),
        # Since its text changed; an entry stale for another reason (a model change) since it
        # was marked, or else since its last change.
        oldest=Min(Coalesce("embed_pending_since", "updated_at")),
    )
    oldest = waiting["oldest"]
    return {
        "provider": settings.CAIRN_EMBEDDING_PROVIDER,
        "model": provider.name,
        "backlog": waiting["backlog"],
        "oldest_seconds": round((timezone.now() - oldest).total_seconds(), 1) if oldest else 0.0,
        # A local model loads on first use in each process; a remote one is not ours to load.
        "model_loaded": getattr(provider, "loaded", None),
    }
