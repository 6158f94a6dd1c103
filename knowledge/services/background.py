"""Background work started after a write commits. A write never waits for, or fails on, it:
if the broker is down the task is not sent, and the periodic sweeps catch up later."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from celery import current_app
from django.conf import settings
from django.db import transaction

log = logging.getLogger(__name__)

# After a failed publish to a configured broker, skip publishing for a while: each attempt on a
# dead broker costs seconds of connection retries, which no write should pay more than once.
BROKER_BACKOFF_SECONDS = 30.0
_broker_down_until = 0.0
_warned_embedded_down = False
# Benchmarks switch queueing off to measure a write alone (or to let revisions pile up).
enabled = True


def _send(task_name: str, *args: object) -> None:
    global _broker_down_until, _warned_embedded_down
    if not enabled:
        return
    broker_socket = settings.CAIRN_BROKER_SOCKET
    if broker_socket:
        # The embedded broker is a local socket: checking for it is instant, so no back-off.
        if not Path(broker_socket).exists():
            if not _warned_embedded_down:
                _warned_embedded_down = True
                log.warning(
                    "The embedded broker is not running (start Cairn with `manage.py serve`): "
                    "embeddings and the git mirror catch up when a worker runs."
                )
            return
    elif time.monotonic() < _broker_down_until:
        return
    try:
        # The site's Celery app (memory_site/celery.py) is the current one once Django is set up.
        current_app.send_task(task_name, args=args, retry=False)
    except Exception as exc:
        _broker_down_until = time.monotonic() + BROKER_BACKOFF_SECONDS
        log.warning(
            "Broker unavailable (%s): background work (embeddings, git mirror) is not queued "
            "for the next %ds; the periodic sweep catches up once a worker runs.",
            exc,
            BROKER_BACKOFF_SECONDS,
        )


def entry_written(entry_id: int) -> None:
    """Call inside the write's transaction, after the entry (or its deletion) is saved."""
    transaction.on_commit(lambda: _send("knowledge.tasks.embed_entry", entry_id))
    transaction.on_commit(lambda: _send("history.tasks.mirror_drain"))


def queue_drain() -> None:
    """Ask a worker to drain the git mirror now (nothing happens when no broker runs)."""
    _send("history.tasks.mirror_drain")
