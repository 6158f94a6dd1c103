"""The backlogs' history: a periodic task (history.tasks.backlog_snapshot, Celery beat every
CAIRN_BACKLOG_SNAPSHOT_SECONDS and at worker start) records what is waiting now, one row per
interval, and prunes rows older than CAIRN_BACKLOG_SNAPSHOT_KEEP_DAYS. The dashboard draws them
(history/admin/dashboard.py) to show whether a backlog grows."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count
from django.utils import timezone

from history import selectors
from history.models import BacklogSnapshot
from knowledge.actors import Actor
from knowledge.models import Entry, EntryStatus
from knowledge.reads.health import embedding_state


def interval_start(now: dt.datetime) -> dt.datetime:
    """The start of the interval `now` falls in (counted from the epoch, so every process
    agrees on it)."""
    seconds = max(int(settings.CAIRN_BACKLOG_SNAPSHOT_SECONDS), 1)
    stamp = int(now.timestamp()) // seconds * seconds
    return dt.datetime.fromtimestamp(stamp, tz=dt.UTC)


@transaction.atomic(durable=True)
def backlog_snapshot_take(
    *, actor: Actor, now: dt.datetime | None = None
) -> BacklogSnapshot | None:
    """Record the backlogs for the interval `now` falls in, once (None when that interval has
    its row already), and prune the rows past the retention. The counts are site-wide: each
    reader's view is scoped when the rows are read."""
    now = now or timezone.now()
    start = interval_start(now)
    pruned = now - dt.timedelta(days=settings.CAIRN_BACKLOG_SNAPSHOT_KEEP_DAYS)
    BacklogSnapshot.objects.filter(taken_at__lt=pruned).delete()
    if BacklogSnapshot.objects.filter(taken_at=start).exists():
        return None
    # Every project's (the system actor sees none): counted as the dashboard counts its own.
    open_rows = (
        Entry.objects.filter(status=EntryStatus.OPEN)
        .order_by()
        .values("project_id")
        .annotate(n=Count("pk"))
    )
    embedding = embedding_state()
    mirror = selectors.mirror_state()
    snapshot = BacklogSnapshot(
        taken_at=start,
        open_by_project={str(r["project_id"]): r["n"] for r in open_rows},
        embedding_backlog=None if embedding.get("error") else embedding["backlog"],
        mirror_pending=mirror["pending"],
        mirror_lag_seconds=mirror["lag_seconds"],
        parked=mirror["parked"],
    )
    try:
        with transaction.atomic():  # a savepoint: a second worker in the same interval lost
            snapshot.save()
    except IntegrityError:
        return None
    return snapshot
