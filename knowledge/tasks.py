"""Celery tasks of the knowledge app. They load by id and call a service."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from celery.signals import worker_ready
from django.conf import settings

from knowledge.search.providers import EmbeddingUnavailable
from knowledge.services import background
from knowledge.services.embedding_queue import entries_embed_pending, entries_embed_stale
from knowledge.services.embeddings import lexeme_stats_refresh

log = logging.getLogger(__name__)


@shared_task(
    name="knowledge.tasks.embed_entry",
    # Past CELERY_TASK_SOFT_TIME_LIMIT the task is logged and retried later, like a provider
    # that is down; the embedding sweep (below) catches up on whatever still waits.
    autoretry_for=(EmbeddingUnavailable, SoftTimeLimitExceeded),
    retry_backoff=30,
    retry_backoff_max=600,
    max_retries=8,
)
def embed_entry(entry_id: int | None = None) -> str:
    """Embed a new or changed entry (enqueued on commit of every entry write or delete), and
    with it every entry still waiting, CAIRN_EMBED_BATCH per model call, oldest first. Without
    an entry: a run's continuation or helper (knowledge/services/embedding_queue.py).

    Skips entries whose content and model are unchanged; a deleted entry needs nothing (its
    chunks went with it). Until this runs the entry is already found by full text. Tasks of
    entries a run already embedded find nothing left to do.
    """
    background.task_started(background.EMBED)
    run = entries_embed_pending(
        first=entry_id,
        batch_size=settings.CAIRN_EMBED_BATCH,
        workers=settings.CAIRN_WORKER_CONCURRENCY,
        # Then the queue's other tasks (the mirror's) get their turn; the run's continuation
        # goes on with what is left.
        max_seconds=settings.CAIRN_EMBED_SWEEP_SECONDS,
    )
    log.info("embed_entry(%s): %s, in all %s", entry_id, run.first, dict(run.counts))
    return str(run.first) if entry_id is not None else ""


@shared_task(name="knowledge.tasks.embedding_sweep")
def embedding_sweep() -> dict:
    """Embed every entry whose vectors are missing or stale (beat, every
    CAIRN_EMBED_SWEEP_SECONDS, and once at worker start): the backlog reaches 0 on its own after
    a lost task, a broker outage, a model change or entries written while no worker ran.

    Overlapping sweeps do not repeat work: the second finds the sweep lock taken and returns.
    """
    try:
        # At most one interval per run: the mirror drain and new writes' tasks get their turn
        # on a single worker; the embed task it queues goes on with what is left.
        counts = entries_embed_stale(
            batch_size=settings.CAIRN_EMBED_BATCH,
            max_seconds=settings.CAIRN_EMBED_SWEEP_SECONDS,
            workers=settings.CAIRN_WORKER_CONCURRENCY,
        )
    except (EmbeddingUnavailable, SoftTimeLimitExceeded) as exc:
        # What was stored stays; the next sweep starts with what is left.
        log.warning("Embedding sweep stopped (%s); the next sweep continues.", type(exc).__name__)
        return {"stopped": type(exc).__name__}
    if counts.get("embedded"):
        log.info("Embedding sweep: %s", counts)
    return counts


@shared_task(name="knowledge.tasks.word_stats_refresh")
def word_stats_refresh() -> bool:
    """Recount the word statistics full-text ranking uses (beat, every
    CAIRN_SEARCH_STATS_MAX_AGE seconds). A task of its own: at 100k entries a recount takes
    ~18 s, which the embedding task used to spend before the next write's vectors
    (bench/scale.py). One recount at a time; a second one returns at once."""
    return lexeme_stats_refresh()


@shared_task(name="knowledge.tasks.oauth_sweep")
def oauth_sweep() -> dict:
    """Forget unused client registrations, old codes and spent refresh tokens (beat, hourly)."""
    from knowledge.actors import Actor
    from knowledge.services import oauth_clients_sweep

    report = oauth_clients_sweep(actor=Actor.system())
    return {"clients": report.clients, "codes": report.codes, "refresh": report.refresh_tokens}


@worker_ready.connect
def _sweep_on_worker_start(sender=None, **kwargs) -> None:
    # Entries written while no worker ran (seed_demo before the first start, a broker outage)
    # are embedded now, not at the first beat; writes queue their tasks again from here on.
    background.tasks_started()
    try:
        embedding_sweep.apply_async(retry=False)
    except Exception as exc:
        log.warning("Could not queue the start-up embedding sweep (%s).", exc)
