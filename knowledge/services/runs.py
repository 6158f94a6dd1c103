"""Undoing a run as one unit (knowledge/reads/run_undo.py decides what happens to each
entry; knowledge/selectors/runs.py reads runs).

One transaction for the whole run: an undo either takes the whole run back or changes nothing,
so nobody is left with a half-undone run to reason about, and undoing the undo is again one
run. Its cost is linear in the entries the run wrote and bounded (MAX_UNDO_ENTRIES); the
entries are locked in id order before anything is written (as a subtopic move locks them), so
two undos, or an undo and a move, wait for each other instead of deadlocking. The undo writes as
a run of its own, which can itself be undone.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.db.models import Min

from knowledge.actors import Actor
from knowledge.errors import Forbidden, RunChanged, ValidationFailed
from knowledge.models import Entry, Project
from knowledge.reads.run_undo import (
    MAX_UNDO_ENTRIES,
    Step,
    plan_step,
    states,
    title_taken,
    undo_refusal,
)
from knowledge.selectors.runs import RunId, run_get, run_touched
from knowledge.services import _kernel as k
from knowledge.services.fields import EntryFields


@dataclass(frozen=True)
class UndoReport:
    """What an undo did, entry by entry (short ids), and the run it wrote (None: it changed
    nothing), which can itself be undone."""

    run: int
    undo_run: int | None
    restored: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    undeleted: tuple[str, ...] = ()
    conflicts: tuple[tuple[str, str], ...] = ()  # (short id, why it was left as it is)
    kept: tuple[tuple[str, str], ...] = ()  # (short id, why nothing was to be done)

    @property
    def changed(self) -> int:
        return len(self.restored) + len(self.deleted) + len(self.undeleted)

    def summary(self) -> str:
        parts = [
            f"{len(self.restored)} set back",
            f"{len(self.deleted)} deleted (they can be brought back)",
            f"{len(self.undeleted)} brought back",
        ]
        if self.conflicts:
            parts.append(f"{len(self.conflicts)} left as they are (conflicts)")
        if self.kept:
            parts.append(f"{len(self.kept)} needed nothing")
        return f"Run r{self.run} undone: " + ", ".join(parts) + "."


@transaction.atomic(durable=True)
def run_undo(
    *,
    actor: Actor,
    run: int | str,
    reason: str,
    expected: dict[int, int] | None = None,
    resolutions: dict[int, dict] | None = None,
) -> UndoReport:
    """Take back everything `run` (a revision number of it) wrote, as one unit with one reason:
    each entry as before the run, later changes by others kept (see run_undo.py); conflicts are
    left as they are unless `resolutions` ({entry id: {"take": "before"} or {"body": text}})
    says how. `expected` ({entry id: version, 0 for deleted}, what a preview showed) refuses
    the whole undo when any of those entries changed since. Needs the editor role (the
    maintainer role for another person's run) in every project the run touched."""
    if not (reason or "").strip():
        raise ValidationFailed("Say why the run is undone (reason).", field="reason")
    k.require_write(actor)
    found = run_get(actor, run)
    if refusal := undo_refusal(actor, found):
        raise Forbidden(refusal, run=found.key)
    touched = run_touched(found.id, limit=MAX_UNDO_ENTRIES)
    # Every entry locked (id order) and checked against the preview before anything is written.
    versions = dict(
        Entry.objects.select_for_update()
        .filter(pk__in=[t.entry_id for t in touched])
        .order_by("pk")
        .values_list("pk", "version")
    )
    stale = sorted(pk for pk, v in (expected or {}).items() if versions.get(int(pk), 0) != v)
    if stale:
        raise RunChanged(
            f"{len(stale)} of the entries run r{found.key} wrote changed since the preview. "
            "Nothing was undone: look at the preview again, then undo.",
            run=found.key,
            entries=stale[:50],
        )
    writer = actor.in_run(k.new_run_id("undo"))
    why = f"undo r{found.key}: {reason.strip()}"
    done: dict[str, list] = {a: [] for a in ("restore", "delete", "undelete", "conflict", "keep")}

    def lock(pk: int) -> Entry | None:
        return k.lock_entry(writer, pk) if pk in versions else None

    chosen = {int(pk): how for pk, how in (resolutions or {}).items()}
    for touch, before, end, now in states(touched, lock=lock):
        step = plan_step(touch, before, end, now, resolution=chosen.get(touch.entry_id))
        if title_taken(step, now):
            note = "another entry holds its old title there now: left as it is"
            step = Step(**_who(step), action="conflict", note=note)
        _apply(writer, step, now, before, why)
        done[step.action].append(step)
    return UndoReport(
        run=found.key,
        undo_run=_first_revision(writer, actor),
        restored=tuple(s.short_id for s in done["restore"]),
        deleted=tuple(s.short_id for s in done["delete"]),
        undeleted=tuple(s.short_id for s in done["undelete"]),
        conflicts=tuple((s.short_id, s.note) for s in done["conflict"]),
        kept=tuple((s.short_id, s.note) for s in done["keep"]),
    )


def _who(step: Step) -> dict:
    return {
        "entry_id": step.entry_id,
        "short_id": step.short_id,
        "title": step.title,
        "version": step.version,
    }


def _apply(writer: Actor, step: Step, now: Entry | None, before, why: str) -> None:
    if step.action == "delete":
        k.delete_entry(now, writer, why)
    elif step.action == "undelete":
        k.restore_deleted(writer, k.lock_delete_row(step.entry_id), reason=why, state=before)
    elif step.action == "restore":
        k.apply_changes(now, EntryFields(**step.fields, body=step.body))
        if step.place is not None:
            project = Project.objects.get(pk=step.place[0])  # writable: undo_refusal checked
            node = k.place_of(writer, project, step.place[1])
            k.place_entry(writer, now, project=project, subtopic=node)
        moved = step.place is not None  # links waiting for an entry at its old place resolve
        if step.as_before:  # reads as its author left it: theirs again, not the undoer's
            now.generated_by = step.before.generated_by
            k.save_entry(now, writer, why, authored=False, moved=moved)
        else:
            k.save_entry(now, writer, why, schema_lenient=True, moved=moved)


def _first_revision(writer: Actor, actor: Actor) -> int | None:
    run = RunId(getattr(actor.user, "pk", None), actor.token_id, writer.run)
    return run.rows().aggregate(first=Min("history_id"))["first"]


__all__ = ["UndoReport", "run_undo"]
