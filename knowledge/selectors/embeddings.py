"""Which entries wait for vectors: site-wide and by id only (the embedding sweep and the
operators' backlog count read it; no actor, since it names no project, title or text)."""

from __future__ import annotations

from django.db.models import F, QuerySet, Value
from django.db.models.functions import Concat

from knowledge.db.expressions import EmbeddingKey
from knowledge.models import Entry


def stale_embeddings(*, model_name: str) -> QuerySet[Entry]:
    """Entries whose vectors are missing, made from older text, or made by another model."""
    key = EmbeddingKey(Concat(F("content_hash"), Value("\n"), F("title")))
    return Entry.objects.exclude(embedding_model=model_name, embedded_hash=key)
