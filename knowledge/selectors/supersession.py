"""Which supersession links a reader may follow (issue 32).

A correction lives where the entry it corrects lived, but either may be moved (or imported)
into a project the reader cannot see. Every surface that shows `supersedes` / `superseded_by`
asks here first: a link to an entry the reader may not see is shown as "an entry you cannot
see", with neither its title nor its id.
"""

from __future__ import annotations

from collections.abc import Iterable

from knowledge.actors import Actor
from knowledge.models import Entry
from knowledge.selectors import visible_entries

LINKS = ("supersedes", "superseded_by")
UNSEEN = "an entry you cannot see"


def unseen_links(actor: Actor, entries: Iterable[Entry]) -> frozenset[int]:
    """The ids that `entries` link to (supersedes, superseded_by) naming an entry the actor may
    not see. One query; none when no entry has a link."""
    linked = {pk for e in entries for pk in (e.supersedes_id, e.superseded_by_id) if pk}
    if not linked:
        return frozenset()
    seen = visible_entries(actor).filter(pk__in=linked).values_list("pk", flat=True)
    return frozenset(linked - set(seen))


def shown_link(entry: Entry, field: str, unseen: frozenset[int]) -> int | None:
    """The id `entry.<field>` names when the actor may follow it, else None."""
    pk = getattr(entry, f"{field}_id")
    return None if pk in unseen else pk
