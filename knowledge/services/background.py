"""Background work started after a write commits. A write never waits for, or fails on, it:
if the broker is down the task is not sent, and the periodic sweeps catch up later.

Under load one task does the work of many writes: the embedding task embeds every entry that
waits, the drain commits every pending revision. So a write queues its task only when none is
queued and not yet started: a "wake" key in the broker (SET NX) marks one as queued, and the task
deletes it as it starts (`task_started`), before it looks for work, so a write committed after
that queues the next one. The key expires after WAKE_SECONDS, so a lost task delays work by that
much at most (and the sweeps catch up anyway). Brokers other than Redis queue a task per write.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from celery import current_app
from django.conf import settings
from django.db import transaction

log = logging.getLogger(__name__)

# After a failed publish to a configured broker, writes skip publishing for
# CAIRN_BROKER_BACKOFF_SECONDS: no write should pay a dead broker's retries more than once.
_broker_down_until = 0.0
_warned_embedded_down = False
WAKE_SECONDS = 30


def wake_key(task_name: str) -> str:
    # Databases sharing a broker (a bench, the tests) keep their own keys.
    return f"cairn:wake:{settings.DATABASES['default']['NAME']}:{task_name}"


def _redis(producer):
    """The broker's Redis client (Valkey embedded, Redis in team mode), or None."""
    client = getattr(producer.connection.default_channel, "client", None)
    return client if hasattr(client, "set") and hasattr(client, "delete") else None


def task_started(task_name: str) -> None:
    """Called by a coalesced task as it starts, before it looks for work."""
    try:
        with current_app.producer_or_acquire() as producer:
            client = _redis(producer)
            if client is not None:
                client.delete(wake_key(task_name))
    except Exception as exc:  # the key expires on its own; the task's work matters more
        log.warning("Could not clear the wake key of %s (%s).", task_name, exc)


def tasks_started() -> None:
    """A worker starts: its sweeps do whatever the queued tasks would have done."""
    for name in COALESCED:
        task_started(name)


def _send(task_name: str, *args: object, coalesced_only: bool = False) -> None:
    _send_all([(task_name, args)], coalesced_only=coalesced_only)


def _send_all(tasks: list[tuple[str, tuple]], *, coalesced_only: bool = False) -> None:
    """Queue each (task, args) unless one of its kind is queued and not started: one producer
    and one round trip to the broker for all the wake keys (a write queues two tasks).
    coalesced_only: send nothing where the broker cannot coalesce (no wake key)."""
    global _broker_down_until, _warned_embedded_down
    if not settings.CAIRN_BACKGROUND_TASKS:  # benchmarks measure a write alone
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
        with current_app.producer_or_acquire() as producer:
            client = _redis(producer)
            coalesced = [name for name, _ in tasks if name in COALESCED]
            woken = set()
            if client is not None and coalesced:
                pipe = client.pipeline(transaction=False)
                for name in coalesced:
                    pipe.set(wake_key(name), "1", nx=True, ex=WAKE_SECONDS)
                woken = {name for name, ok in zip(coalesced, pipe.execute(), strict=True) if ok}
            for name, args in tasks:
                if client is None and coalesced_only:
                    continue
                if client is not None and name in COALESCED and name not in woken:
                    continue  # one is queued and has not started: it will see this write
                current_app.send_task(name, args=args, retry=False, producer=producer)
    except Exception as exc:
        _broker_down_until = time.monotonic() + settings.CAIRN_BROKER_BACKOFF_SECONDS
        log.warning(
            "Broker unavailable (%s): background work (embeddings, git mirror) is not queued "
            "for the next %ds; the periodic sweep catches up once a worker runs.",
            exc,
            settings.CAIRN_BROKER_BACKOFF_SECONDS,
        )


EMBED, DRAIN = "knowledge.tasks.embed_entry", "history.tasks.mirror_drain"
COALESCED = (EMBED, DRAIN)


def entry_written(entry_id: int) -> None:
    """Call inside the write's transaction, after the entry (or its deletion) is saved."""
    transaction.on_commit(lambda: _send_all([(EMBED, (entry_id,)), (DRAIN, ())]))


def embed_wanted(*, continuation: bool = False) -> None:
    """An embedding run found work it does not take: entries still waiting when it stopped on
    time (continuation), or more than its share while it embeds (a helper, for a worker
    process that may be idle). Queued like a write's task, so at most one waits however many
    runs ask; a helper is never sent where the broker cannot coalesce (one per batch would
    pile up), a continuation (one per run, replacing it) always is."""
    _send(EMBED, None, coalesced_only=not continuation)


def queue_drain() -> None:
    """Ask a worker to drain the git mirror now (nothing happens when no broker runs)."""
    _send(DRAIN)
