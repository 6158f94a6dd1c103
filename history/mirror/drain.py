"""Draining: commit the pending revisions in history_id order under the advisory lock, publish
the branch, then record the commit hashes (a crash in between is repaired by `_reconcile`)."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from django.conf import settings

from history.mirror.git import Mirror
from history.mirror.manifest import manifest_current, sync_manifest
from history.mirror.push import push
from history.mirror.queue import (
    NOT_THE_REVISION,
    advisory_lock,
    describe,
    open_mirror,
    park,
    parked,
    pending,
    record_commits,
    retry,
)
from history.mirror.render import (
    Names,
    Prepared,
    commit_prepared,
    note_revision,
    render_revision,
    sources_by_entry,
)
from knowledge.models import HistoricalEntry

log = logging.getLogger("history.mirror")  # one logger for the mirror, as before the split


@dataclass
class DrainResult:
    committed: int = 0
    reconciled: int = 0
    parked: int = 0
    locked_out: bool = False
    manifest: bool = False  # the projects manifest was committed
    seconds: float = 0.0


def _reconcile(mirror: Mirror) -> int:
    """After a crash between publishing and recording: record the commits already made."""
    found: dict[int, str] = {}
    for info in mirror.walk():
        if info.revision is None:
            break
        recorded = (
            HistoricalEntry.objects.filter(history_id=info.revision)
            .values_list("git_commit", flat=True)
            .first()
        )
        if recorded is None or recorded:  # unknown revision, or the history is recorded from here
            break
        found[info.revision] = info.sha
    record_commits(found)
    if found:
        log.warning("Mirror: recorded %d commit(s) made before an interruption.", len(found))
    return len(found)


def _load(ids: list[tuple[int, int]], result: DrainResult) -> list:
    """The revision rows in order; one that cannot be loaded (e.g. metadata too deep to
    decode) is parked instead of stopping the batch."""
    queue = HistoricalEntry.objects.order_by("history_id")
    try:
        return list(queue.filter(history_id__in=[i for i, _ in ids]))
    except NOT_THE_REVISION:
        raise
    except Exception:
        rows = []
        for history_id, entry_id in ids:
            try:
                rows.extend(queue.filter(history_id=history_id))
            except NOT_THE_REVISION:
                raise
            except Exception as exc:
                park(history_id, entry_id, f"cannot be loaded: {describe(exc)}")
                result.parked += 1
        return rows


def _load_parked(history_id: int) -> tuple[object, str]:
    """(row, "") or, when the row cannot be loaded whole, (the row without its text, error)."""
    queue = HistoricalEntry.objects.filter(history_id=history_id)
    try:
        return queue.get(), ""
    except NOT_THE_REVISION:
        raise
    except Exception as exc:
        return queue.defer("metadata", "body").get(), f"cannot be loaded: {describe(exc)}"


def _render(mirror: Mirror, row, names: Names, sources: dict) -> Prepared | str:
    """The prepared commit, or the error that makes this revision unrenderable."""
    try:
        return render_revision(mirror, row, names, sources)
    except NOT_THE_REVISION:
        raise  # the database's fault, not the revision's: the drain is retried later
    except Exception as exc:
        return describe(exc)


def _drain_batch(mirror: Mirror, names: Names, batch_size: int, result: DrainResult) -> bool:
    """Commit one batch; False when nothing was pending."""
    ids = list(pending().order_by("history_id").values_list("history_id", "id")[:batch_size])
    if not ids:
        return False
    rows = _load(ids, result)
    waiting: dict[int, list] = {}
    for p in parked().filter(entry_id__in={r.id for r in rows}).values("revision_id", "entry_id"):
        waiting.setdefault(p["entry_id"], []).append(_load_parked(p["revision_id"]))
    sources = sources_by_entry(r.id for r in rows)
    shas: dict[int, str] = {}
    flushed: list[int] = []
    try:
        for row in rows:
            # The entry's earlier revisions were parked: they go first, in order.
            for old, load_error in waiting.pop(row.id, []):
                prepared = load_error or _render(mirror, old, names, sources_by_entry([old.id]))
                if isinstance(prepared, str):
                    prepared = note_revision(old, prepared)
                shas[old.history_id] = commit_prepared(mirror, old, names, prepared)
                flushed.append(old.history_id)
            prepared = _render(mirror, row, names, sources)
            if isinstance(prepared, str):
                park(row.history_id, row.id, prepared)
                result.parked += 1
                waiting[row.id] = [(row, "")]  # its next revision in this batch flushes it
                continue
            try:
                shas[row.history_id] = commit_prepared(mirror, row, names, prepared)
            except (OSError, *NOT_THE_REVISION):
                raise
            except Exception as exc:
                # This revision cannot be committed: park it and redo the batch without it.
                mirror.discard()
                park(row.history_id, row.id, f"cannot be committed: {describe(exc)}")
                result.parked += 1
                return True
        mirror.publish()
    except Exception:
        mirror.discard()
        raise
    record_commits(shas)
    retry(flushed)
    result.committed += len(shas)
    return True


def _drain_locked(batch_size: int, result: DrainResult) -> None:
    mirror = open_mirror()
    result.reconciled += _reconcile(mirror)
    names = Names()
    while _drain_batch(mirror, names, batch_size, result):
        pass
    # After the entries: the manifest then names every subtopic their revisions used.
    if sync_manifest(mirror):
        result.manifest = True


def drain(*, batch_size: int | None = None) -> DrainResult:
    """Commit every pending revision, in order. Safe to call from anywhere, any number of times."""
    started = time.monotonic()
    batch_size = batch_size or settings.CAIRN_MIRROR_BATCH_SIZE
    result = DrainResult()
    if not pending().exists():
        # Projects and memberships change without an entry revision: the sweep commits them.
        if not manifest_current(open_mirror()):
            with advisory_lock() as got:
                if got:
                    result.manifest = sync_manifest(open_mirror())
        push()  # a push that failed earlier is retried by the next drain or sweep
        return result
    for _ in range(5):
        with advisory_lock() as got:
            if not got:
                # Another drain holds the lock; it re-checks for new work after releasing.
                result.locked_out = True
                break
            _drain_locked(batch_size, result)
        # A revision that committed while we held the lock may have had its own drain locked out.
        if not pending().exists():
            break
    result.seconds = time.monotonic() - started
    push()
    return result
