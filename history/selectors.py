"""Reads of revision history, scoped like every read: through knowledge.selectors.entry_get."""

from __future__ import annotations

import difflib

from history.files import render_entry
from history.mirror import HistoricalEntry, _Names, sources_by_entry, state_of
from knowledge.actors import Actor
from knowledge.errors import NotFound
from knowledge.selectors import entry_get

_ACTIONS = {"+": "created", "~": "changed", "-": "deleted"}


def revisions(entry) -> list:
    """Every revision of an entry (no scoping: callers pass an entry they were allowed to get)."""
    return list(
        HistoricalEntry.objects.filter(id=entry.pk)
        .select_related("history_user")
        .order_by("-history_id")
    )


def revision_summary(row) -> dict:
    user = row.history_user
    return {
        "revision": row.history_id,
        "version": row.version,
        "action": _ACTIONS.get(row.history_type, row.history_type),
        "at": row.history_date,
        "user": user.get_username() if user else None,
        "generated_by": row.generated_by,
        "reason": row.history_change_reason or "",
        "title": row.title,
        "git_commit": row.git_commit or None,  # None: the mirror has not committed it yet
    }


def entry_history(actor: Actor, ref: str | int, *, limit: int = 50) -> list[dict]:
    """The revisions of an entry the actor can see, newest first, with who/when/why/commit."""
    entry = entry_get(actor, ref)
    rows = (
        HistoricalEntry.objects.filter(id=entry.pk)
        .select_related("history_user")
        .order_by("-history_id")[: max(1, min(limit, 500))]
    )
    return [revision_summary(r) for r in rows]


def revision_for(entry, version: int):
    row = (
        HistoricalEntry.objects.filter(id=entry.pk, version=version)
        .exclude(history_type="-")
        .order_by("-history_id")
        .first()
    )
    if row is None:
        latest = entry.version
        raise NotFound(
            f"Entry {entry.short_id} has no version {version}; its versions run from 1 to "
            f"{latest}. See history({entry.short_id}).",
            entry=entry.short_id,
            version=version,
        )
    return row


def revision_text(row) -> str:
    """A revision as the Markdown file the mirror holds for it (frontmatter + body)."""
    names = _Names()
    return render_entry(state_of(row, names, sources_by_entry([row.id]))).decode()


def unified_diff(old: str, new: str, *, old_label: str, new_label: str, context: int = 3) -> str:
    lines = difflib.unified_diff(
        old.splitlines(),
        new.splitlines(),
        fromfile=old_label,
        tofile=new_label,
        n=context,
        lineterm="",
    )
    return "\n".join(lines)


def side_by_side_html(old: str, new: str, *, old_label: str, new_label: str) -> str:
    """An HTML table (difflib.HtmlDiff) with only the changed regions and some context."""
    return difflib.HtmlDiff(wrapcolumn=80).make_table(
        old.splitlines(), new.splitlines(), old_label, new_label, context=True, numlines=3
    )


def entry_diff(
    actor: Actor,
    ref: str | int,
    *,
    from_version: int,
    to_version: int | None = None,
    context: int = 3,
) -> str:
    """A compact unified diff between two versions (to_version defaults to the current one).

    Empty string when the two versions render the same.
    """
    entry = entry_get(actor, ref)
    to_version = to_version or entry.version
    old = revision_text(revision_for(entry, from_version))
    new = revision_text(revision_for(entry, to_version))
    return unified_diff(
        old,
        new,
        old_label=f"{entry.short_id}@v{from_version}",
        new_label=f"{entry.short_id}@v{to_version}",
        context=context,
    )


__all__ = [
    "entry_diff",
    "entry_get",
    "entry_history",
    "revision_for",
    "revision_summary",
    "revision_text",
    "revisions",
    "side_by_side_html",
    "unified_diff",
]
