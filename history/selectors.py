"""Reads of revision history, scoped like every read: through knowledge.selectors.entry_get."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from html import escape

from django.conf import settings
from django.db.models.functions import TruncDate
from django.utils import timezone

from history.mirror.queue import parked, pending
from history.mirror.render import Names, sources_by_entry, state_of
from history.models import BacklogSnapshot
from knowledge import diffs
from knowledge.actors import Actor
from knowledge.models import Entry, EntryStatus, HistoricalEntry
from knowledge.reads.write_reports import fields_changed, metadata_line
from knowledge.rendering import too_large
from knowledge.selectors import (
    entry_get,
    entry_revision,
    entry_revisions,
    revisions_of,
    visible_entries,
    visible_projects,
)
from knowledge.selectors.supersession import LINKS, UNSEEN, unseen_links

_ACTIONS = {"+": "created", "~": "changed", "-": "deleted"}


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


def entry_history(
    actor: Actor, entry: Entry, *, limit: int = 50, corrections: bool = False
) -> list[dict]:
    """The revisions of an entry (found with entry_get) the actor can see, newest first, with
    who/when/why/commit. With `corrections`, the revisions of the entries it corrected and of
    those that corrected it (that the actor can see) are in the list too, each row naming its
    `entry` and, for another entry's, how it is linked (`correction`)."""
    chain = correction_chain(actor, entry) if corrections else []
    how = {other.pk: (other.short_id, link) for other, link in chain}
    how[entry.pk] = (entry.short_id, None)
    return [
        {**revision_summary(row), "entry": how[row.id][0], "correction": how[row.id][1]}
        for row in revisions_of(actor, [entry, *(other for other, _ in chain)], limit=limit)
    ]


def correction_chain(actor: Actor, entry: Entry, *, depth: int = 20) -> list[tuple[Entry, str]]:
    """The entries a chain of corrections links to `entry`, both ways, as far as the actor can
    see them: ("corrected", an older entry this one replaced, directly or through others) or
    ("corrected by", a newer one)."""
    found: list[tuple[Entry, str]] = []
    seen = {entry.pk}
    for field, how in (("supersedes", "corrected"), ("superseded_by", "corrected by")):
        pk = getattr(entry, f"{field}_id")
        while pk and pk not in seen and len(found) < depth:
            other = visible_entries(actor).filter(pk=pk).first()
            if other is None:
                break
            seen.add(pk)
            found.append((other, how))
            pk = getattr(other, f"{field}_id")
    return found


def correction_diff(
    actor: Actor, entry: Entry, *, to_version: int | None = None, context: int = 3
) -> dict | None:
    """What a correcting entry changed: the entry it corrected, as it read before it was marked
    superseded, against `entry` at `to_version` (default the current one). None when `entry`
    corrects nothing the actor can see."""
    if not entry.supersedes_id:
        return None
    old = visible_entries(actor).filter(pk=entry.supersedes_id).first()
    if old is None:
        return None
    rows = old.history.filter(project_id__in=visible_projects(actor).values("pk"))
    rows = rows.exclude(history_type="-").order_by("-history_id")
    before = rows.exclude(status=EntryStatus.SUPERSEDED).first() or rows.first()
    if before is None:
        return None
    to_version = to_version or entry.version
    new = entry_revision(actor, entry, to_version)
    body = unified_diff(
        before.body,
        new.body,
        old_label=f"{old.short_id}@v{before.version}",
        new_label=f"{entry.short_id}@v{to_version}",
        context=context,
    )
    meta = metadata_line(fields_changed(before, new))
    return {
        "from_entry": old.short_id,
        "from_version": before.version,
        "to_version": to_version,
        "diff": "\n".join(part for part in (body, meta) if part),
    }


def revision_text(row, actor: Actor) -> str:
    """A revision as the Markdown file the mirror holds for it (frontmatter + body), shown to
    `actor`: a supersession link to an entry it may not see reads as "an entry you cannot see"
    instead of that entry's short id."""
    state = state_of(row, Names(), sources_by_entry([row.id]))
    unseen = unseen_links(actor, [row])
    hidden = {link: UNSEEN for link in LINKS if getattr(row, f"{link}_id") in unseen}
    return replace(state, **hidden).render().decode()


def unified_diff(old: str, new: str, *, old_label: str, new_label: str, context: int = 3) -> str:
    lines = diffs.unified_diff(
        old.splitlines(), new.splitlines(), fromfile=old_label, tofile=new_label, n=context
    )
    return "\n".join(lines)


def side_by_side_html(old: str, new: str, *, old_label: str, new_label: str) -> str | None:
    """An HTML table of the changed regions with 3 lines of context, old left and new right,
    in the classes difflib.HtmlDiff uses (diff_header, diff_add, diff_chg, diff_sub); None past
    the rendering bounds (then show the unified diff).

    Built from knowledge.diffs' opcodes, not HtmlDiff: HtmlDiff runs ndiff, which compares lines
    character by character and did not finish in 30 s on 1,000 repeated lines replaced by
    others. Here a replaced block pairs its lines in order and marks what lies between their
    common start and end, so the work is linear in the text."""
    a, b = old.splitlines(), new.splitlines()
    if too_large(old) or too_large(new):
        return None
    head = f'<th colspan="2" class="diff_header">{escape(old_label)}</th>'
    head += f'<th colspan="2" class="diff_header">{escape(new_label)}</th>'
    parts = [f'<table class="diff"><thead><tr>{head}</tr></thead>']
    for group in diffs.grouped_opcodes(a, b, 3):
        parts.append("<tbody>")
        for tag, i1, i2, j1, j2 in group:
            for k in range(max(i2 - i1, j2 - j1)):
                i, j = i1 + k, j1 + k
                left = a[i] if i < i2 else None
                right = b[j] if j < j2 else None
                plain = tag == "equal"
                cells = (escape(left), escape(right)) if plain else _marked(left, right)
                parts.append(
                    "<tr>"
                    + _cell(i + 1 if left is not None else None, cells[0])
                    + _cell(j + 1 if right is not None else None, cells[1])
                    + "</tr>"
                )
        parts.append("</tbody>")
    parts.append("</table>")
    return "\n".join(parts)


def _cell(number: int | None, html: str) -> str:
    return f'<td class="diff_header">{number or ""}</td><td>{html}</td>'


def _marked(left: str | None, right: str | None) -> tuple[str, str]:
    """A changed pair of lines as HTML: what differs between their common start and end in
    diff_chg; a line with nothing in common with the other (or no other) in diff_sub/diff_add."""
    if left is None or right is None:
        return (
            "" if left is None else _span("diff_sub", left),
            "" if right is None else _span("diff_add", right),
        )
    start = 0
    while start < min(len(left), len(right)) and left[start] == right[start]:
        start += 1
    end = 0
    while end < min(len(left), len(right)) - start and left[-1 - end] == right[-1 - end]:
        end += 1
    if not start and not end:
        return _span("diff_sub", left), _span("diff_add", right)
    return tuple(
        escape(line[:start])
        + _span("diff_chg", line[start : len(line) - end])
        + escape(line[len(line) - end :])
        for line in (left, right)
    )


def _span(cls: str, text: str) -> str:
    return f'<span class="{cls}">{escape(text)}</span>' if text else ""


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
    old = entry_revision(actor, entry, from_version)
    new = entry_revision(actor, entry, to_version)
    body = unified_diff(
        old.body,
        new.body,
        old_label=f"{entry.short_id}@v{from_version}",
        new_label=f"{entry.short_id}@v{to_version}",
        context=context,
    )
    return "\n".join(part for part in (body, metadata_line(fields_changed(old, new))) if part)


__all__ = [
    "correction_chain",
    "correction_diff",
    "entry_diff",
    "entry_get",
    "entry_history",
    "entry_revisions",
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


def backlogs_by_day(actor: Actor, *, since: dt.date) -> dict[dt.date, dict]:
    """Each day's last backlog snapshot from `since` (a date) on, as {day: values}, with the
    open items summed over the projects this actor may see (one query for the snapshots, at
    most one row a day, and one for the projects when there are rows)."""
    rows = list(
        BacklogSnapshot.objects.filter(taken_at__date__gte=since)
        .annotate(day=TruncDate("taken_at"))
        .order_by("day", "-taken_at")
        .distinct("day")
    )
    seen = {str(pk) for pk in visible_projects(actor).values_list("pk", flat=True)} if rows else ()
    days = {
        row.day: {
            "open": sum(n for pk, n in row.open_by_project.items() if pk in seen),
            "embedding": row.embedding_backlog,
            "pending": row.mirror_pending,
            "lag": row.mirror_lag_seconds,
            "parked": row.parked,
        }
        for row in rows
    }
    return days
