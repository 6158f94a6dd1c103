"""Import Markdown with YAML frontmatter: Cairn exports, Basic Memory projects, Obsidian vaults
and brain-engine `memory/` folders. This module reads and parses; the writes are one call of
knowledge.services.entries_import. One bad file is reported, never fatal."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

from django.conf import settings
from django.utils.text import slugify

from history.file_format import (
    KEYS,
    REQUIRED_KEYS,
    FrontmatterError,
    RevisionFile,
    parse_markdown,
)
from knowledge.actors import Actor
from knowledge.markdown import first_h1
from knowledge.models import EntryStatus
from knowledge.services import EntryFields, ImportItem, entries_import

MARKDOWN = {".md", ".markdown"}
SKIP_DIRS = {".git", ".obsidian", ".trash", ".cairn", "node_modules", "__pycache__"}
_SHORT_ID = re.compile(r"^[23456789a-z]{8,12}$")


@dataclass
class FileResult:
    path: str
    outcome: str  # created | updated | unchanged | skipped
    reason: str = ""
    entry: str = ""
    dropped_mark: bool = False  # a verification mark in the file, not taken


@dataclass
class ImportReport:
    results: list[FileResult] = field(default_factory=list)
    dry_run: bool = False

    @property
    def counts(self) -> Counter:
        return Counter(r.outcome for r in self.results)

    @property
    def dropped_marks(self) -> int:
        return sum(r.dropped_mark for r in self.results)


def _jsonable(value):
    """YAML gives dates and datetimes; metadata is JSON."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_jsonable(v) for v in value]
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _tags(value) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [t for t in re.split(r"[,\s]+", value) if t]
    if isinstance(value, list | tuple):
        return [str(t) for t in value if t is not None and not isinstance(t, dict | list)]
    return [str(value)]


def _sources(value) -> list[dict]:
    out = []
    for item in value if isinstance(value, list) else [value] if value else []:
        if isinstance(item, dict) and item.get("kind") and item.get("external_id"):
            out.append(
                {
                    k: str(item[k])[:2000]
                    for k in ("kind", "external_id", "url", "title")
                    if item.get(k)
                }
            )
        elif isinstance(item, str | int) and str(item).strip():
            text = str(item).strip()[:500]
            kind = "url" if text.startswith(("http://", "https://")) else "ref"
            out.append(
                {"kind": kind, "external_id": text} | ({"url": text} if kind == "url" else {})
            )
    return out


def is_cairn(front: dict) -> bool:
    """A file Cairn wrote (its mirror or an export): read with the mirror format's own reader."""
    return front.keys() >= REQUIRED_KEYS and bool(_SHORT_ID.match(str(front.get("id", ""))))


def _cleaned(fields: EntryFields, body: str, rel: Path) -> EntryFields:
    """Whatever the dialect: a one-line title (else the first heading, else the file name), a
    slug for the kind, a known status or none, tags as a list."""
    title = " ".join(str(fields.title or "").split()) or first_h1(body) or rel.stem
    kind = slugify(str(fields.kind or "note"))[:40] or "note"
    status = str(fields.status or "").strip().lower()
    return replace(
        fields,
        title=" ".join(title.split())[:300],
        kind=kind,
        tags=_tags(fields.tags),
        status=status if status in EntryStatus.values else None,
    )


def record_from(front: dict, body: str, rel: Path) -> tuple[EntryFields, list[dict], dict | None]:
    """Map any supported dialect's frontmatter to the entry's fields and its sources (+ Cairn
    provenance)."""
    sources = _sources(front.get("sources"))
    if is_cairn(front):
        try:
            fields = RevisionFile.from_frontmatter(front, body).entry_fields()
        except (KeyError, TypeError, ValueError) as exc:
            raise FrontmatterError(
                f"a Cairn file (it has an id) whose frontmatter cannot be read ({exc}); fix "
                "that value, or remove the id to import it as plain Markdown"
            ) from exc
        # A hand-edited export may hold `tags: a, b`: split as for every dialect.
        fields = replace(fields, tags=front.get("tags"), metadata=_jsonable(fields.metadata))
        provenance = {k: front.get(k) for k in KEYS if k in front}
        return _cleaned(fields, body, rel), sources, provenance
    fields = EntryFields(
        title=front.get("title") or front.get("name"),
        body=body,
        kind=front.get("kind") or front.get("type"),
        tags=front.get("tags"),
        status=front.get("status"),
    )
    fields = _cleaned(fields, body, rel)
    extra = {k: v for k, v in front.items() if k not in {"title", "kind", "type", "tags"}}
    if fields.status is not None:
        extra.pop("status", None)
    if isinstance(front.get("sources"), list) and sources:
        extra.pop("sources", None)
    return replace(fields, metadata=_jsonable(extra)), sources, None


def _place(rel: Path, project: str | None) -> tuple[str | None, str]:
    folders = list(rel.parent.parts)
    if project:
        return project, "/".join(folders)
    if not folders:
        return None, ""
    return folders[0], "/".join(folders[1:])


def discover(root: Path) -> list[Path]:
    files = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part in SKIP_DIRS or part.startswith(".") for part in rel.parts[:-1]):
            continue
        if (path.is_file() or path.is_symlink()) and not path.name.startswith("."):
            files.append(path)
    return files


def read_file(root: Path, path: Path, *, project: str | None) -> ImportItem | FileResult:
    """What one file would import, or why it is skipped."""
    rel = path.relative_to(root)
    if path.is_symlink():
        return FileResult(str(rel), "skipped", "a symbolic link (import the file it points to)")
    if path.suffix.lower() not in MARKDOWN:
        return FileResult(str(rel), "skipped", "not a Markdown file (.md)")
    size = path.stat().st_size
    if size > settings.CAIRN_IMPORT_MAX_BYTES:
        return FileResult(
            str(rel), "skipped", f"too large ({size} bytes; limit CAIRN_IMPORT_MAX_BYTES)"
        )
    raw = path.read_bytes()
    if b"\0" in raw:
        return FileResult(str(rel), "skipped", "binary content")
    try:
        front, body = parse_markdown(raw)
    except UnicodeDecodeError:
        return FileResult(str(rel), "skipped", "not UTF-8 text")
    except FrontmatterError as exc:
        return FileResult(str(rel), "skipped", str(exc))
    project_slug, subtopic = _place(rel, project)
    if project_slug is None:
        return FileResult(
            str(rel), "skipped", "not inside a project folder; pass --project to choose one"
        )
    fields, sources, provenance = record_from(front, body, rel)
    return ImportItem(
        name=str(rel),
        project=project_slug,
        subtopic=subtopic or None,
        fields=fields,
        sources=sources,
        reason=f"import {rel}",
        provenance=provenance,
    )


def _read_or_skip(root: Path, path: Path, *, project: str | None) -> ImportItem | FileResult:
    try:
        return read_file(root, path, project=project)
    except Exception as exc:  # an unreadable file is reported, never fatal
        reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        return FileResult(str(path.relative_to(root)), "skipped", reason)


def import_folder(
    root: Path,
    *,
    actor: Actor,
    project: str | None = None,
    dry_run: bool = False,
    progress=None,
    strict_schemas: bool = False,
    keep_verified: bool = False,
) -> ImportReport:
    """Import every file under root in one transaction (a dry run rolls it back); links between
    entries (supersedes) are restored once every file is in. Entries that do not fit their
    schema are imported with the misfits as their reason (`strict_schemas`: skipped where the
    project's schema mode is strict). Verification marks (verified_by) in the files are dropped
    unless `keep_verified` (then mapped to the existing account of that username)."""
    report = ImportReport(dry_run=dry_run)
    files = discover(root)
    if progress is not None:
        progress.reset(total=len(files))
    read = [_read_or_skip(root, path, project=project) for path in files]
    items = [r for r in read if isinstance(r, ImportItem)]
    if progress is not None:
        progress.update(len(read) - len(items))  # skipped files are done already
    outcomes = iter(
        entries_import(
            actor=actor,
            items=items,
            dry_run=dry_run,
            progress=progress,
            strict_schemas=strict_schemas,
            keep_verified=keep_verified,
        )
    )
    for result in read:
        if isinstance(result, ImportItem):
            done = next(outcomes)
            result = FileResult(done.name, done.outcome, done.reason, done.entry, done.dropped_mark)
        report.results.append(result)
    return report


def report_json(report: ImportReport) -> str:
    return json.dumps(
        {"dry_run": report.dry_run, "counts": dict(report.counts),
         "files": [r.__dict__ for r in report.results]},
        indent=2,
    )  # fmt: skip
