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


class BacklogSnapshot(models.Model):
    """What was waiting at one moment: open items, the embedding backlog, the git mirror's
    queue, its lag and its parked revisions. The counts themselves keep no past, so the dashboard
    could not say whether a backlog grows; a periodic task (history/snapshots.py) keeps one row
    per interval, for CAIRN_BACKLOG_SNAPSHOT_KEEP_DAYS."""

    # The start of the interval the row stands for: a second run in the same interval finds
    # the row taken (unique) and writes nothing.
    taken_at = models.DateTimeField(unique=True)
    # {project id: open entries}, so each person's plot sums only the projects they may see.
    open_by_project = models.JSONField(default=dict)
    # None: the embedding provider failed, so the backlog was not known.
    embedding_backlog = models.PositiveIntegerField(null=True)
    mirror_pending = models.PositiveIntegerField()
    mirror_lag_seconds = models.FloatField()
    parked = models.PositiveIntegerField()

    class Meta:
        ordering = ["-taken_at"]

    def __str__(self) -> str:
        return f"backlogs at {self.taken_at:%Y-%m-%d %H:%M}"
