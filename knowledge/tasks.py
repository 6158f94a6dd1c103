"""Celery tasks of the knowledge app. They load by id and call a service."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from knowledge.search.providers import EmbeddingUnavailable
from knowledge.services.embeddings import entry_embed, lexeme_stats_refresh

log = logging.getLogger(__name__)


@shared_task(
    name="knowledge.tasks.embed_entry",
    # Past CELERY_TASK_SOFT_TIME_LIMIT the task is logged and retried later, like a provider
    # that is down; the embedding sweep catches up on whatever still waits.
    autoretry_for=(EmbeddingUnavailable, SoftTimeLimitExceeded),
    retry_backoff=30,
    retry_backoff_max=600,
    max_retries=8,
)
def embed_entry(entry_id: int) -> str:
    """Embed a new or changed entry (enqueued on commit of every entry write or delete).

    Skips entries whose content and model are unchanged; a deleted entry needs nothing (its
    chunks went with it). Until this runs the entry is already found by full text.
    """
    outcome = entry_embed(entry_id=entry_id)
    lexeme_stats_refresh(max_age=settings.CAIRN_SEARCH_STATS_MAX_AGE)
    log.info("embed_entry(%s): %s", entry_id, outcome)
    return outcome
