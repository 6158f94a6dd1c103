"""Looking after the mirror: status, verify (HEAD against the database) and rebuild."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from history.file_format import alternate_path, entry_id_of
from history.manifest_format import MANIFEST_DIR, MANIFEST_PATH
from history.mirror.manifest import render_manifest, sync_manifest
from history.mirror.queue import (
    advisory_lock,
    describe,
    open_mirror,
    parked,
    pending,
    record_commits,
)
from history.mirror.render import (
    Names,
    commit_prepared,
    note_revision,
    render_revision,
    sources_by_entry,
    state_of,
)
from knowledge.models import Entry, HistoricalEntry


def status() -> dict:
    queue = pending()
    oldest = queue.order_by("history_id").values_list("history_date", flat=True).first()
    mirror = open_mirror()
    head = mirror.head()
    info = next(mirror.walk(), None) if head is not None else None
    return {
        "path": str(mirror.path),
        "pending": queue.count(),
        "lag_seconds": (timezone.now() - oldest).total_seconds() if oldest else 0.0,
        "last_commit": info.sha if info else None,
        "last_commit_time": info.when if info else None,
        "last_revision": info.revision if info else None,
        "revisions": HistoricalEntry.objects.count(),
        "parked": [
            {
                "revision": p.revision_id,
                "entry": p.entry_id,
                "error": p.error,
                "attempts": p.attempts,
                "parked_at": p.parked_at,
            }
            for p in parked()
        ],
    }


def expected_files(problems: list[str] | None = None) -> dict[str, tuple[str, bytes | None]]:
    """What the database says is current: {entry id: (natural path, rendered bytes)}; bytes is
    None for an entry that cannot be rendered (said in `problems`)."""
    names = Names()
    entries = list(Entry.objects.order_by("pk"))
    sources = sources_by_entry(e.pk for e in entries)
    out: dict[str, tuple[str, bytes | None]] = {}
    for entry in entries:
        state = state_of(entry, names, sources)
        try:
            out[state.id] = (state.path, state.render())
        except Exception as exc:
            out[state.id] = (state.path, None)
            if problems is not None:
                problems.append(
                    f"{state.path}: entry {state.id} cannot be rendered ({describe(exc)})"
                )
    return out


def parked_lines() -> list[str]:
    """One line per parked revision: what failed and how to put it back."""
    return [
        f"revision {p.revision_id} (entry id {p.entry_id}) is parked after {p.attempts} "
        f"attempt(s): {p.error}. Its entry's next revision commits it (as a note if it still "
        "fails); `manage.py mirror retry` tries it again."
        for p in parked()
    ]


def verify(mirror=None) -> list[str]:
    """Differences between the tree at the published head and the database, one line each."""
    mirror = mirror or open_mirror()
    files = mirror.files(mirror.head().id if mirror.head() else None)
    problems: list[str] = []
    expected = expected_files(problems)
    seen: set[str] = set()
    if files.get(MANIFEST_PATH) != render_manifest():
        problems.append(
            f"{MANIFEST_PATH}: the projects, memberships or subtopics differ from the database"
        )
    for path in sorted(files):
        if path.startswith(MANIFEST_DIR):
            continue
        entry_id = entry_id_of(files[path]) if path.endswith(".md") else None
        if entry_id not in expected or entry_id in seen:
            problems.append(f"{path}: in the mirror but not a current entry in the database")
            continue
        seen.add(entry_id)
        natural, data = expected[entry_id]
        if path not in (natural, alternate_path(natural, entry_id)):
            problems.append(f"{path}: entry {entry_id} should be at {natural}")
        elif data is not None and files[path] != data:
            problems.append(f"{path}: content differs from entry {entry_id} in the database")
    for entry_id in sorted(set(expected) - seen):
        problems.append(f"{expected[entry_id][0]}: entry {entry_id} is missing from the mirror")
    return problems


def rebuild(*, progress=None) -> int:
    """Recreate the repository from the full history, then point every revision at its commit.

    The old repository is kept beside the new one (`<name>.old-<timestamp>`) until you delete it.
    """
    path = Path(settings.CAIRN_MIRROR_PATH)
    fresh = path.with_name(path.name + ".rebuilding")
    with advisory_lock(wait=True):
        shutil.rmtree(fresh, ignore_errors=True)
        mirror = open_mirror(fresh)
        names = Names()
        shas: dict[int, str] = {}
        rows = HistoricalEntry.objects.order_by("history_id")
        total = rows.count()
        if progress is not None:
            progress.reset(total=total)
        chunk = 1000
        for start in range(0, total, chunk):
            batch = list(rows[start : start + chunk])
            sources = sources_by_entry(r.id for r in batch)
            for row in batch:
                try:
                    prepared = render_revision(mirror, row, names, sources)
                except Exception as exc:  # as in the drain: one bad revision is a note
                    prepared = note_revision(row, describe(exc))
                shas[row.history_id] = commit_prepared(mirror, row, names, prepared)
                if progress is not None:
                    progress.update(1)
        mirror.publish()
        sync_manifest(mirror)
        if path.exists():
            stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
            path.rename(path.with_name(f"{path.name}.old-{stamp}"))
        fresh.rename(path)
        with transaction.atomic():
            parked().delete()  # every revision has its commit (or note) now
            HistoricalEntry.objects.exclude(git_commit="").update(git_commit="")
            ids = list(shas)
            for start in range(0, len(ids), 5000):
                record_commits({i: shas[i] for i in ids[start : start + 5000]})
    return len(shas)
