"""Sequences moved past ids that were given explicitly (a restore)."""

from __future__ import annotations

from django.core.management.color import no_style
from django.db import connection


def reset_sequences(models: list) -> None:
    """Move each model's id sequence past its largest id (Django's own statements for it)."""
    with connection.cursor() as cursor:
        for sql in connection.ops.sequence_reset_sql(no_style(), models):
            cursor.execute(sql)
