"""Entries a search looks at whose vectors are not ready yet: found by their words only until
the embedding workers reach them. A search answer says so in one short note."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db.models import QuerySet
from django.utils import timezone

from knowledge.db.round_trip import statement_of
from knowledge.models import Entry

# Counted up to this many: past it the note says "more than".
COUNT_LIMIT = 100


@dataclass(frozen=True)
class Pending:
    count: int  # COUNT_LIMIT + 1 means "more than COUNT_LIMIT"
    oldest: dt.datetime

    def note(self, mode: str) -> str:
        many = self.count > COUNT_LIMIT
        count = f"More than {COUNT_LIMIT}" if many else str(self.count)
        one = self.count == 1
        what = f"{count} {'entry' if one else 'entries'} written {_since(self.oldest)}"
        if mode == "semantic":
            return (
                f"{what} {'is' if one else 'are'} left out of a search by meaning until "
                f"{'its vectors are' if one else 'their vectors are'} ready."
            )
        return (
            f"{what} {'is' if one else 'are'} found by words only until "
            f"{'its' if one else 'their'} vectors are ready."
        )


def _since(moment: dt.datetime) -> str:
    seconds = max(0.0, (timezone.now() - moment).total_seconds())
    if seconds < 60:
        return "in the last minute"
    if seconds < 3600:
        minutes = int(seconds // 60) + 1
        return f"in the last {minutes} minutes"
    if seconds < 86400:
        hours = int(seconds // 3600) + 1
        return f"in the last {hours} hours"
    return f"over the last {int(seconds // 86400) + 1} days"


def pending_in(scope: QuerySet[Entry]) -> Pending | None:
    """The scope's entries waiting for vectors (the oldest and how many, counted no further
    than COUNT_LIMIT + 1): one indexed read, since few entries wait at any time."""
    return pending_from(list(_waiting(scope)))


def pending_statement(scope: QuerySet[Entry]) -> tuple[str, tuple]:
    """pending_in's statement, for a caller that sends it with others (pending_from reads its
    rows). Raises EmptyResultSet for a scope that cannot hold anything."""
    return statement_of(_waiting(scope))


def pending_from(rows: list) -> Pending | None:
    stamps = [row[0] if isinstance(row, tuple) else row for row in rows]
    return Pending(len(stamps), stamps[0]) if stamps else None


def _waiting(scope: QuerySet[Entry]):
    return (
        scope.filter(embed_pending_since__isnull=False)
        .order_by("embed_pending_since")
        .values_list("embed_pending_since", flat=True)[: COUNT_LIMIT + 1]
    )
