"""Graph writes outside an entry's own save: rebuilding observations and relations for entries
written before the graph existed (`manage.py reindex --graph`). A save indexes its own entry in
the kernel's save step."""

from __future__ import annotations

from django.db import transaction

from knowledge.actors import Actor
from knowledge.models import Entry
from knowledge.services._kernel import graph as graph_steps

MAX_BATCH = 1000


@transaction.atomic(durable=True)
def entries_reindex_graph(*, actor: Actor, entry_ids: list[int]) -> int:
    """Bring these entries' current observations and relations in line with their bodies (what
    a save would index), resolving their links against every entry there is; facts that no
    longer read so are closed, not deleted. Idempotent. Returns how many entries were indexed."""
    if len(entry_ids) > MAX_BATCH:
        raise ValueError(f"at most {MAX_BATCH} entries per call")
    count = 0
    entries = Entry.objects.filter(pk__in=entry_ids).select_related(
        "project", "subtopic", "updated_by"
    )
    for entry in entries.order_by("pk"):
        # Every entry exists already: its links resolve as it is indexed, none waits for it;
        # into the projects its last author may read, as when they saved it.
        graph_steps.index_graph(entry, writer=graph_steps.writer_of(entry), recheck=True)
        count += 1
    return count
