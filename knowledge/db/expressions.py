"""Expressions the ORM has no function for."""

from __future__ import annotations

from django.db.models import CharField, Func


class EmbeddingKey(Func):
    """knowledge.models.embedding_key in SQL: sha256 of "<content hash>\\n<title>", in hex."""

    template = "encode(sha256(convert_to(%(expressions)s, 'UTF8')), 'hex')"
    output_field = CharField()
