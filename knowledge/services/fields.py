"""What a writer sends about an entry or a project itself: one value object per kind of thing,
for every write surface.

Where the entry goes (project, subtopic), its sources, the version a writer expects, a project's
slug and members, and why it writes are not fields; the services take those as arguments of
their own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Self

from knowledge import limits


class _Fields:
    """None = not given: an update keeps the field, a create takes Cairn's default."""

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def pick(cls, values: Mapping[str, Any]) -> Self:
        """The fields among `values` (a parsed request); the rest is not ours."""
        return cls(**{name: values[name] for name in cls.names() if name in values})

    def given(self) -> dict[str, Any]:
        """The fields the writer gave (not None), by name."""
        return {name: value for name in self.names() if (value := getattr(self, name)) is not None}


@dataclass(frozen=True, kw_only=True)
class EntryFields(_Fields):
    """The entry's own fields. The kernel normalizes and checks them when it writes."""

    title: str | None = None
    body: str | None = None
    kind: str | None = None
    tags: list[str] | str | None = None  # a list, or a comma-separated string
    status: str | None = None
    searchable: bool | None = None
    metadata: dict | None = None

    def __post_init__(self) -> None:
        # Sizes first, by construction: every entry write takes its fields as this value, so
        # none can reach a merge, a diff or a parse with a body past the limits.
        limits.check_length(self.title, field="title", limit=limits.TITLE)
        limits.check_entry_sizes(body=self.body, metadata=self.metadata, tags=self.tags)

    @classmethod
    def from_revision(cls, row: Any) -> EntryFields:
        """Every field as an entry, or one of its revisions, has it: what a revert restores
        (who, when and the version are the new revision's)."""
        return cls(
            title=row.title,
            body=row.body,
            kind=row.kind,
            tags=list(row.tags or []),
            status=row.status,
            searchable=row.searchable,
            metadata=dict(row.metadata or {}),
        )


@dataclass(frozen=True, kw_only=True)
class ProjectFields(_Fields):
    """A project's own settings (its slug is fixed at creation; members change apart).
    `schema_library` names a project that shares its schemas; "" clears it."""

    name: str | None = None
    description: str | None = None
    sensitivity: str | None = None
    archived: bool | None = None
    schema_mode: str | None = None
    schemas_shared: bool | None = None
    schema_library: str | int | None = None
