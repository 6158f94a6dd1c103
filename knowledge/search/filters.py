"""What a searcher asks for besides the words: `SearchFilters`, read once from whatever a
surface received (comma lists, JSON lists, ISO dates, ages like "7d") and plain from then on.

Each filter has one name in the core, the field's below. A surface that publishes another
(MCP `since` and `category`, REST `category`, the web form's `kind` and `tag`) maps it at its
edge, as an alias on its own argument model, and hands over `SearchFilters.pick(values)`."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from knowledge import inputs
from knowledge.errors import ValidationFailed
from knowledge.models import EntryStatus
from knowledge.paths import normalize_path


@dataclass(frozen=True)
class SearchFilters:
    """Already-clean filters; build them from raw arguments with `SearchFilters.parse`."""

    project: str | int | None = None
    subtopic: str | None = None  # a normalised path; its subtopics are searched too
    kinds: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    tags_all: bool = False
    status: tuple[str, ...] = ()
    after: dt.datetime | None = None
    before: dt.datetime | None = None
    include_history: bool = False
    include_transcripts: bool = False
    categories: tuple[str, ...] = ()  # entries with a current observation of one of them

    @classmethod
    def parse(
        cls,
        *,
        project=None,
        subtopic=None,
        kinds=None,
        tags=None,
        tags_all=False,
        status=None,
        after=None,
        before=None,
        include_history=False,
        include_transcripts=False,
        categories=None,
    ) -> SearchFilters:
        """Raw surface arguments (None or "" for "not given") as filters, or ValidationFailed."""
        statuses = tuple(inputs.str_list(status) or ())
        unknown = [s for s in statuses if s not in EntryStatus.values]
        if unknown:
            raise ValidationFailed(
                f"Unknown status {', '.join(unknown)}; use any of {', '.join(EntryStatus.values)}.",
                field="status",
            )
        return cls(
            project=project if project not in (None, "") else None,
            subtopic=normalize_path(subtopic) if subtopic else None,
            kinds=tuple(k.lower() for k in inputs.str_list(kinds) or ()),
            tags=tuple(t.lower() for t in inputs.str_list(tags) or ()),
            tags_all=bool(tags_all),
            status=statuses,
            after=inputs.when(after, field="after"),
            before=inputs.when(before, field="before"),
            include_history=bool(include_history),
            include_transcripts=bool(include_transcripts),
            categories=tuple(
                " ".join(c.split()).lower() for c in inputs.str_list(categories) or ()
            ),
        )

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def pick(cls, values: Mapping[str, Any]) -> SearchFilters:
        """The filters among `values` (a surface's parsed arguments, by the core's names), the
        rest not ours; parsed as `parse` does."""
        return cls.parse(**{name: values[name] for name in cls.names() if name in values})

    @property
    def narrowed(self) -> bool:
        """Whether anything but the project narrows the search (the vector SQL reads it)."""
        return bool(
            self.subtopic
            or self.kinds
            or self.tags
            or self.status
            or self.after
            or self.before
            or self.categories
        )


NO_FILTERS = SearchFilters()  # every entry the actor may see, as an argument's default
