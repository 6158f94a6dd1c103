"""Finding and locking the entry a write changes: one statement each, in plain SQL (every write
runs one; building them as ORM queries cost a write more CPU than running them)."""

from __future__ import annotations

from django.db import connection

from knowledge.actors import Actor
from knowledge.errors import Forbidden
from knowledge.models import Entry, Project, Subtopic
from knowledge.selectors import entry_not_found, project_maintainers, strip_memory_scheme
from knowledge.selectors.access import project_ids_sql
from knowledge.selectors.addresses import moved_entry_id
from knowledge.selectors.entries import entry_ref_sql
from knowledge.selectors.rows import columns
from knowledge.services._kernel.checks import require_write

# The search vector is left out: a save computes it anew, and it is never read from the row here.
_NO_VECTOR = frozenset({"search_vector"})
_ENTRY = '"knowledge_entry"'  # not aliased: as the ORM writes it (tests count its lookups)


def lock_entry(actor: Actor, ref: str | int) -> Entry:
    """The entry `ref` names, locked for this transaction (an agent and a person may edit it at
    once): one query that finds, scopes, locks and says whether the actor may change it.
    What a signed-in actor cannot see is not found, whatever its token's scope."""
    if not getattr(actor.user, "is_authenticated", False):
        require_write(actor)  # says to sign in
    entry = _locked(actor, ref) if str(ref).strip() else None
    if entry is None and (moved := moved_entry_id(actor, strip_memory_scheme(str(ref).strip()))):
        entry = _locked(actor, moved)  # an old address: the entry at its new one
    if entry is None:
        raise entry_not_found(actor, ref)
    require_write(actor)
    if not entry.may_write:
        raise Forbidden(
            f"You may read entry {entry.short_id} but not change it: that needs the editor "
            f"role in {entry.project.slug}. Ask one of its maintainers: "
            f"{project_maintainers(entry.project)}.",
            entry=entry.short_id,
        )
    return entry


def _locked(actor: Actor, ref: str | int) -> Entry | None:
    """entry_lookup among the entries the actor can see, with its project and subtopic, locked,
    and `may_write`."""
    where, order, params = entry_ref_sql(ref)
    visible, more = project_ids_sql(actor, "read")
    writable, most = project_ids_sql(actor, "write")
    e = columns(Entry, _ENTRY, _NO_VECTOR)
    p, s = columns(Project, "p"), columns(Subtopic, "s")
    sql = f"""SELECT {e.sql}, {p.sql}, {s.sql}, {_ENTRY}.project_id IN ({writable})
  FROM {_ENTRY}
  JOIN knowledge_project p ON p.id = {_ENTRY}.project_id
  LEFT JOIN knowledge_subtopic s ON s.id = {_ENTRY}.subtopic_id
 WHERE {_ENTRY}.project_id IN ({visible}) AND {where}
 ORDER BY {order} LIMIT 1 FOR UPDATE OF {_ENTRY}"""
    with connection.cursor() as cursor:
        cursor.execute(sql, params | more | most)
        row = cursor.fetchone()
    if row is None:
        return None
    n, m = len(e.names), len(e.names) + len(p.names)
    entry = e.instance(row[:n])
    entry.project = p.instance(row[n:m])
    entry.subtopic = s.instance(row[m:-1]) if entry.subtopic_id is not None else None
    entry.may_write = row[-1]
    return entry


def lock_by_identity(project: Project, subtopic: Subtopic | None, title: str) -> Entry | None:
    """The entry with this identity, locked, through the identity's unique index; the caller
    checked that the project is writable."""
    e = columns(Entry, _ENTRY, _NO_VECTOR)
    place = "subtopic_id = %(subtopic)s" if subtopic else "subtopic_id IS NULL"
    sql = f"""SELECT {e.sql} FROM {_ENTRY}
 WHERE project_id = %(project)s AND {place} AND LOWER(title) = %(title)s FOR UPDATE"""
    params = {"project": project.pk, "subtopic": subtopic and subtopic.pk}
    with connection.cursor() as cursor:
        cursor.execute(sql, params | {"title": title.strip().lower()})
        row = cursor.fetchone()
    if row is None:
        return None
    entry = e.instance(row)
    entry.project, entry.subtopic = project, subtopic
    return entry
