"""Export: the current entries as Markdown files in the mirror's layout, or JSON lines with
their full history. Read-only; used by `manage.py export`."""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

from history.file_format import alternate_path
from history.mirror.render import Names, sources_by_entry, state_of
from knowledge.models import Entry, HistoricalEntry, Project

_EPOCH_ZIP = (1980, 1, 1, 0, 0, 0)  # fixed timestamps: the same data gives the same archive


class UnknownProject(LookupError):
    pass


def entries(projects: list[str] | None = None):
    qs = Entry.objects.select_related("project", "subtopic")
    if projects:
        known = set(Project.objects.filter(slug__in=projects).values_list("slug", flat=True))
        if unknown := sorted(set(projects) - known):
            raise UnknownProject(
                f"No project {', '.join(unknown)}. Known projects: "
                f"{', '.join(Project.objects.values_list('slug', flat=True)[:50]) or 'none'}."
            )
        qs = qs.filter(project__slug__in=projects)
    # The oldest entry keeps a contested file name (created_at survives export and import).
    return qs.order_by("created_at", "short_id")


def markdown_files(
    projects: list[str] | None = None, *, progress=None
) -> Iterator[tuple[str, bytes]]:
    """(path, bytes) for every current entry, in the mirror's layout."""
    rows = list(entries(projects))
    names = Names()
    sources = sources_by_entry(e.pk for e in rows)
    taken: set[str] = set()
    if progress is not None:
        progress.reset(total=len(rows))
    for entry in rows:
        state = state_of(entry, names, sources)
        path = state.path
        if path in taken:
            path = alternate_path(path, state.id)
        taken.add(path)
        yield path, state.render()
        if progress is not None:
            progress.update(1)


def _json(value):
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def jsonl_lines(projects: list[str] | None = None, *, progress=None) -> Iterator[str]:
    """One JSON object per current entry: its state and every revision, oldest first."""
    rows = list(entries(projects))
    names = Names()
    sources = sources_by_entry(e.pk for e in rows)
    if progress is not None:
        progress.reset(total=len(rows))
    history: dict[int, list] = {}
    for rev in (
        HistoricalEntry.objects.filter(id__in=[e.pk for e in rows])
        .select_related("history_user")
        .order_by("history_id")
    ):
        history.setdefault(rev.id, []).append(rev)
    for entry in rows:
        state = state_of(entry, names, sources)
        record = state.record() | {
            "history": [
                {
                    "revision": rev.history_id,
                    "version": rev.version,
                    "action": {"+": "created", "~": "changed", "-": "deleted"}[rev.history_type],
                    "at": rev.history_date,
                    "user": rev.history_user.get_username() if rev.history_user else None,
                    "generated_by": rev.generated_by,
                    "reason": rev.history_change_reason or "",
                    "git_commit": rev.git_commit or None,
                    "project": names.project(rev.project_id),
                    "subtopic": names.subtopic(rev.subtopic_id),
                    "title": rev.title,
                    "kind": rev.kind,
                    "status": rev.status,
                    "tags": list(rev.tags or []),
                    "body": rev.body,
                    "metadata": rev.metadata,
                }
                for rev in history.get(entry.pk, [])
            ],
        }
        yield json.dumps(record, ensure_ascii=False, sort_keys=True, default=_json) + "\n"
        if progress is not None:
            progress.update(1)


# An export holds every entry it names, restricted projects included: readable by its owner
# only, whatever the umask (a shared host's 022 would let every account read it).
FILE_MODE, DIR_MODE = 0o600, 0o700


def _make_dirs(path: Path) -> None:
    """`path` and its missing parents, each created owner-only (existing ones are left as
    they are)."""
    missing = []
    while not path.exists():
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        folder.mkdir(mode=DIR_MODE, exist_ok=True)
        folder.chmod(DIR_MODE)  # mkdir's mode passes through the umask


def _open_private(path: Path):
    """`path` for writing, owner-only from its first byte (an existing file is truncated and
    its mode narrowed)."""
    _make_dirs(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    os.fchmod(fd, FILE_MODE)
    return os.fdopen(fd, "wb")


def write(
    destination: Path, *, fmt: str = "md", projects: list[str] | None = None, progress=None
) -> int:
    """Write a folder, a .zip or a .tar.gz (by the destination's name), owner-only (files 0600,
    folders it creates 0700). Returns files written."""
    name = destination.name.lower()
    if fmt == "jsonl":
        items = [("entries.jsonl", "".join(jsonl_lines(projects, progress=progress)).encode())]
        if name.endswith(".jsonl"):
            with _open_private(destination) as out:
                out.write(items[0][1])
            return 1
    else:
        items = markdown_files(projects, progress=progress)
    count = 0
    if name.endswith(".zip"):
        with (
            _open_private(destination) as out,
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive,
        ):
            for path, data in items:
                info = zipfile.ZipInfo(path, date_time=_EPOCH_ZIP)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = FILE_MODE << 16
                archive.writestr(info, data)
                count += 1
    elif name.endswith((".tar.gz", ".tgz")):
        with (
            _open_private(destination) as out,
            tarfile.open(fileobj=out, mode="w:gz") as archive,
        ):
            for path, data in items:
                info = tarfile.TarInfo(path)
                info.size, info.mode, info.mtime = len(data), FILE_MODE, 0
                archive.addfile(info, io.BytesIO(data))
                count += 1
    else:
        if destination.exists() and any(destination.iterdir()):
            raise FileExistsError(
                f"{destination} is not empty. Export into a new or empty folder, or name a "
                ".zip / .tar.gz file."
            )
        for path, data in items:
            with _open_private(destination / path) as out:
                out.write(data)
            count += 1
    return count
