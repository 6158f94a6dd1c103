"""A stale write: one that read an older version than the entry's current one.

When it touches nothing the other writer changed (an append or prepend, an edit of text they
left alone, fields they did not set) it applies on the current version and says so (`Rebased`).
Otherwise it is refused with what it needs to know: what changed since the version it read
(who, when, the changed lines and fields), and how to apply only its own change on top (a merged
body, or the lines where both changed the same text)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable

from knowledge import diffs, merges
from knowledge.access import visible_projects
from knowledge.actors import Actor
from knowledge.errors import EntryConflict, ValidationFailed
from knowledge.models import Entry, Project, Subtopic
from knowledge.write_result import Rebased

MAX_DIFF_LINES = 200
MAX_EDITS = 3
MAX_CHANGES = 20  # the newest revisions since the version read; `changes_total` counts them all
MAX_CONFLICTS = 20  # clashing spots listed; `conflicts_total` counts them all
MAX_KEEP_BOTH_CHARS = 4000  # of both sides' clashing lines, for the steps that keep both
MAX_UPDATE_ECHO = 300  # characters of an update's values (as JSON) sent back with its refusal
# The fields a conflict compares besides the body; "place" is the project and subtopic.
FIELDS = ("title", "kind", "tags", "status", "place")
_BASE_COLUMNS = ("history_id", "version", "body", "title", "kind", "tags", "status", "project_id",
                 "subtopic_id")  # fmt: skip
_CHANGE_COLUMNS = ("version", "history_date", "history_user__username", "generated_by",
                   "history_change_reason")  # fmt: skip


# Edits that only add lines: they touch no line the other writer changed, wherever it is.
INSERTING = ("append", "prepend")


def stale_write(entry: Entry, expected_version: int, *, actor: Actor, **change) -> Rebased:
    """A write that read `expected_version` of `entry` (locked, now further on): Rebased when it
    applies on the current version as it is, else the EntryConflict (entry_conflict) raised."""
    conflict = entry_conflict(entry, expected_version, actor=actor, **change)
    if conflict.data.get("applies"):
        return Rebased(expected_version, entry.version, conflict.data.get("changes") or [])
    raise conflict


def entry_conflict(
    entry: Entry,
    expected_version: int,
    *,
    actor: Actor,
    body: str | None = None,
    redo: Callable[[str], str] | None = None,
    edit: dict | None = None,
    writes: frozenset[str] | None = None,
    update: dict | None = None,
) -> EntryConflict:
    """The refusal of a write that read `expected_version` of `entry` (locked, now further on).

    What the writer changes, if it says: `body`, the whole body it sent; `redo`, its partial
    edit of a body (`edit`, the edit's own arguments: its operation says whether it inserts);
    `writes`, the fields (FIELDS) it sets without the body, and for an update `update`, what its
    caller passed (goes back in the answer, bounded, to be sent again). Revisions come from the
    projects the actor can see, so the answer shows nothing the actor could not read."""
    visible = entry.history.exclude(history_type="-").filter(
        project_id__in=visible_projects(actor).values("pk")
    )
    # Only the version read is needed whole (its text is what both sides changed); of the later
    # ones, who, when and why: a thousand edits of a large entry must not load a thousand bodies.
    base = visible.filter(version=expected_version).only(*_BASE_COLUMNS).order_by("history_id")
    base = base.first()
    later = visible.filter(version__gt=expected_version)
    newest = list(later.order_by("-history_id").values(*_CHANGE_COLUMNS)[:MAX_CHANGES])
    details: dict = {"changes": [_change(row) for row in reversed(newest)]}
    if len(newest) == MAX_CHANGES and (total := later.count()) > MAX_CHANGES:
        details["changes_total"] = total
    if base is not None:
        details |= _what_changed(base, entry, expected_version)
        if body is not None and body != entry.body:
            details |= _merged(base.body, entry.body, body)
        elif redo is not None:
            details |= _edit_on_top(base.body, entry.body, redo, edit or {})
        elif writes is not None:
            if both := sorted(writes & set(details.get("fields", {}))):
                details["both_changed"] = both  # the writer decides; the call goes back to it
            else:
                details["applies"] = True  # their change leaves the fields this one sets alone
            if update:
                details |= _echoed(update)
    return EntryConflict(
        entry_ref=entry.short_id,
        expected_version=expected_version,
        current_version=entry.version,
        **details,
    )


def _what_changed(base, entry: Entry, expected_version: int) -> dict:
    out: dict = {}
    if base.body != entry.body:
        lines = diffs.unified_diff(
            base.body.split("\n"),
            entry.body.split("\n"),
            fromfile=f"{entry.short_id}@v{expected_version}",
            tofile=f"{entry.short_id}@v{entry.version}",
        )
        diff = list(itertools.islice(lines, MAX_DIFF_LINES))
        if more := sum(1 for _ in lines):  # counted, not kept
            diff.append(f"… {more} more diff lines")
        out["diff"] = "\n".join(diff)
    was, now = _fields(base), _fields(entry)
    if changed := {f: {"was": was[f], "now": now[f]} for f in FIELDS if was[f] != now[f]}:
        out["fields"] = changed
    return out


def _fields(row) -> dict:
    # A revision's subtopic may be gone since (revisions keep the id without a constraint).
    subtopic = Subtopic.objects.filter(pk=row.subtopic_id).first() if row.subtopic_id else None
    project = Project.objects.filter(pk=row.project_id).values_list("slug", flat=True).first()
    place = f"{project}/{subtopic.path}" if subtopic else str(project)
    return {
        "title": row.title,
        "kind": row.kind,
        "tags": list(row.tags or []),
        "status": row.status,
        "place": place,
    }


def _change(row: dict) -> dict:
    return {
        "version": row["version"],
        "at": row["history_date"].isoformat(timespec="seconds"),
        "by": row["generated_by"] or row["history_user__username"] or "?",
        "reason": row["history_change_reason"] or "",
    }


def _merged(base: str, theirs: str, mine: str) -> dict:
    result = merges.merge(base, theirs, mine)
    if result.body is None:
        out = {"conflicts": result.conflicts[:MAX_CONFLICTS]}
        if len(result.conflicts) > MAX_CONFLICTS:
            out["conflicts_total"] = len(result.conflicts)
        if keep := _keep_both(result.conflicts, theirs):
            out["keep_both"] = keep
        return out
    out = {"merged_body": result.body}
    if len(result.mine) <= MAX_EDITS:  # each step searches the whole text: only a few
        base_lines = base.split("\n")
        edits = [merges.find_replace(base_lines, c, theirs) for c in result.mine]
        if edits and all(edits):
            out["edits"] = [{"find": f, "replace": r} for f, r in edits]
    return out


def _keep_both(conflicts: list[dict], theirs: str) -> list[dict]:
    """For lines both changed, the find/replace steps that add the writer's lines after theirs:
    the one change offered that loses no text, theirs or yours (deciding which stays is for
    the two writers). Only when there are few, short enough to send back (MAX_KEEP_BOTH_CHARS:
    a clash over a whole large body is not echoed twice more), each has text on both sides, and
    their text occurs once in the current body (so the step finds it)."""
    if len(conflicts) > MAX_EDITS:
        return []
    if sum(len(c["theirs"]) + len(c["mine"]) for c in conflicts) > MAX_KEEP_BOTH_CHARS:
        return []
    steps = []
    for c in conflicts:
        mine = c["mine"].strip("\n")
        if not c["theirs"].strip() or not mine.strip() or theirs.count(c["theirs"]) != 1:
            return []
        steps.append({"find": c["theirs"], "replace": f"{c['theirs']}\n{mine}"})
    return steps


def _echoed(update: dict) -> dict:
    """An update's values to send again, the shortest first while they fit MAX_UPDATE_ECHO in
    all; the rest are named (`update_left_out`): the caller still holds them, unchanged."""
    sizes = {name: len(json.dumps(value)) for name, value in update.items()}
    kept, room = [], MAX_UPDATE_ECHO
    for name in sorted(update, key=sizes.__getitem__):
        if sizes[name] <= room:
            kept.append(name)
            room -= sizes[name]
    out: dict = {"update": {name: value for name, value in update.items() if name in kept}}
    if left_out := [name for name in update if name not in kept]:
        out["update_left_out"] = left_out
    return out


def _edit_on_top(base: str, theirs: str, redo: Callable[[str], str], edit: dict) -> dict:
    """A partial edit made on the version it read, merged with theirs. An append or prepend
    touches no existing line: it applies wherever its place still is. Another edit applies when
    the same edit done on the current text gives that merge (their change does not touch its
    target). Both say `applies` (the write then goes on: stale_write); otherwise the merged
    body, or the clash."""
    try:
        mine = redo(base)
    except ValidationFailed:
        return {}  # it did not fit the version it named either: only what changed is known
    if edit.get("operation") in INSERTING:
        try:
            redo(theirs)
        except ValidationFailed:
            pass  # its section is gone: what is left is shown below
        else:
            return {"applies": True}
    result = _merged(base, theirs, mine)
    if "merged_body" in result:
        try:
            again = redo(theirs)
        except ValidationFailed:
            again = None
        if again == result["merged_body"]:
            return {"applies": True}
    return result
