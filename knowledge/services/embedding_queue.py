"""Entries waiting for vectors, embedded by whichever worker process is free: each claims a
batch of the oldest waiting entries (per-entry advisory locks, so two processes never embed the
same entry at once and neither waits for the other), embeds their changed chunks in one model
call, stores them and claims the next batch, until none waits or its time is up.

Run by the embed task every write queues, by the periodic sweep and at worker start; never
inside a user's write. A run keeps the worker's processes busy while entries wait, with no write
to queue their tasks (the end of a burst): one that sees more waiting than it takes asks for a
helper task, which an idle process picks up, and one that stops on time with entries still
waiting queues its continuation, so the backlog does not wait for the next sweep. Both go
through the writes' coalesced send (knowledge/services/background.py): at most one queued.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from django.db.models.functions import Now

from knowledge.db.locks import advisory_lock, claim_entries, release_entries
from knowledge.models import Entry
from knowledge.search.providers import EmbeddingProvider, get_provider
from knowledge.selectors.embeddings import stale_embeddings
from knowledge.services import background
from knowledge.services.embeddings import EmbedOutcome, entries_embed

# The per-entry locks: pg_try_advisory_lock(ENTRY_LOCK_SPACE, entry id), the two-key form, so
# they never meet the single-key locks of the sweep and the mirror.
ENTRY_LOCK_SPACE = 0x63616972  # "cair"
# One sweep at a time across every worker process (a session-level advisory lock: released on
# unlock or when a killed worker's connection closes). Not the mirror's key (history.mirror).
SWEEP_LOCK_KEY = 0x636169726E_02
# How many more waiting entries a claim looks at than it takes: the ones other processes hold
# are skipped, so several processes each find a batch of their own.
_LOOK_AHEAD = 4
# An entry whose text changed while the model ran is claimed once more in the same run, then
# left to the next run (a writer editing in a loop must not hold a worker forever).
_TRIES = 2


@dataclass
class EmbedRun:
    """What one run did: the count per outcome, and the outcome of the entry it was asked for."""

    counts: Counter = field(default_factory=Counter)
    first: EmbedOutcome | str | None = None


def _claim(
    batch: int, *, first: int | None, skip: list[int], workers: int
) -> tuple[list[int], bool]:
    """Lock and return up to `batch` entries: `first` (whether it waits or not: the task of its
    write asks for it), then the oldest waiting ones no other process holds; no more than a
    `workers`-th of those, so a short queue is shared by the worker processes, not taken by
    the first one while the others idle. And whether it saw waiting entries it left (that no
    other process holds: work for another one)."""
    locked = claim_entries(first=first, skip=skip, take=batch * _LOOK_AHEAD, space=ENTRY_LOCK_SPACE)
    take = max(1, min(batch, -(-len(locked) // max(1, workers))))
    _release(locked[take:])
    return locked[:take], len(locked) > take


def _release(ids: list[int]) -> None:
    release_entries(ids, space=ENTRY_LOCK_SPACE)


def entries_embed_pending(
    *,
    batch_size: int,
    max_seconds: float | None = None,
    first: int | None = None,
    workers: int = 1,
    provider: EmbeddingProvider | None = None,
) -> EmbedRun:
    """Embed waiting entries, oldest first, `batch_size` per model call, until none is left
    that no other process holds, or past max_seconds (then after the batch that passed it).
    `first`: embed this entry in the first batch if it needs it (the task its write queued).
    `workers`: how many processes embed at once; each claims at most its share of the queue,
    and with more than one, a run that leaves waiting entries untaken asks (once) for a helper.
    A run that stops on time with entries still waiting queues its continuation.
    """
    run = EmbedRun()
    provider = provider or get_provider()
    if provider is None:
        return run
    tries: Counter[int] = Counter()
    asked, started = first, time.monotonic()
    helped = workers <= 1  # one process: nobody to ask
    while True:
        skip = [i for i, n in tries.items() if n >= _TRIES]
        ids, more = _claim(max(1, batch_size), first=first, skip=skip, workers=workers)
        if not ids:
            break
        if more and not helped:
            # After a burst no write queues a task: an idle process joins only if asked.
            helped = True
            background.embed_wanted()
        try:
            outcomes = entries_embed(entry_ids=ids, provider=provider, first_chunk_first=True)
        finally:
            _release(ids)
        first = None
        if asked in outcomes:
            run.first = outcomes[asked]
        run.counts.update(outcomes.values())
        # A first chunk stored is progress, not a try: the entry is claimed again for the rest.
        tries.update(i for i in ids if outcomes.get(i) != "first")
        if max_seconds is not None and time.monotonic() - started > max_seconds:
            # The queue's other tasks (the mirror's) get their turn, then the rest: not at the
            # next sweep, up to CAIRN_EMBED_SWEEP_SECONDS later.
            if Entry.objects.filter(embed_pending_since__isnull=False).exists():
                background.embed_wanted(continuation=True)
            break
    if run.first is None and asked is not None:  # another process holds it, or it is gone
        run.first = "elsewhere" if Entry.objects.filter(pk=asked).exists() else "missing"
    return run


def entries_embed_stale(
    *,
    batch_size: int = 32,
    max_seconds: float | None = None,
    workers: int = 1,
    provider: EmbeddingProvider | None = None,
) -> dict[str, int]:
    """Mark every entry whose vectors are missing or out of date as waiting (a model change, a
    restore, rows written around the services), then embed the waiting ones: the sweep that
    heals lost embed tasks, a broker outage, a model change, entries seeded offline.

    Each batch is stored as it is done, so a sweep cut short (time limit, model down) keeps its
    progress and the next one starts with what is left. With max_seconds it stops after the
    batch that passes that time. Returns the count per outcome; {"busy": 1} when another sweep
    holds the lock.
    """
    provider = provider or get_provider()
    if provider is None:
        return {}
    with advisory_lock(SWEEP_LOCK_KEY) as got:
        if not got:
            return {"busy": 1}
        stale_embeddings(model_name=provider.name).filter(embed_pending_since__isnull=True).update(
            embed_pending_since=Now()
        )  # the answers' note on entries waiting for vectors
        run = entries_embed_pending(
            batch_size=batch_size, max_seconds=max_seconds, workers=workers, provider=provider
        )
    return dict(run.counts)
