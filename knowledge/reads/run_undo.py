"""What undoing a run does to each entry it wrote, decided from three states of the entry: before
the run (the revision before its first one in the run), at the end of the run (its last one
there) and now. Reads and pure decisions only: the preview shows them, and the undo
(knowledge/services/runs.py) decides them again under its locks and applies them.

- an entry the run created is deleted (it can be brought back), unless it changed since;
- an entry the run deleted comes back with its id, reading as before the run, unless someone
  deleted it again since;
- an entry the run changed goes back to its text and fields from before the run, keeping what
  others changed since: the body by a three-way line merge (knowledge.merges: the run's change
  taken back from the text as it is now), each field the run changed set back only where nobody
  changed it since, tags added or removed by the run taken back one by one; where the run and a
  later change touched the same lines or the same field, the entry is a conflict and stays as it
  is, unless the person chose how to resolve it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models.functions import Lower

from knowledge.access import (
    maintained_projects,
    project_maintainers,
    visible_projects,
    writable_projects,
)
from knowledge.actors import Actor
from knowledge.merges import merge
from knowledge.models import Entry, HistoricalEntry, Project
from knowledge.selectors.runs import Run, RunId, Touched, run_projects, run_size, run_touched

MAX_UNDO_ENTRIES = 2000  # entries one undo changes, in one transaction
FIELDS = ("title", "kind", "status", "searchable", "metadata")  # tags and place apart
CHUNK = 50  # entries whose states are read at once: memory stays bounded by the chunk


@dataclass(frozen=True)
class State:
    """An entry (or one of its revisions) as an undo compares it."""

    title: str
    body: str
    kind: str
    tags: tuple[str, ...]
    status: str
    searchable: bool
    metadata: dict
    project_id: int
    subtopic_id: int | None
    generated_by: str

    @classmethod
    def of(cls, row) -> State:
        return cls(
            title=row.title,
            body=row.body,
            kind=row.kind,
            tags=tuple(row.tags or ()),
            status=row.status,
            searchable=row.searchable,
            metadata=dict(row.metadata or {}),
            project_id=row.project_id,
            subtopic_id=row.subtopic_id,
            generated_by=row.generated_by,
        )

    @property
    def place(self) -> tuple[int, int | None]:
        return (self.project_id, self.subtopic_id)

    def reads_as(self, other: State) -> bool:
        """The same text, fields and place (who wrote it aside)."""
        return _content(self) == _content(other)


def _content(state: State) -> tuple:
    return (state.title, state.body, state.kind, state.tags, state.status, state.searchable,
            state.metadata, state.place)  # fmt: skip


@dataclass(frozen=True)
class Step:
    """What the undo does to one entry. `action`: restore (set `fields`, `body`, `place`),
    delete, undelete (back as `before` reads), keep (nothing to do: `note` says why) or conflict
    (the run's change and a later one touch the same lines or field: left as it is)."""

    entry_id: int
    short_id: str
    title: str
    action: str
    note: str
    version: int | None  # the entry's version now; None while it is deleted
    before: State | None = None
    fields: dict = field(default_factory=dict)
    body: str | None = None
    place: tuple[int, int | None] | None = None
    conflicts: tuple[dict, ...] = ()
    as_before: bool = False  # afterwards it reads exactly as before the run


def plan_step(
    touched: Touched, before_row, end_row, current: Entry | None, *, resolution: dict | None = None
) -> Step:
    """The undo of one entry. `resolution` for a conflict: {"take": "before"} (everything as
    before the run, later changes to it dropped) or {"body": text} (this text, and the fields
    that do not clash set back)."""
    existed = before_row is not None and before_row.history_type != "-"
    end = State.of(end_row)
    now = State.of(current) if current is not None else None
    who = {
        "entry_id": touched.entry_id,
        "short_id": end_row.short_id,
        "title": (current or end_row).title,
        "version": current.version if current is not None else None,
    }
    take_before = (resolution or {}).get("take") == "before"
    if not existed:
        if now is None:
            return Step(**who, action="keep", note="made and deleted again: nothing to undo")
        if now.reads_as(end) or take_before:
            return Step(**who, action="delete", note="made by the run")
        return Step(
            **who,
            action="conflict",
            note="made by the run and changed since: left as it is",
            conflicts=({"field": "entry", "what": "changed since the run made it"},),
        )
    before = State.of(before_row)
    if now is None:
        if end_row.history_type == "-" and touched.latest == touched.last:
            note = "deleted by the run: comes back with its id"
            return Step(**who, action="undelete", note=note, before=before, as_before=True)
        return Step(**who, action="keep", note="deleted since the run: left deleted")
    if take_before:
        return _restore(who, before, now, dict(_all_fields(before)), before.body, before.place)
    fields, conflicts = _fields(before, end, now)
    place = None
    if before.place != end.place and now.place != before.place:
        if now.place == end.place:
            place = before.place
        else:
            conflicts.append({"field": "place", "what": "moved since the run moved it"})
    body = None
    if before.body != end.body and now.body != before.body:
        if now.body == end.body:
            body = before.body
        else:
            merged = merge(end.body, now.body, before.body)
            if merged.body is None:
                conflicts += [{"field": "body", **c} for c in merged.conflicts]
            else:
                body = merged.body
    if resolution and "body" in resolution:
        body, conflicts = resolution["body"], []
    if conflicts:
        note = "the run's change and a later one touch the same " + ", ".join(
            sorted({c["field"] for c in conflicts})
        )
        note += ": left as it is"
        return Step(**who, action="conflict", note=note, conflicts=tuple(conflicts))
    return _restore(who, before, now, fields, body, place)


def _restore(who: dict, before: State, now: State, fields: dict, body, place) -> Step:
    fields = {k: v for k, v in fields.items() if _value(now, k) != _value_of(k, v)}
    body = body if body is not None and body != now.body else None
    place = place if place is not None and place != now.place else None
    if not (fields or body is not None or place):
        same = now.reads_as(before)
        note = "reads as before the run already" if same else "changed only by others since"
        return Step(**who, action="keep", note=note, before=before, as_before=same)
    after = _content_dict(now) | {k: _value_of(k, v) for k, v in fields.items()}
    if body is not None:
        after["body"] = body
    if place:
        after["project_id"], after["subtopic_id"] = place
    return Step(
        **who,
        action="restore",
        note="set back to before the run",
        before=before,
        fields=fields,
        body=body,
        place=place,
        as_before=after == _content_dict(before),
    )


def _value(state: State, name: str):
    return getattr(state, name)


def _value_of(name: str, value):
    return tuple(value) if name == "tags" else value


def _content_dict(state: State) -> dict:
    return {k: v for k, v in state.__dict__.items() if k != "generated_by"}


def _all_fields(state: State):
    yield from ((name, getattr(state, name)) for name in FIELDS)
    yield "tags", list(state.tags)


def _fields(before: State, end: State, now: State) -> tuple[dict, list[dict]]:
    """The fields to set back, and those where the run and a later change clash. Tags the run
    added are taken away and those it removed put back, one by one, whatever else changed."""
    fields: dict = {}
    conflicts: list[dict] = []
    for name in FIELDS:
        was, ran, is_ = getattr(before, name), getattr(end, name), getattr(now, name)
        if was == ran or is_ == was:
            continue
        if is_ == ran:
            fields[name] = was
        else:
            conflicts.append({"field": name, "what": f"{name} changed since the run changed it"})
    if before.tags != end.tags:
        added, removed = set(end.tags) - set(before.tags), set(before.tags) - set(end.tags)
        tags = [t for t in now.tags if t not in added]
        tags += [t for t in before.tags if t in removed and t not in tags]
        if tuple(tags) != now.tags:
            fields["tags"] = tags
    return fields, conflicts


# --- reading the states ------------------------------------------------------------------------


def states(touched: list[Touched], *, lock=None):
    """(touched, before row, end row, current entry) for each entry, read CHUNK at a time; the
    current entry through `lock(entry_id)` when given (the undo), else read plainly."""
    for at in range(0, len(touched), CHUNK):
        part = touched[at : at + CHUNK]
        ids = [t.before for t in part if t.before] + [t.last for t in part]
        rows = HistoricalEntry.objects.in_bulk(ids, field_name="history_id")
        current = {} if lock else Entry.objects.in_bulk([t.entry_id for t in part])
        for t in part:
            now = lock(t.entry_id) if lock else current.get(t.entry_id)
            yield t, rows.get(t.before) if t.before else None, rows[t.last], now


def title_taken(step: Step, now: Entry | None) -> bool:
    """Whether setting the step's title or place back would meet another entry's identity."""
    if now is None or step.action != "restore" or not ("title" in step.fields or step.place):
        return False
    project_id, subtopic_id = step.place or (now.project_id, now.subtopic_id)
    title = step.fields.get("title", now.title)
    return (
        Entry.objects.annotate(low=Lower("title"))
        .filter(project_id=project_id, subtopic_id=subtopic_id, low=title.strip().lower())
        .exclude(pk=now.pk)
        .exists()
    )


def undo_refusal(actor: Actor, run: Run) -> str | None:
    """Why `actor` may not undo `run`, or None: they need the editor role (the maintainer role
    for another person's run) in every project it wrote to, was in before it, or is in now."""
    if not actor.can_write:
        return "This token is read-only: undoing a run needs a token with the write scope."
    size = run_size(run.id)
    if size > MAX_UNDO_ENTRIES:
        return (
            f"Run r{run.key} wrote {size} entries, more than the {MAX_UNDO_ENTRIES} one undo "
            "changes at once: revert its entries one by one, or ask an administrator."
        )
    projects = touched_projects(run.id)
    own = run.id.user_id == getattr(actor.user, "pk", None)
    allowed = (writable_projects if own else maintained_projects)(actor)
    missing = projects - set(allowed.filter(pk__in=projects).values_list("pk", flat=True))
    if not missing:
        return None
    seen = list(Project.objects.filter(pk__in=missing).order_by("slug"))
    named = [p for p in seen if p.pk in set(_visible_ids(actor, missing))]
    where = ", ".join(p.slug for p in named)
    if len(named) < len(missing):
        where = f"{where} and projects you cannot see" if where else "projects you cannot see"
    role = "editor" if own else "maintainer"
    whom = f"; ask a maintainer: {project_maintainers(named[0])}" if named else ""
    whose = "your" if own else "another person's"
    return (
        f"Undoing {whose} run needs the {role} role in every "
        f"project it wrote to, and you lack it in {where}{whom}."
    )


def _visible_ids(actor: Actor, ids: set[int]):
    return visible_projects(actor).filter(pk__in=ids).values_list("pk", flat=True)


def touched_projects(run: RunId) -> set[int]:
    """Every project the run's entries were in before it, during it, or are in now."""
    touched = run_touched(run, limit=MAX_UNDO_ENTRIES + 1)
    befores = [t.before for t in touched if t.before]
    found = run_projects(run)
    found |= set(
        HistoricalEntry.objects.filter(history_id__in=befores).values_list("project_id", flat=True)
    )
    found |= set(
        Entry.objects.filter(pk__in=[t.entry_id for t in touched]).values_list(
            "project_id", flat=True
        )
    )
    return found
