"""Which entries wait for vectors: site-wide and by id only (the embedding sweep and the
operators' backlog count read it; no actor, since it names no project, title or text)."""

from __future__ import annotations

from django.db.models import CharField, F, Func, QuerySet, Value
from django.db.models.functions import Concat

from knowledge.models import Entry


class _EmbeddingKey(Func):
    # knowledge.services.embeddings.embedding_key in SQL: sha256 of "<content hash>\n<title>".
    template = "encode(sha256(convert_to(%(expressions)s, 'UTF8')), 'hex')"
    output_field = CharField()


def stale_embeddings(*, model_name: str) -> QuerySet[Entry]:
    """Entries whose vectors are missing, made from older text, or made by another model."""
    key = _EmbeddingKey(Concat(F("content_hash"), Value("\n"), F("title")))
    return Entry.objects.exclude(embedding_model=model_name, embedded_hash=key)
