"""Background work started after a write commits. A write never waits for, or fails on, it:
if the broker is down the task is not sent, and the periodic sweeps catch up later."""

from __future__ import annotations

import logging

from django.db import transaction

log = logging.getLogger(__name__)


def _send(task_name: str, *args: object) -> None:
    from memory_site.celery import app

    try:
        app.send_task(task_name, args=args, retry=False)
    except Exception as exc:  # broker down: the sweep will pick the work up
        log.warning("Could not queue %s%r (%s); it will be picked up later.", task_name, args, exc)


def entry_written(entry_id: int) -> None:
    """Call inside the write's transaction, after the entry (or its deletion) is saved."""
    transaction.on_commit(lambda: _send("knowledge.tasks.embed_entry", entry_id))
    transaction.on_commit(lambda: _send("history.tasks.mirror_drain"))
