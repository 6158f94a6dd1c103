"""Revisions the git mirror set aside: one that cannot be rendered or committed waits here with
its error while the drain goes on with the next ones (history/mirror/)."""

from __future__ import annotations

from django.db import models


class ParkedRevision(models.Model):
    revision = models.OneToOneField(
        "knowledge.HistoricalEntry", on_delete=models.CASCADE, related_name="parked"
    )
    entry_id = models.IntegerField(db_index=True)  # the revision's entry (it may be deleted)
    error = models.TextField()
    attempts = models.PositiveIntegerField(default=1)
    parked_at = models.DateTimeField(auto_now_add=True)
    last_tried_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["revision_id"]

    def __str__(self) -> str:
        return f"revision {self.revision_id}: {self.error[:80]}"
