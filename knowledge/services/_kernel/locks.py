"""Finding and locking the entry a write changes: one statement each, compiled once per shape
(every write runs one; building them as ORM queries cost a write more CPU than running them)."""

from __future__ import annotations

from django.db.models import BooleanField, ExpressionWrapper, Q
from django.db.models.functions import Lower

from knowledge.access import projects_for, reach
from knowledge.actors import Actor
from knowledge.db import Stand, compile_once
from knowledge.errors import Forbidden
from knowledge.models import Entry, Project, Subtopic
from knowledge.selectors import entry_not_found, project_maintainers, strip_memory_scheme
from knowledge.selectors.addresses import moved_entry_id
from knowledge.selectors.entries import REF_NAMES, entry_ref_parts, entry_ref_q
from knowledge.services._kernel.checks import require_write

# The search vector is left out: a save computes it anew, and it is never read from the row here.
_NO_VECTOR = "search_vector"


def lock_entry(actor: Actor, ref: str | int) -> Entry:
    """The entry `ref` names, locked for this transaction (an agent and a person may edit it at
    once): one query that finds, scopes, locks and says whether the actor may change it.
    What a signed-in actor cannot see is not found, whatever its token's scope."""
    if not getattr(actor.user, "is_authenticated", False):
        require_write(actor)  # says to sign in
    found = _locked(actor, ref) if str(ref).strip() else None
    if found is None and (moved := moved_entry_id(actor, strip_memory_scheme(str(ref).strip()))):
        found = _locked(actor, moved)  # an old address: the entry at its new one
    if found is None:
        raise entry_not_found(actor, ref)
    entry, may_write = found
    require_write(actor)
    if not may_write:
        raise Forbidden(
            f"You may read entry {entry.short_id} but not change it: that needs the editor "
            f"role in {entry.project.slug}. Ask one of its maintainers: "
            f"{project_maintainers(entry.project)}.",
            entry=entry.short_id,
        )
    return entry


def _stand_ins(kind: str, s: Stand) -> dict:
    return {name: s.int(name) if t is int else s.text(name) for name, t in REF_NAMES[kind].items()}


def _locked(actor: Actor, ref: str | int) -> tuple[Entry, bool] | None:
    """entry_lookup among the entries the actor can see, with its project and subtopic, locked,
    and whether the actor may write it."""
    r = reach(actor)
    kind, values = entry_ref_parts(ref)

    def build(s: Stand):
        where, order = entry_ref_q(kind, _stand_ins(kind, s))
        writable = Q(project__in=projects_for(r, "write", s))
        found = (
            Entry.objects.select_related("project", "subtopic")
            .defer(_NO_VECTOR)
            .select_for_update(of=("self",))
            .filter(project__in=projects_for(r, "read", s))
            .filter(where)
            .annotate(may_write=ExpressionWrapper(writable, BooleanField()))
        )
        return (found.order_by(order) if order is not None else found)[:1]

    found = compile_once(("lock_entry", r.shape, kind), build).first(**r.values, **values)
    return (found.obj, bool(found.extra["may_write"])) if found else None


def lock_by_identity(project: Project, subtopic: Subtopic | None, title: str) -> Entry | None:
    """The entry with this identity, locked, through the identity's unique index; the caller
    checked that the project is writable."""

    def build(s: Stand):
        found = Entry.objects.defer(_NO_VECTOR).alias(ltitle=Lower("title"))
        found = found.filter(project_id=s.int("project"), ltitle=s.text("title"))
        if subtopic is not None:
            found = found.filter(subtopic_id=s.int("subtopic"))
        else:
            found = found.filter(subtopic__isnull=True)
        return found.order_by().select_for_update()

    found = compile_once(("lock_by_identity", subtopic is not None), build).first(
        project=project.pk, subtopic=subtopic and subtopic.pk, title=title.strip().lower()
    )
    if found is None:
        return None
    entry = found.obj
    entry.project, entry.subtopic = project, subtopic
    return entry
