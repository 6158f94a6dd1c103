"""Reads of revision history, scoped like every read: through knowledge.selectors.entry_get."""

from __future__ import annotations

import difflib
from dataclasses import replace

from django.conf import settings
from django.utils import timezone

from history.files import render_entry
from history.mirror.render import Names, sources_by_entry, state_of
from history.mirror.repo import HistoricalEntry, parked, pending
from knowledge import diffs
from knowledge.actors import Actor
from knowledge.models import Entry
from knowledge.rendering import too_large
from knowledge.selectors import entry_get, entry_revisions
from knowledge.selectors import entry_revision as revision_for
from knowledge.selectors.supersession import LINKS, UNSEEN, unseen_links
from knowledge.selectors.write_reports import fields_changed, metadata_line

_ACTIONS = {"+": "created", "~": "changed", "-": "deleted"}
# HtmlDiff compares every line of a rewritten block with every other, character by character:
# 200 rewritten lines of 25 characters took 4 s, 800 took a minute or more. Past this much work
# (characters removed times characters added, per block) the unified diff is shown instead.
SIDE_BY_SIDE_MAX_WORK = 2_000_000


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


def entry_history(actor: Actor, entry: Entry, *, limit: int = 50) -> list[dict]:
    """The revisions of an entry (found with entry_get) the actor can see, newest first, with
    who/when/why/commit."""
    rows = entry_revisions(actor, entry, limit=max(1, min(limit, 500)))
    return [revision_summary(r) for r in rows]


def revision_text(row, actor: Actor) -> str:
    """A revision as the Markdown file the mirror holds for it (frontmatter + body), shown to
    `actor`: a supersession link to an entry it may not see reads as "an entry you cannot see"
    instead of that entry's short id."""
    state = state_of(row, Names(), sources_by_entry([row.id]))
    unseen = unseen_links(actor, [row])
    hidden = {link: UNSEEN for link in LINKS if getattr(row, f"{link}_id") in unseen}
    return render_entry(replace(state, **hidden)).decode()


def unified_diff(old: str, new: str, *, old_label: str, new_label: str, context: int = 3) -> str:
    lines = diffs.unified_diff(
        old.splitlines(), new.splitlines(), fromfile=old_label, tofile=new_label, n=context
    )
    return "\n".join(lines)


def side_by_side_html(old: str, new: str, *, old_label: str, new_label: str) -> str | None:
    """An HTML table (difflib.HtmlDiff) with only the changed regions and some context; None
    when that would take too long (then show the unified diff, which stays fast)."""
    a, b = old.splitlines(), new.splitlines()
    if too_large(old) or too_large(new) or _rewrite_work(a, b) > SIDE_BY_SIDE_MAX_WORK:
        return None
    return difflib.HtmlDiff(wrapcolumn=80).make_table(
        a, b, old_label, new_label, context=True, numlines=3
    )


def _rewrite_work(a: list[str], b: list[str]) -> int:
    return sum(
        sum(map(len, a[i1:i2])) * sum(map(len, b[j1:j2]))
        for tag, i1, i2, j1, j2 in diffs.line_opcodes(a, b)
        if tag == "replace"
    )


def entry_diff(
    actor: Actor,
    entry: Entry,
    *,
    from_version: int,
    to_version: int | None = None,
    context: int = 3,
) -> str:
    """A compact unified diff of the body between two versions (to_version defaults to the
    current one), then the metadata that changed on one line (`Metadata: status a → b; …`);
    what changes with every revision (version, updated, who) is left out.

    Empty string when the two versions read the same.
    """
    to_version = to_version or entry.version
    old = revision_for(actor, entry, from_version)
    new = revision_for(actor, entry, to_version)
    body = unified_diff(
        old.body,
        new.body,
        old_label=f"{entry.short_id}@v{from_version}",
        new_label=f"{entry.short_id}@v{to_version}",
        context=context,
    )
    return "\n".join(part for part in (body, metadata_line(fields_changed(old, new))) if part)


__all__ = [
    "entry_diff",
    "entry_get",
    "entry_history",
    "entry_revisions",
    "revision_for",
    "revision_summary",
    "revision_text",
    "side_by_side_html",
    "unified_diff",
]


def mirror_state() -> dict:
    """The mirror's backlog for operators (readiness and metrics): counts only, no names."""
    queue = pending()
    oldest = queue.order_by("history_id").values_list("history_date", flat=True).first()
    lag = (timezone.now() - oldest).total_seconds() if oldest else 0.0
    stale_before = timezone.now() - timezone.timedelta(seconds=settings.CAIRN_READY_MIRROR_MAX_LAG)
    return {
        "pending": queue.count(),
        "lag_seconds": round(lag, 1),
        # Set aside with their error (mirror status / mirror retry), and pending too long.
        "parked": parked().count(),
        "stale": queue.filter(history_date__lt=stale_before).count() if oldest else 0,
    }


def revision_count() -> int:
    return HistoricalEntry.objects.count()
