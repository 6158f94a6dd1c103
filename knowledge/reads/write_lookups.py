"""The entries a write's report names besides the written one, found by one statement: the
link targets it shows, and for a new entry the entries whose titles are alike (pg_trgm's `%`
through the title's GIN index) and those whose body is the same (the entry_body_key index).

Plain SQL, not the ORM: building these three queries cost a write more CPU than running them
(bench/write_profile.py), and one round trip serves all three.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db import connection

from knowledge.access import project_ids_sql
from knowledge.actors import Actor
from knowledge.models import EntryStatus, HistoricalEntry

MAX_SIMILAR = 3
SIMILAR_CANDIDATES = MAX_SIMILAR + 3  # titles alike by trigrams, kept when alike enough

_COLUMNS = """e.id, e.short_id, e.title, e.slug, e.kind, e.status, e.updated_at, p.slug,
       s.path, %(score)s
  FROM knowledge_entry e
  JOIN knowledge_project p ON p.id = e.project_id
  LEFT JOIN knowledge_subtopic s ON s.id = e.subtopic_id"""
_TARGETS = f"""SELECT 't', {_COLUMNS % {"score": "0::real"}}
 WHERE e.id = ANY(%(targets)s::bigint[]) AND e.project_id IN ({{visible}})"""
# The writer just wrote to this project, so it can see the project's entries; like search,
# superseded entries and transcripts (not searchable) are left out.
_SIMILAR = f"""(SELECT 's', {_COLUMNS % {"score": "similarity(e.title, %(title)s)"}}
 WHERE e.project_id = %(project)s AND e.title %% %(title)s AND e.id <> %(id)s
   AND e.status <> '{EntryStatus.SUPERSEDED.value}' AND e.searchable
 ORDER BY 11 DESC, e.id LIMIT {SIMILAR_CANDIDATES})"""
# The very expression of the entry_body_key index (knowledge.models.entries.body_key), the new
# body's key computed by PostgreSQL from the body sent, so the two always agree.
_KEY = "MD5(LOWER(TRIM(REGEXP_REPLACE({}, '\\s+', ' ', 'g'))))"
_SAME_BODY = f"""(SELECT 'b', {_COLUMNS % {"score": "0::real"}}
 WHERE {_KEY.format("e.body")} = {_KEY.format("%(body)s::text")}
   AND e.project_id IN ({{visible}}) AND e.id <> %(id)s
 ORDER BY e.updated_at DESC LIMIT {MAX_SIMILAR})"""


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
    parts = []
    if targets:
        parts.append(_TARGETS)
    if new:
        parts.append(_SIMILAR)
        if entry.body.strip():
            parts.append(_SAME_BODY)
    found = Lookups({}, [], [])
    if not parts:
        return found
    visible, visible_params = project_ids_sql(actor, "read")
    sql = "\nUNION ALL\n".join(parts).replace("{visible}", visible)
    params = {
        "targets": list(targets),
        "title": entry.title,
        "project": entry.project_id,
        "id": entry.pk,
        "body": entry.body,
        **visible_params,
    }
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
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
    newest first (the latest row of a version first). One plain statement: an update's report
    runs it, and building it as an ORM query cost more than running it."""
    user = get_user_model()
    username = user._meta.get_field(user.USERNAME_FIELD).column
    visible, params = project_ids_sql(actor, "read")
    sql = f"""SELECT h.version, h.body, h.generated_by, h.history_user_id, u."{username}"
  FROM {HistoricalEntry._meta.db_table} h
  LEFT JOIN {user._meta.db_table} u ON u.id = h.history_user_id
 WHERE h.id = %(id)s AND h.version <= %(newest)s AND h.version > %(oldest)s
   AND h.history_type <> '-' AND h.project_id IN ({visible})
 ORDER BY h.version DESC, h.history_id DESC"""
    with connection.cursor() as cursor:
        cursor.execute(sql, params | {"id": entry_id, "newest": newest, "oldest": oldest})
        return [Revision(*row) for row in cursor.fetchall()]
