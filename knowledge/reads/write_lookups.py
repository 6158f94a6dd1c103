"""The entries a write's report names besides the written one, found by one statement: the
link targets it shows, and for a new entry the entries whose titles are alike (pg_trgm's `%`
through the title's GIN index) and those whose body is the same (the entry_body_key index).

The report's statement is knowledge.db.write_lookups's; blame's is a queryset compiled once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model

from knowledge.access import project_ids_sql, projects_for, reach
from knowledge.actors import Actor
from knowledge.db import compile_once
from knowledge.db import write_lookups as db
from knowledge.models import HistoricalEntry

MAX_SIMILAR = db.MAX_SIMILAR


@dataclass(frozen=True)
class Named:
    """An entry as a report names it."""

    id: int
    short_id: str
    title: str
    slug: str
    kind: str
    status: str
    updated_at: datetime
    project: str  # its project's slug
    subtopic: str | None  # its subtopic's path
    score: float

    @property
    def path(self) -> str:
        return f"{self.project}/{self.subtopic}" if self.subtopic else self.project

    @property
    def permalink(self) -> str:
        return f"memory://{self.path}/{self.slug}"

    def compact(self) -> dict:
        """As knowledge.graph.selectors.entry_compact shows an entry."""
        return {
            "id": self.id,
            "short_id": self.short_id,
            "title": self.title,
            "path": self.path,
            "permalink": self.permalink,
            "project": self.project,
            "kind": self.kind,
            "status": self.status,
            "updated": self.updated_at.isoformat(),
        }


@dataclass(frozen=True)
class Lookups:
    targets: dict[int, Named]  # the link targets the actor can see, by id
    similar: list[Named]  # candidates, most alike first
    same_body: list[Named]  # newest first


def report_lookups(
    actor: Actor, entry, *, targets: set[int] = frozenset(), new: bool = False
) -> Lookups:
    """One statement: the `targets` the actor can see (a target resolved earlier, by another
    writer, may be one it cannot), and for a `new` entry its lookalikes. No statement when
    there is nothing to look up."""
    found = Lookups({}, [], [])
    same_body = new and bool(entry.body.strip())
    if not targets and not new:
        return found
    rows = db.report_rows(
        project_ids_sql(actor, "read"),
        targets=list(targets),
        similar=new,
        same_body=same_body,
        title=entry.title,
        project=entry.project_id,
        entry_id=entry.pk,
        body=entry.body,
    )
    for part, *values in rows:
        named = Named(*values)
        if part == "t":
            found.targets[named.id] = named
        elif part == "s":
            found.similar.append(named)
        else:
            found.same_body.append(named)
    return found


@dataclass(frozen=True)
class Revision:
    """A revision as a report's blame reads it."""

    version: int
    body: str
    generated_by: str
    history_user_id: int | None
    username: str | None  # its user's username (USERNAME_FIELD)


def blame_revisions(actor: Actor, entry_id: int, *, newest: int, oldest: int) -> list[Revision]:
    """The entry's revisions with newest >= version > oldest the actor can see (not deletes),
    newest first (the latest row of a version first). An update's report runs it: compiled
    once per shape (knowledge.db.compile_once)."""
    r = reach(actor)
    username = f"history_user__{get_user_model().USERNAME_FIELD}"
    compiled = compile_once(
        ("blame", r.shape, username),
        lambda s: (
            HistoricalEntry.objects.filter(
                id=s.int("id"),
                version__lte=s.int("newest"),
                version__gt=s.int("oldest"),
                project__in=projects_for(r, "read", s),
            )
            .exclude(history_type="-")
            .order_by("-version", "-history_id")
            .values_list("version", "body", "generated_by", "history_user_id", username)
        ),
    )
    rows = compiled.rows(id=entry_id, newest=newest, oldest=oldest, **r.values)
    return [Revision(*row) for row in rows]
