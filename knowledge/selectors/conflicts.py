"""What a refused stale write needs to know: what changed since the version it read (who, when,
the changed lines and fields), and how to apply only its own change on top (a merged body, the
same write again when the other change does not touch what it changes, or the lines where both
changed the same text)."""

from __future__ import annotations

import json
from collections.abc import Callable

from knowledge import diffs, merges
from knowledge.actors import Actor
from knowledge.errors import EntryConflict, ValidationFailed
from knowledge.models import Entry, Project, Subtopic
from knowledge.selectors.access import visible_projects

MAX_DIFF_LINES = 200
MAX_EDITS = 3
MAX_UPDATE_ECHO = 300  # characters of an update's values (as JSON) sent back with its refusal
# The fields a conflict compares besides the body; "place" is the project and subtopic.
FIELDS = ("title", "kind", "tags", "status", "place")


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
    edit of a body (`edit`, the edit's own arguments, goes back in the answer to be sent again);
    `writes`, the fields (FIELDS) it sets without the body, and for an update `update`, what its
    caller passed (goes back in the answer, bounded, to be sent again). Revisions come from the
    projects the actor can see, so the answer shows nothing the actor could not read."""
    rows = entry.history.exclude(history_type="-").select_related("history_user")
    rows = rows.filter(project_id__in=visible_projects(actor).values("pk"))
    rows = list(rows.filter(version__gte=expected_version).order_by("history_id"))
    base = next((r for r in rows if r.version == expected_version), None)
    later = [r for r in rows if r.version > expected_version]
    details: dict = {"changes": [_change(r) for r in later]}
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
        diff = list(
            diffs.unified_diff(
                base.body.split("\n"),
                entry.body.split("\n"),
                fromfile=f"{entry.short_id}@v{expected_version}",
                tofile=f"{entry.short_id}@v{entry.version}",
            )
        )
        if len(diff) > MAX_DIFF_LINES:
            diff = [*diff[:MAX_DIFF_LINES], f"… {len(diff) - MAX_DIFF_LINES} more diff lines"]
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


def _change(row) -> dict:
    user = row.history_user.get_username() if row.history_user_id else ""
    return {
        "version": row.version,
        "at": row.history_date.isoformat(timespec="seconds"),
        "by": row.generated_by or user or "?",
        "reason": row.history_change_reason or "",
    }


def _merged(base: str, theirs: str, mine: str) -> dict:
    result = merges.merge(base, theirs, mine)
    if result.body is None:
        return {"conflicts": result.conflicts}
    out: dict = {"merged_body": result.body}
    base_lines = base.split("\n")
    edits = [merges.find_replace(base_lines, c, theirs) for c in result.mine]
    if edits and len(edits) <= MAX_EDITS and all(edits):
        out["edits"] = [{"find": f, "replace": r} for f, r in edits]
    return out


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
    """A partial edit made on the version it read, merged with theirs. When the same edit done
    on the current text gives that merge, their change does not touch its target: it applies as
    it is (`applies`, with `edit`, its arguments); otherwise the merged body, or the clash."""
    try:
        mine = redo(base)
    except ValidationFailed:
        return {}  # it did not fit the version it named either: only what changed is known
    result = _merged(base, theirs, mine)
    if "merged_body" in result:
        try:
            again = redo(theirs)
        except ValidationFailed:
            again = None
        if again == result["merged_body"]:
            return {"applies": True, "edit": edit}
    return result
