"""Celery tasks of the git mirror. Writes enqueue `mirror_drain` after they commit
(knowledge.services.background); the beat sweep and worker start catch up on anything missed."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready

from knowledge.services import background

log = logging.getLogger(__name__)


@shared_task(bind=True, name="history.tasks.mirror_drain", acks_late=True, max_retries=12)
def mirror_drain(self) -> dict:
    """Commit every pending revision to the mirror, in order (idempotent; one drain at a time)."""
    from history import mirror

    background.task_started(background.DRAIN)
    try:
        result = mirror.drain()
    except Exception as exc:
        countdown = min(600, 2 ** (self.request.retries + 1))
        log.warning("Mirror drain failed (%s); retrying in %ss.", exc, countdown)
        raise self.retry(exc=exc, countdown=countdown) from exc
    if result.committed or result.reconciled:
        log.info("Mirror: %d revision(s) committed in %.2fs.", result.committed, result.seconds)
    return {"committed": result.committed, "reconciled": result.reconciled}


@shared_task(name="history.tasks.backlog_snapshot")
def backlog_snapshot() -> bool:
    """Record what is waiting now for the dashboard's history (beat, every
    CAIRN_BACKLOG_SNAPSHOT_SECONDS, and at worker start); False when this interval has its row."""
    from history.snapshots import backlog_snapshot_take
    from knowledge.actors import Actor

    return backlog_snapshot_take(actor=Actor.system()) is not None


@worker_ready.connect
def _sweep_on_worker_start(sender=None, **kwargs) -> None:
    # Whatever was pending while no worker ran (or when one was killed) is committed now; the
    # dashboard's backlog history starts at the first start, not an interval later.
    try:
        mirror_drain.apply_async(retry=False)
        backlog_snapshot.apply_async(retry=False)
    except Exception as exc:
        log.warning("Could not queue the start-up mirror sweep (%s).", exc)
