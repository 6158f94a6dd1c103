"""A run's page and its undo's preview: every entry the run wrote (that the reader may see), one
diff each from before the run to its end, what others changed since, and exactly what an undo
would do to it now (knowledge/reads/run_undo.py decides; knowledge/services/runs.py does).

Bounded: at most `limit` entries (MAX_SHOWN), each diff cut to MAX_DIFF_LINES lines of at most
MAX_LINE_CHARS characters, five later changes per entry; the states are read CHUNK entries at a
time, so a run of large entries never sits in memory at once.
"""

from __future__ import annotations

from collections import Counter

from django.db.models import F, OuterRef, Subquery, Window
from django.db.models.functions import RowNumber

from knowledge.access import visible_projects
from knowledge.actors import Actor
from knowledge.diffs import unified_diff
from knowledge.models import HistoricalEntry, Project, Subtopic
from knowledge.reads.run_undo import State, Step, plan_step, states, title_taken, undo_refusal
from knowledge.selectors.runs import Run, Touched, run_get, run_touched, seen_rows

MAX_SHOWN = 200
MAX_DIFF_LINES = 300
MAX_LINE_CHARS = 500
MAX_LATER = 5
MAX_TEXT = 100_000  # a conflict's current text offered for editing on the page, at most
_ACTIONS = {"+": "created", "~": "changed", "-": "deleted"}


def run_preview(actor: Actor, key: int | str, *, limit: int = MAX_SHOWN) -> dict:
    """The run `key` names, its entries as described above, the counts of what an undo would
    do, why the actor may not undo it (None when they may), and the versions the preview saw
    ({entry id: version, 0 when deleted}: what the undo checks nothing changed since)."""
    run = run_get(actor, key)
    limit = max(1, min(limit, MAX_SHOWN))
    touched = run_touched(run.id, limit=limit, seen=seen_rows(actor))
    visible = set(visible_projects(actor).values_list("pk", flat=True))
    later = _later(actor, run, touched)
    items = []
    for touch, before, end, now in states(touched):
        if now is not None and now.project_id not in visible:  # moved since out of sight
            note = "moved since to a project you cannot see"
            who = {"entry_id": touch.entry_id, "short_id": end.short_id, "title": end.title}
            step, now = Step(**who, action="keep", note=note, version=None), None
        else:
            step = plan_step(touch, before, end, now)
        if title_taken(step, now):
            step = Step(**_who(step), action="conflict", note="another entry holds its old title")
        hidden_before = before is not None and before.project_id not in visible
        items.append(_item(step, before, end, now, hidden_before, later.get(touch.entry_id, [])))
    _name_places(items)
    return {
        "run": run,
        "items": items,
        "counts": Counter(item["action"] for item in items),
        "shown": len(items),
        "more": max(run.entries - len(items), 0),
        "refusal": undo_refusal(actor, run),
        "expected": {item["entry_id"]: item["version"] or 0 for item in items},
    }


def _who(step: Step) -> dict:
    return {k: getattr(step, k) for k in ("entry_id", "short_id", "title", "version")}


def _item(step: Step, before, end, now, hidden_before: bool, later: list[dict]) -> dict:
    existed = before is not None and before.history_type != "-"
    if hidden_before:
        did = "(before the run it was in a project you cannot see)"
    else:
        did = _diff(State.of(before) if existed else None, State.of(end), end.history_type == "-")
    will = ""
    if step.action == "restore":
        will = _diff(State.of(now), _after(step, now), False)
    elif step.action == "delete":
        will = "The entry is deleted (its history stays; it can be brought back)."
    elif step.action == "undelete":
        will = "The entry comes back with its id, reading as before the run."
    return {
        "entry_id": step.entry_id,
        "short_id": step.short_id,
        "title": step.title,
        "action": step.action,
        "note": step.note,
        "version": step.version,
        "exists": now is not None,
        "place": (now or end).project_id, "subtopic": (now or end).subtopic_id,
        "run_action": "created" if not existed else "deleted" if end.history_type == "-"
        else "changed",
        "did": did,
        "will": will,
        "conflicts": [_short(c) for c in step.conflicts[:10]],
        "text": now.body if now is not None and len(now.body) <= MAX_TEXT else None,
        "later": later,
    }  # fmt: skip


def _after(step: Step, now) -> State:
    state = State.of(now)
    values = {**state.__dict__, **step.fields}
    values["tags"] = tuple(values["tags"])
    if step.body is not None:
        values["body"] = step.body
    if step.place:
        values["project_id"], values["subtopic_id"] = step.place
    return State(**values)


def _diff(old: State | None, new: State, deleted: bool) -> str:
    """What changed from `old` to `new`: a unified diff of the body and a line of the fields."""
    if old is None and deleted:
        return "Made and deleted again by the run."
    if deleted:
        return "Deleted by the run."
    a = old.body.splitlines() if old else []
    lines = list(unified_diff(a, new.body.splitlines(), fromfile="before", tofile="after"))
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"… {len(lines) - MAX_DIFF_LINES} more lines"]
    lines = [line[:MAX_LINE_CHARS] for line in lines]
    if old is None:
        lines.insert(0, "Made by the run.")
    else:
        fields = [
            f"{name} {_show(getattr(old, name))} → {_show(getattr(new, name))}"
            for name in ("title", "kind", "status", "tags", "searchable", "metadata")
            if getattr(old, name) != getattr(new, name)
        ]
        if old.place != new.place:
            fields.append("moved")
        if fields:
            lines.append("Fields: " + "; ".join(fields))
    return "\n".join(lines)


def _show(value) -> str:
    if isinstance(value, tuple | list):
        return "[" + ", ".join(value) + "]"
    return str(value)[:200]


def _short(conflict: dict) -> dict:
    return {k: str(v)[:2000] for k, v in conflict.items()}


def _later(actor: Actor, run: Run, touched: list[Touched]) -> dict[int, list[dict]]:
    """Up to MAX_LATER revisions of each entry after the run's last one (that the reader may
    see), oldest first: who changed it since, when and why. One query."""
    if not touched:
        return {}
    last = run.id.rows().filter(id=OuterRef("id")).order_by("-history_id").values("history_id")
    visible = visible_projects(actor).values("pk")
    rows = (
        HistoricalEntry.objects.filter(id__in=[t.entry_id for t in touched], project_id__in=visible)
        .annotate(run_last=Subquery(last[:1]))
        .filter(history_id__gt=F("run_last"))
        .annotate(n=Window(RowNumber(), partition_by=[F("id")], order_by=F("history_id").asc()))
        .filter(n__lte=MAX_LATER)
        .values("id", "version", "history_type", "history_date", "history_change_reason",
                "history_user__username", "history_agent")
    )  # fmt: skip
    found: dict[int, list[dict]] = {}
    for row in rows:
        found.setdefault(row["id"], []).append(
            {
                "version": row["version"],
                "action": _ACTIONS.get(row["history_type"], "changed"),
                "at": row["history_date"],
                "by": row["history_user__username"] or row["history_agent"] or "?",
                "agent": row["history_agent"],
                "reason": row["history_change_reason"] or "",
            }
        )
    return found


def _name_places(items: list[dict]) -> None:
    """Each item's place as `project/subtopic`: one query for the projects, one for the
    subtopics."""
    projects = dict(
        Project.objects.filter(pk__in={i["place"] for i in items}).values_list("pk", "slug")
    )
    nodes = dict(
        Subtopic.objects.filter(pk__in={i["subtopic"] for i in items if i["subtopic"]}).values_list(
            "pk", "path"
        )
    )
    for item in items:
        slug = projects.get(item.pop("place"), "?")
        node = item.pop("subtopic")
        item["path"] = f"{slug}/{nodes[node]}" if node in nodes else slug
