"""What an entry was before a write changed it, kept by the write itself so the writer's report
(knowledge/reads/write_reports.py) compares against it without reading the revision back:
that read was a quarter of an append's cost in the web process (bench/agents_mix.py)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EntryBeforeWrite:
    """The entry as a write found it, under its lock (UpsertResult.before); EntryFields is what
    a writer sends, and the mirror's revision file is what a revision reads as."""

    version: int
    body: str
    title: str
    kind: str
    status: str
    tags: tuple[str, ...]
    path: str  # project slug and subtopic path, as write reports show it

    @classmethod
    def of(cls, entry) -> EntryBeforeWrite:
        """`entry` with its project and subtopic loaded (the write's lock selects them)."""
        path = entry.project.slug + (f"/{entry.subtopic.path}" if entry.subtopic_id else "")
        return cls(
            version=entry.version,
            body=entry.body,
            title=entry.title,
            kind=entry.kind,
            status=entry.status,
            tags=tuple(entry.tags or ()),
            path=path,
        )
