"""What an entry write did, as one value: the entry as saved, what the write found under its
lock, the graph facts its save indexed and how its text fits its note type's schema. Every entry
service returns a WriteResult and the writer's report
(knowledge/reads/write_reports.py write_report) is built from it alone, so nothing rides on
the model instance and no surface rebuilds what the write already knew.

Keeping `before` spares the report reading the previous revision back: that read was a quarter
of an append's cost in the web process (bench/agents_mix.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from knowledge.graph.parsing import Observation as ParsedObservation
    from knowledge.models import Entry
    from knowledge.note_types import Report

Outcome = Literal["created", "updated", "unchanged", "corrected", "deleted", "undeleted"]


@dataclass(frozen=True)
class EntryBeforeWrite:
    """The entry as a write found it, under its lock (WriteResult.before); EntryFields is what
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


@dataclass(frozen=True)
class GraphFacts:
    """The entry's current facts as the save left them, for the write's report (no reading
    back): observations as (parsed observation, new at this revision), in the body's order;
    relations as (type, link text, target entry id or None while waiting)."""

    observations: list[tuple[ParsedObservation, bool]]
    relations: list[tuple[str, str, int | None]]
    # A waiting bare title that names one entry in each of several other projects: their ids.
    ambiguous: dict[str, list[int]] = field(default_factory=dict)

    def shown(self, cap: int) -> ShownFacts:
        """What a report lists of them: up to `cap` of each, and how many observations."""
        pairs = self.observations
        new = [i for i, (_, is_new) in enumerate(pairs) if is_new]
        listed = new[:cap] + [i for i, (_, is_new) in enumerate(pairs) if not is_new]
        return ShownFacts(
            observations=[pairs[i] for i in sorted(listed[:cap])],
            relations=self.relations[:cap],
            ambiguous=self.ambiguous,
            total=len(pairs),
            new=len(new),
        )


@dataclass(frozen=True)
class ShownFacts:
    """The facts a write's report lists (GraphFacts.shown): up to a cap of observations in the
    body's order, the new ones first to be kept (an append to a long log lists the line it
    added, not the log's first twenty), the first relations, and how many observations the
    entry holds (`total`) and the write added (`new`)."""

    observations: list[tuple[ParsedObservation, bool]]
    relations: list[tuple[str, str, int | None]]
    ambiguous: dict[str, list[int]]
    total: int
    new: int


@dataclass(frozen=True)
class Rebased:
    """A stale write applied on the current version: it touched nothing the revisions since
    `read_version` changed (`changes`: who, when, why), so theirs is kept as it is
    (knowledge.reads.conflicts.stale_write)."""

    read_version: int
    version: int  # the version it was applied on
    changes: list[dict]

    def as_dict(self) -> dict:
        return {"read_version": self.read_version, "version": self.version,
                "changes": self.changes}  # fmt: skip


@dataclass(frozen=True)
class WriteResult:
    """What an entry write did: the one value every entry service returns."""

    entry: Entry  # as saved (a delete: its fields as they were, without a primary key)
    outcome: Outcome
    before: EntryBeforeWrite | None = None  # as the write found it under its lock; None: new
    facts: GraphFacts | None = None  # what the save indexed; None when its text did not change
    schema: Report | None = None  # how the text fits its note type's schema; None: not checked
    superseded: Entry | None = None  # entry_correct: the entry the new one corrects
    rebased: Rebased | None = None  # a stale write applied on the current version
    sources: tuple[dict, ...] = ()  # the sources the writer sent (the report's "also logged by")
