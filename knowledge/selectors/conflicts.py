"""What a refused stale write needs to know: what changed since the version it read (who, when,
the changed lines), and how to apply only its own change on top (a merged body, or the lines
where both changed the same text)."""

from __future__ import annotations

from knowledge import diffs, merges
from knowledge.actors import Actor
from knowledge.errors import EntryConflict
from knowledge.models import Entry
from knowledge.selectors.access import visible_projects

MAX_DIFF_LINES = 200
MAX_EDITS = 3


def entry_conflict(
    entry: Entry, expected_version: int, *, actor: Actor | None = None, body: str | None = None
) -> EntryConflict:
    """The refusal of a write that read `expected_version` of `entry` (locked, now further on).
    `body` is the whole body the writer sent, if it sent one; revisions come from the projects
    the actor can see (without an actor: the entry's own project)."""
    rows = entry.history.exclude(history_type="-").select_related("history_user")
    if actor is not None:
        rows = rows.filter(project_id__in=visible_projects(actor).values("pk"))
    else:
        rows = rows.filter(project_id=entry.project_id)
    rows = list(rows.filter(version__gte=expected_version).order_by("history_id"))
    base = next((r for r in rows if r.version == expected_version), None)
    later = [r for r in rows if r.version > expected_version]
    details: dict = {"changes": [_change(r) for r in later]}
    if base is None:
        return EntryConflict(
            entry_ref=entry.short_id,
            expected_version=expected_version,
            current_version=entry.version,
            **details,
        )
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
    details["diff"] = "\n".join(diff)
    if body is not None and body != entry.body:
        details = {**details, **_merged(base.body, entry.body, body)}
    return EntryConflict(
        entry_ref=entry.short_id,
        expected_version=expected_version,
        current_version=entry.version,
        **details,
    )


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
