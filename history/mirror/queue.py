"""The mirror's repository and its queue in the database: which revisions wait, which are parked,
and the advisory lock every process that writes the repository holds."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable
from pathlib import Path

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError, models
from django.utils import timezone

from history.mirror.git import Mirror, Person
from history.models import ParkedRevision
from knowledge.db import locks
from knowledge.db.revisions import record_commits as store_commits
from knowledge.models import HistoricalEntry

log = logging.getLogger("history.mirror")  # one logger for the mirror, as before the split
# Failures that are not the revision's: the drain stops and is retried later as a whole.
NOT_THE_REVISION = (DatabaseError, SoftTimeLimitExceeded, MemoryError)

LOCK_KEY = 0x636169726E  # "cairn": one advisory lock for every process that writes the mirror


def committer() -> Person:
    return Person(settings.CAIRN_MIRROR_COMMITTER_NAME, settings.CAIRN_MIRROR_COMMITTER_EMAIL)


def open_mirror(path: Path | str | None = None) -> Mirror:
    return Mirror(path or settings.CAIRN_MIRROR_PATH, branch=settings.CAIRN_MIRROR_BRANCH)


def pending() -> Iterable:
    """Revisions waiting for their commit (parked ones wait apart, see `parked()`)."""
    return HistoricalEntry.objects.filter(git_commit="", parked__isnull=True)


def parked() -> Iterable:
    return ParkedRevision.objects.order_by("revision_id")


def advisory_lock(*, wait: bool = False) -> contextlib.AbstractContextManager[bool]:
    """Hold the mirror lock for the block; yields False when another process holds it.
    Maintenance (rebuild) waits (`wait`): it may wait long for a drain and run long itself."""
    return locks.advisory_lock(LOCK_KEY, wait=wait)


def describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:300]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def park(revision_id: int, entry_id: int, error: str) -> None:
    """Set a revision aside with its error (its own small write, outside the drain's batch)."""
    updated = ParkedRevision.objects.filter(revision_id=revision_id).update(
        error=error, attempts=models.F("attempts") + 1, last_tried_at=timezone.now()
    )
    if not updated:
        ParkedRevision.objects.create(revision_id=revision_id, entry_id=entry_id, error=error)
    log.error("Mirror: revision %s parked (%s); the drain goes on.", revision_id, error)


def retry(revisions: Iterable[int] | None = None) -> int:
    """Put parked revisions (all, or these ids) back in line; the next drain tries them again,
    in order. Returns how many were put back."""
    queue = ParkedRevision.objects.all()
    if revisions is not None:
        queue = queue.filter(revision_id__in=list(revisions))
    count, _ = queue.delete()
    return count


def record_commits(shas: dict[int, str]) -> None:
    """Store commit hashes on their revisions; only rows still pending are touched."""
    store_commits(shas)
