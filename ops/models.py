"""Ops' own data: how long each operation took, kept for operators (`manage.py metrics`)."""

from __future__ import annotations

from django.db import models


class OperationTiming(models.Model):
    """One MCP tool call, REST route, admin save, command or background task, as it ran.

    Written in batches by ops.timing (never inside the operation's transaction) and
    pruned after CAIRN_TIMINGS_KEEP_DAYS. The parts (database, embedding, git) are None where
    the surface cannot tell them apart.
    """

    at = models.DateTimeField(db_index=True)
    surface = models.CharField(max_length=16)
    operation = models.CharField(max_length=120)
    outcome = models.CharField(max_length=16)  # ok, refused (a KnowledgeError) or error
    error = models.CharField(max_length=120, blank=True)  # the exception's class name
    total_ms = models.FloatField()
    db_ms = models.FloatField(null=True)
    embed_ms = models.FloatField(null=True)
    git_ms = models.FloatField(null=True)
    entries = models.IntegerField(null=True)  # entries in the memory at the time
    content_bytes = models.IntegerField(null=True)  # the written content, for writes

    class Meta:
        indexes = [models.Index(fields=["operation", "at"], name="timing_operation_at")]
        verbose_name = "operation timing"
        db_table = "site_operationtiming"  # the table it had in the site app: rows are kept

    def __str__(self) -> str:
        return f"{self.surface} {self.operation} {self.total_ms:.1f} ms ({self.outcome})"
