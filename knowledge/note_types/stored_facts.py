"""What saved entries hold, as a schema sees it, read from the observation and relation rows
the write path stored, never from their bodies.

A schema report reads up to 2,000 entries of a type; parsing their bodies again cost as much
as the bodies were long (1 MB each at most), on every request, whatever a writer put there.
The rows hold what that parse found when the entry was saved (at most 500 observations and
500 relations an entry), so a report costs what the entries mean, not what they weigh.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Value
from django.db.models.functions import Left

from knowledge.models import Entry, Observation, Relation
from knowledge.note_types import Facts
from knowledge.note_types.picoschema import MAX_TEXT
from knowledge.note_types.targets import Targets

# A value longer than an enum value may be is in no enum; the type checks (integer, number,
# boolean) see no further either.
VALUE_CHARS = MAX_TEXT + 1


def stored_facts(
    entries: Sequence[Entry], targets: dict[int, Targets] | None = None
) -> list[Facts]:
    """Facts of each saved entry, in order (one query however many entries)."""
    pks = [e.pk for e in entries]
    observations: dict[int, list] = {pk: [] for pk in pks}
    relations: dict[int, list] = {pk: [] for pk in pks}
    if pks:
        # One query for both (a page counts its queries): side 0 observations, 1 relations.
        facts = (
            Observation.objects.filter(entry_id__in=pks, valid_to__isnull=True)
            .annotate(side=Value(0), value=Left("content", VALUE_CHARS))
            .values_list("side", "entry_id", "category", "value", "position", "id")
        )
        links = (
            Relation.objects.filter(source_id__in=pks, valid_to__isnull=True)
            .annotate(side=Value(1))
            .values_list("side", "source_id", "relation_type", "target_text", "position", "id")
        )
        for side, pk, name, value, _, _ in facts.union(links, all=True).order_by("position", "id"):
            (relations if side else observations)[pk].append((name, value))
    targets = targets or {}
    return [
        Facts(
            observations=tuple(observations[e.pk]),
            relations=tuple(relations[e.pk]),
            tags=tuple(e.tags or ()),
            status=e.status or "",
            kind=e.kind or "",
            metadata=e.metadata if isinstance(e.metadata, dict) else {},
            targets=targets.get(e.pk) or {},
        )
        for e in entries
    ]
