"""The database side of the git mirror: which revisions are pending, and committing them in order.

A revision (a HistoricalEntry row) is pending while its `git_commit` is empty. `drain()` commits
pending revisions in history_id order under a Postgres advisory lock (so it is safe across
workers and hosts), publishes the branch, then records the commit hashes. A crash between the
two steps is repaired on the next drain from the `Cairn-Revision` trailers (see `_reconcile`),
so every revision ends up in exactly one commit.

The mirror never stops for one revision: a revision that cannot be loaded, rendered or committed
is parked (history.models.ParkedRevision, with its error) and the drain goes on. The entry's next
revision commits the parked ones first, in order (as a note commit when one still cannot be
rendered: its text stays in the database history); `retry()` puts parked revisions back in line.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError, connection, models, transaction
from django.utils import timezone

from history.files import EntryState
from history.gitmirror import Mirror, Person, build_message
from history.models import ParkedRevision
from knowledge.models import Entry, Project, Subtopic

log = logging.getLogger(__name__)
# Failures that are not the revision's: the drain stops and is retried later as a whole.
NOT_THE_REVISION = (DatabaseError, SoftTimeLimitExceeded, MemoryError)

LOCK_KEY = 0x636169726E  # "cairn": one advisory lock for every process that writes the mirror
HistoricalEntry = Entry.history.model


def committer() -> Person:
    return Person(settings.CAIRN_MIRROR_COMMITTER_NAME, settings.CAIRN_MIRROR_COMMITTER_EMAIL)


def open_mirror(path: Path | str | None = None) -> Mirror:
    return Mirror(path or settings.CAIRN_MIRROR_PATH, branch=settings.CAIRN_MIRROR_BRANCH)


def pending() -> Iterable:
    """Revisions waiting for their commit (parked ones wait apart, see `parked()`)."""
    return HistoricalEntry.objects.filter(git_commit="", parked__isnull=True)


def parked() -> Iterable:
    return ParkedRevision.objects.order_by("revision_id")


@contextlib.contextmanager
def advisory_lock(*, wait: bool = False) -> Iterator[bool]:
    """Hold the mirror lock for the block; yields False when another process holds it."""
    with connection.cursor() as cur:
        if wait:
            # Maintenance (rebuild) may wait long for a drain and run long itself.
            cur.execute("SET statement_timeout = 0")
            cur.execute("SELECT pg_advisory_lock(%s)", [LOCK_KEY])
            got = True
        else:
            cur.execute("SELECT pg_try_advisory_lock(%s)", [LOCK_KEY])
            got = cur.fetchone()[0]
    try:
        yield got
    finally:
        if got:
            with connection.cursor() as cur:
                cur.execute("SELECT pg_advisory_unlock(%s)", [LOCK_KEY])
                if wait:
                    cur.execute("RESET statement_timeout")


# --- From rows to plain states --------------------------------------------------------------


class Names:
    """Slugs, paths and user names by id, with the history tables as fallback for deleted rows."""

    def __init__(self) -> None:
        self.projects: dict[int, str] = {}
        self.subtopics: dict[int, str] = {}
        self.users: dict[int, tuple[str, str, str]] = {}
        self.entries: dict[int, str] = {}

    def project(self, pk: int | None) -> str:
        return self._name(Project, "slug", pk, self.projects, "project")

    def subtopic(self, pk: int | None) -> str:
        return self._name(Subtopic, "path", pk, self.subtopics, "topic")

    @staticmethod
    def _name(model, field: str, pk: int | None, cache: dict, fallback: str) -> str:
        """The current value, else the last one its history knew (the row may be gone)."""
        if pk is None:
            return ""
        if pk not in cache:
            value = model.objects.filter(pk=pk).values_list(field, flat=True).first()
            if value is None:
                value = (
                    model.history.filter(id=pk)
                    .order_by("-history_id")
                    .values_list(field, flat=True)
                    .first()
                )
            cache[pk] = value or f"{fallback}-{pk}"
        return cache[pk]

    def user(self, pk: int | None) -> tuple[str, str, str]:
        """(username, full name, email) or empty strings."""
        if pk is None:
            return ("", "", "")
        if pk not in self.users:
            from django.contrib.auth import get_user_model

            user = get_user_model().objects.filter(pk=pk).first()
            self.users[pk] = (
                (user.get_username(), user.get_full_name(), user.email) if user else ("", "", "")
            )
        return self.users[pk]

    def entry(self, pk: int | None) -> str:
        if pk is None:
            return ""
        if pk not in self.entries:
            row = Entry.objects.filter(pk=pk).values_list("short_id", flat=True).first()
            if row is None:
                row = (
                    HistoricalEntry.objects.filter(id=pk)
                    .order_by("-history_id")
                    .values_list("short_id", flat=True)
                    .first()
                )
            self.entries[pk] = row or ""
        return self.entries[pk]


def sources_by_entry(entry_ids: Iterable[int]) -> dict[int, tuple[dict, ...]]:
    """Current sources of these entries (links are not versioned: a revision shows today's)."""
    through = Entry.sources.through
    out: dict[int, list[dict]] = {}
    rows = through.objects.filter(entry_id__in=set(entry_ids)).values(
        "entry_id", "source__kind", "source__external_id", "source__url", "source__title"
    )
    for row in rows:
        item = {"kind": row["source__kind"], "external_id": row["source__external_id"]}
        if row["source__url"]:
            item["url"] = row["source__url"]
        if row["source__title"]:
            item["title"] = row["source__title"]
        out.setdefault(row["entry_id"], []).append(item)
    return {
        k: tuple(sorted(v, key=lambda s: (s["kind"], s["external_id"]))) for k, v in out.items()
    }


def state_of(obj, names: Names, sources: dict[int, tuple[dict, ...]]) -> EntryState:
    """An Entry or a HistoricalEntry row as the plain state the mirror renders."""
    return EntryState(
        id=obj.short_id,
        project=names.project(obj.project_id),
        subtopic=names.subtopic(obj.subtopic_id),
        slug=obj.slug,
        title=obj.title,
        body=obj.body,
        kind=obj.kind,
        status=obj.status,
        tags=tuple(obj.tags or ()),
        version=obj.version,
        created=obj.created_at,
        updated=obj.updated_at,
        generated_by=obj.generated_by,
        verified_by=names.user(obj.verified_by_id)[0],
        verified_at=obj.verified_at,
        sources=sources.get(obj.id, ()),
        supersedes=names.entry(obj.supersedes_id),
        superseded_by=names.entry(obj.superseded_by_id),
        searchable=obj.searchable,
        metadata=obj.metadata or {},
    )


def author_of(row, names: Names) -> Person:
    """The acting user (and the agent label they wrote under), else the agent label alone."""
    username, full_name, email = names.user(row.history_user_id)
    label = row.generated_by if row.history_type != "-" else ""
    if username:
        name = full_name or username
        if label.startswith("agent:"):
            name = f"{label} ({name})"
        return Person(name, email or f"{username}@users.cairn.invalid")
    return Person(label or "cairn", "system@cairn.invalid")


_VERBS = {"+": "create", "~": "update", "-": "delete"}


@dataclass
class Prepared:
    changes: dict[str, bytes | None]
    message: str


def render_revision(mirror: Mirror, row, names: Names, sources: dict) -> Prepared:
    """The file changes and message for one revision (no write yet: this is where bad data
    fails, before anything touches the repository)."""
    state = None if row.history_type == "-" else state_of(row, names, sources)
    changes, n_lines = mirror.apply(state, entry_id=row.short_id)
    where = next(iter(changes), "") or f"{names.project(row.project_id)}/{row.slug}.md"
    summary = f"{_VERBS.get(row.history_type, 'update')} {where.removesuffix('.md')}: "
    summary += f"{n_lines} line{'s' if n_lines != 1 else ''} changed"
    message = build_message(
        row.history_change_reason or "", summary, revision=row.history_id, entry_id=row.short_id
    )
    return Prepared(changes, message)


def note_revision(row, error: str) -> Prepared:
    """A commit with no file change for a revision that cannot be rendered but was followed by
    a newer one: git records that it happened, the database history keeps its text."""
    summary = (
        f"revision {row.history_id} of entry {row.short_id} could not be rendered ({error}); "
        "its text is in the database history"
    )
    return Prepared(
        {}, build_message(summary, summary, revision=row.history_id, entry_id=row.short_id)
    )


def commit_prepared(mirror: Mirror, row, names: Names, prepared: Prepared) -> str:
    return mirror.commit(
        prepared.changes,
        author=author_of(row, names),
        committer=committer(),
        message=prepared.message,
        when=row.history_date,
    )


def commit_revision(mirror: Mirror, row, names: Names, sources: dict) -> str:
    """Write the commit for one revision on top of the mirror's tip; returns its hash."""
    return commit_prepared(mirror, row, names, render_revision(mirror, row, names, sources))


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


# --- Draining -------------------------------------------------------------------------------


@dataclass
class DrainResult:
    committed: int = 0
    reconciled: int = 0
    parked: int = 0
    locked_out: bool = False
    seconds: float = 0.0


def record_commits(shas: dict[int, str]) -> None:
    """Store commit hashes on their revisions; only rows still pending are touched."""
    if not shas:
        return
    ids, values = list(shas), [shas[i] for i in shas]
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute(
            f"UPDATE {HistoricalEntry._meta.db_table} AS h SET git_commit = v.sha "
            "FROM unnest(%s::int[], %s::text[]) AS v(id, sha) "
            "WHERE h.history_id = v.id AND h.git_commit = ''",
            [ids, values],
        )


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


def drain(*, batch_size: int | None = None) -> DrainResult:
    """Commit every pending revision, in order. Safe to call from anywhere, any number of times."""
    started = time.monotonic()
    batch_size = batch_size or settings.CAIRN_MIRROR_BATCH_SIZE
    result = DrainResult()
    if not pending().exists():
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


PUSHED_MARKER = "cairn-pushed"  # inside the bare repository: the last commit the remote got


def push() -> bool:
    """Push the branch to CAIRN_MIRROR_PUSH_URL when the remote is behind. Failures are logged,
    never raised; the marker is only moved on success, so the next drain or sweep retries."""
    url = settings.CAIRN_MIRROR_PUSH_URL
    if not url:
        return False
    repo = open_mirror()
    head = repo.head()
    marker = repo.path / PUSHED_MARKER
    if head is None or (marker.exists() and marker.read_text().strip() == f"{head.id} {url}"):
        return False
    try:
        repo.push(
            url,
            username=settings.CAIRN_MIRROR_PUSH_USERNAME,
            password=settings.CAIRN_MIRROR_PUSH_PASSWORD,
            ssh_key=settings.CAIRN_MIRROR_PUSH_SSH_KEY,
        )
    except Exception as exc:
        log.warning("Mirror: push to %s failed (%s); the next drain or sweep retries.", url, exc)
        return False
    marker.write_text(f"{head.id} {url}\n")
    return True
