"""Embedding writes: an entry's chunks and vectors, kept in step with its content and the model.

Called by the Celery task after a write commits and by `manage.py reindex`; never inside a
user's write, so a slow or absent model never delays or fails a save.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import Literal

from django.conf import settings
from django.db import transaction
from django.db.models.functions import Now

from knowledge.db.locks import try_xact_lock
from knowledge.db.search import recount_lexemes
from knowledge.models import Entry, EntryChunk, embedding_key
from knowledge.search.chunking import chunk_text, estimated_tokens
from knowledge.search.providers import EmbeddingProvider, get_provider
from knowledge.services._kernel import index_text

# "first": only the entry's first chunk was stored (first_chunk_first); it waits for the rest.
EmbedOutcome = Literal["embedded", "first", "unchanged", "missing", "disabled"]


@dataclass
class _Plan:
    """One entry's chunks: the texts stored and read by the model, their hashes, and the
    vectors already known for some of them (chunks whose text did not change)."""

    entry: Entry
    stored: list[str]
    embedded: list[str]
    hashes: list[str]
    known: dict[int, object] = field(default_factory=dict)  # chunk index -> vector
    first_only: bool = False  # this call embeds and stores the first chunk alone

    @property
    def todo(self) -> list[int]:
        todo = [i for i in range(len(self.embedded)) if i not in self.known]
        return todo[:1] if self.first_only else todo


def _pieces(entry: Entry) -> tuple[list[str], list[str]]:
    """(texts to store, texts to embed) for an entry; an empty body embeds the title alone.

    Chunks stop at CAIRN_EMBED_MAX_TOKENS (the first always counts), so one entry costs the
    model a bounded time: the rest of a huge body is still found by its words."""
    chunks = chunk_text(
        entry.body, size=settings.CAIRN_CHUNK_WORDS, overlap=settings.CAIRN_CHUNK_OVERLAP
    )
    if not chunks:
        return [entry.title], [entry.title]
    stored, embedded, budget = [], [], settings.CAIRN_EMBED_MAX_TOKENS
    for chunk in chunks:
        text = chunk.for_embedding(entry.title)
        budget -= estimated_tokens(text)
        if embedded and budget < 0:
            break
        stored.append(chunk.text)
        embedded.append(text)
    return stored, embedded


def chunk_hash(text: str) -> str:
    """The source hash of a chunk: sha256 of the text the model reads."""
    return hashlib.sha256(text.encode()).hexdigest()


def needs_embedding(entry: Entry, model_name: str) -> bool:
    return entry.embedded_hash != embedding_key(entry) or entry.embedding_model != model_name


def _plans(entries: list[Entry], model_name: str, *, reuse: bool) -> list[_Plan]:
    plans = []
    for entry in entries:
        stored, embedded = _pieces(entry)
        plans.append(_Plan(entry, stored, embedded, [chunk_hash(t) for t in embedded]))
    if reuse:
        # The vectors of chunks whose text is unchanged are kept: an edit to one paragraph of a
        # long entry costs the model that paragraph's chunk, not the whole entry.
        known = {
            (entry_id, digest): vector
            for entry_id, digest, vector in EntryChunk.objects.filter(
                entry_id__in=[p.entry.pk for p in plans], model=model_name
            )
            .exclude(source_hash="")
            .values_list("entry_id", "source_hash", "embedding")
        }
        for plan in plans:
            for i, digest in enumerate(plan.hashes):
                vector = known.get((plan.entry.pk, digest))
                if vector is not None:
                    plan.known[i] = vector
    return plans


def entries_embed(
    *,
    entry_ids: list[int],
    provider: EmbeddingProvider | None = None,
    force: bool = False,
    first_chunk_first: bool = False,
) -> dict[int, EmbedOutcome]:
    """Embed these entries' changed chunks in as few model calls as the token budget allows,
    skipping entries already current (force: every chunk of every entry, again).

    first_chunk_first (the queue): an entry with no vector for its first chunk and more chunks
    to embed gets only that one now, stored at once, and goes to the back of the queue for the
    rest: a burst of writes is searchable by meaning after one chunk per entry, not after all.

    Outcomes per id: embedded, first (its first chunk only), unchanged, missing
    (deleted meanwhile) or disabled (no provider configured).
    """
    provider = provider or get_provider()
    outcomes: dict[int, EmbedOutcome] = {}
    if provider is None:
        return dict.fromkeys(entry_ids, "disabled")
    entries = {e.pk: e for e in Entry.objects.filter(pk__in=entry_ids)}
    todo: list[Entry] = []
    for entry_id in entry_ids:
        entry = entries.get(entry_id)
        if entry is None:
            outcomes[entry_id] = "missing"
        elif force or needs_embedding(entry, provider.name):
            todo.append(entry)
        else:
            outcomes[entry_id] = "unchanged"
            if entry.embed_pending_since is not None:  # an edit undone before it was embedded
                _store_unchanged(entry)
    if not todo:
        return outcomes
    plans = _plans(todo, provider.name, reuse=not force)
    if first_chunk_first:
        for plan in plans:
            plan.first_only = 0 in plan.todo and len(plan.todo) > 1
    for call in _calls(plans):
        texts = [plan.embedded[i] for plan in call for i in plan.todo]
        # The model runs outside any transaction: no row is locked while it works.
        vectors = provider.embed_passages(texts)
        offset = 0
        for plan in call:
            for i in plan.todo:
                plan.known[i] = vectors[offset]
                offset += 1
            store = _store_first if plan.first_only else _store
            outcomes[plan.entry.pk] = store(plan, provider.name)
    return outcomes


def _calls(plans: list[_Plan]) -> list[list[_Plan]]:
    """The plans grouped into model calls of at most CAIRN_EMBED_MAX_TOKENS each (an entry is
    never split), so each call's results are stored before the next, long one starts."""
    calls: list[list[_Plan]] = []
    current: list[_Plan] = []
    used = 0
    for plan in plans:
        cost = sum(estimated_tokens(plan.embedded[i]) for i in plan.todo)
        if current and used + cost > settings.CAIRN_EMBED_MAX_TOKENS:
            calls.append(current)
            current, used = [], 0
        current.append(plan)
        used += cost
    return [*calls, current] if current else calls


def _lock_current(entry: Entry) -> bool | None:
    """Lock the entry's row; True when its text is still the one planned, None when deleted."""
    current = (
        Entry.objects.select_for_update()
        .filter(pk=entry.pk)
        .values_list("content_hash", "title")
        .first()
    )
    return None if current is None else current == (entry.content_hash, entry.title)


@transaction.atomic
def _store(plan: _Plan, model_name: str) -> EmbedOutcome:
    entry = plan.entry
    # Lock the row and re-check: the entry may have changed while the model ran; then it is
    # still pending and a later claim embeds the new text; this stale result is dropped.
    same = _lock_current(entry)
    if same is None:
        return "missing"
    if not same:
        return "unchanged"
    wanted = {(i, digest, model_name) for i, digest in enumerate(plan.hashes)}
    kept, stale = set(), []
    for pk, ordinal, digest, model in EntryChunk.objects.filter(entry_id=entry.pk).values_list(
        "pk", "ordinal", "source_hash", "model"
    ):
        if (ordinal, digest, model) in wanted:
            kept.add(ordinal)
        else:
            stale.append(pk)
    if stale:
        EntryChunk.objects.filter(pk__in=stale).delete()
    EntryChunk.objects.bulk_create(
        EntryChunk(
            entry_id=entry.pk,
            ordinal=i,
            text=plan.stored[i],
            model=model_name,
            embedding=plan.known[i],
            source_hash=digest,
        )
        for i, digest in enumerate(plan.hashes)
        if i not in kept
    )
    # update() rather than save(): derived data, not a new revision of the entry.
    Entry.objects.filter(pk=entry.pk).update(
        embedded_hash=embedding_key(entry), embedding_model=model_name, embed_pending_since=None
    )
    return "embedded"


@transaction.atomic
def _store_first(plan: _Plan, model_name: str) -> EmbedOutcome:
    """Store the first chunk's vector alone (in place of the old first chunk, the others kept
    until the rest is embedded) and put the entry at the back of the queue: it is searchable
    by meaning now, and every other waiting entry gets its first chunk before this one's rest.
    Its vectors stay marked as not current (embedded_hash), so the rest is embedded next."""
    entry = plan.entry
    same = _lock_current(entry)
    if same is None:
        return "missing"
    if not same:
        return "unchanged"
    EntryChunk.objects.filter(entry_id=entry.pk, ordinal=0).delete()
    EntryChunk.objects.create(
        entry_id=entry.pk,
        ordinal=0,
        text=plan.stored[0],
        model=model_name,
        embedding=plan.known[0],
        source_hash=plan.hashes[0],
    )
    Entry.objects.filter(pk=entry.pk).update(embed_pending_since=Now())
    return "first"


@transaction.atomic
def _store_unchanged(entry: Entry) -> None:
    if _lock_current(entry):
        Entry.objects.filter(pk=entry.pk).update(embed_pending_since=None)


def entry_embed(*, entry_id: int, force: bool = False) -> EmbedOutcome:
    """Embed one entry if its content or the configured model changed since it was embedded."""
    return entries_embed(entry_ids=[entry_id], force=force)[entry_id]


def entries_reindex_text(*, entry_ids: list[int]) -> int:
    """Rebuild the full-text vectors of these entries (after changing CAIRN_SEARCH_CONFIG)."""
    count = 0
    for entry in Entry.objects.filter(pk__in=entry_ids).select_related("subtopic"):
        with transaction.atomic():
            index_text(entry)
        count += 1
    return count


_stats_refreshed_at = 0.0


STATS_LOCK_KEY = 0x636169726E_03  # "cairn" + 3: the word statistics' recount


def lexeme_stats_refresh(*, max_age: float = 0.0) -> bool:
    """Recount how many entries of each project contain each word (IDF for full-text
    ranking; a search sums the projects its reader may see).

    With max_age, skips when this process refreshed less than max_age seconds ago: the counts
    only need to be roughly current, and a recount reads every entry's vector (18 s at 100k
    entries here). False when skipped, or when another recount holds the lock.
    """
    global _stats_refreshed_at
    now = time.monotonic()
    if max_age and now - _stats_refreshed_at < max_age:
        return False
    with transaction.atomic():
        # One recount at a time: two at once collided on the table's unique key.
        if not try_xact_lock(STATS_LOCK_KEY):
            return False
        recount_lexemes()  # readers keep seeing the old counts until this commits
    _stats_refreshed_at = now
    return True
