"""Entry writes for agents: partial edits, corrections that keep the wrong version, verification.

Like every entry write they compose the kernel's steps, so each is locked, validated, versioned
and recorded the same way.
"""

from __future__ import annotations

from dataclasses import replace

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from knowledge.actors import Actor
from knowledge.errors import Forbidden, ValidationFailed
from knowledge.markdown import is_fence, is_list_item, parse_heading
from knowledge.models import Entry, EntryStatus
from knowledge.services import _kernel as k
from knowledge.services.fields import EntryFields
from knowledge.write_result import EntryBeforeWrite, WriteResult

EDIT_OPERATIONS = ("append", "prepend", "find_replace", "replace_section")


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(line index, level, text) of each Markdown heading outside code fences."""
    found, fenced = [], False
    for i, line in enumerate(lines):
        if is_fence(line):
            fenced = not fenced
        elif not fenced and (heading := parse_heading(line)):
            found.append((i, *heading))
    return found


def _section_span(lines: list[str], section: str) -> tuple[int, int]:
    """(heading line index, index past the section's last line) of the heading named `section`:
    its body runs to the next heading of the same or a higher level."""
    wanted = section.strip().lstrip("#").strip().lower()
    headings = _headings(lines)
    match = next(((i, lvl) for i, lvl, text in headings if text.lower() == wanted), None)
    if match is None:
        names = ", ".join(repr(text) for _, _, text in headings) or "none"
        raise ValidationFailed(
            f"No heading {section!r} in this entry. Its headings: {names}. "
            "Pass one of them as section, or append a new section instead.",
            field="section",
        )
    start, level = match
    end = next((i for i, lvl, _ in headings if i > start and lvl <= level), len(lines))
    return start, end


def _replace_section(body: str, section: str, content: str) -> str:
    lines = body.split("\n")
    start, end = _section_span(lines, section)
    replacement = content.strip("\n").split("\n")
    if replacement and parse_heading(replacement[0]):
        replacement = replacement[1:]  # the caller resent the heading: keep the original
    tail = lines[end:]
    gap = [""] if replacement else []
    return "\n".join([*lines[: start + 1], *gap, *replacement, *([""] if tail else []), *tail])


def _gap(first: list[str], then: list[str]) -> list[str]:
    """The blank line between two runs of lines, none where they continue one list (a blank
    line would split it in two) or where either is empty."""
    if not first or not then:
        return []
    if is_list_item(then[0]) and (is_list_item(first[-1]) or first[-1][:1] in (" ", "\t")):
        return []
    return [""]


def _add_to_section(body: str, section: str, content: str, *, at_end: bool) -> str:
    """Content at the end of a section (before the next heading) or right under its heading."""
    lines = body.split("\n")
    start, end = _section_span(lines, section)
    inside = lines[start + 1 : end]
    while inside and not inside[-1].strip():
        inside.pop()
    while inside and not inside[0].strip():
        inside.pop(0)
    added = content.strip("\n").split("\n")
    parts = (
        [*inside, *_gap(inside, added), *added]
        if at_end
        else [*added, *_gap(added, inside), *inside]
    )
    head = [*lines[: start + 1], "", *parts]
    if tail := lines[end:]:
        return "\n".join([*head, "", *tail])
    return "\n".join(head) + ("\n" if body.endswith("\n") else "")


def apply_edit(
    body: str,
    *,
    operation: str,
    content: str,
    find: str | None = None,
    section: str | None = None,
    expected_count: int | None = None,
) -> str:
    """The new body after one edit operation (pure: no database). The content and the result
    are bounded by the body limit before any text is built."""
    k.check_body_size(content, "content")
    if operation in ("append", "prepend") and section:
        return _add_to_section(body, section, content, at_end=operation == "append")
    if not body.strip() and operation in ("append", "prepend"):
        return content
    if operation == "append":
        before, added = body.rstrip().split("\n"), content.strip("\n").split("\n")
        return "\n".join([*before, *_gap(before, added), *added]) + "\n"
    if operation == "prepend":
        added, after = content.strip("\n").split("\n"), body.lstrip().split("\n")
        return "\n".join([*added, *_gap(added, after), *after])
    if operation == "find_replace":
        if not find:
            raise ValidationFailed(
                "find_replace needs find (the exact text to replace).", field="find"
            )
        count = body.count(find)
        wanted = 1 if expected_count is None else expected_count
        if count == 0:
            raise ValidationFailed(
                f"The text {find[:80]!r} does not occur in this entry. Read the entry again "
                "and copy the exact text (whitespace included).",
                field="find",
            )
        if count != wanted:
            raise ValidationFailed(
                f"The text {find[:80]!r} occurs {count} times, expected {wanted}. Pass "
                f"expected_count={count} to replace them all, or a longer find to pick one.",
                field="expected_count",
                count=count,
            )
        limit = settings.CAIRN_MAX_BODY_BYTES
        if len(body) + count * (len(content) - len(find)) > limit:  # refuse before building it
            raise ValidationFailed(
                f"Replacing {count} occurrences would make the body longer than the limit of "
                f"{limit:,} bytes; replace fewer or shorter.",
                field="content",
                limit=limit,
            )
        return body.replace(find, content)
    if operation == "replace_section":
        if not section:
            raise ValidationFailed(
                "replace_section needs section (a heading of the entry, e.g. 'Next steps').",
                field="section",
            )
        return _replace_section(body, section, content)
    raise ValidationFailed(
        f"Unknown operation {operation!r}; use one of {', '.join(EDIT_OPERATIONS)}.",
        field="operation",
    )


@transaction.atomic(durable=True)
def entry_edit(
    *,
    actor: Actor,
    ref: int | str,
    operation: str,
    content: str,
    find: str | None = None,
    section: str | None = None,
    expected_count: int | None = None,
    expected_version: int | None = None,
    reason: str = "",
) -> WriteResult:
    """Change part of an entry's body (append, prepend, find_replace, replace_section).
    Outcome "unchanged" (no new revision) when the body would read the same. A stale
    expected_version is no refusal when the edit touches no line changed since (`rebased`)."""
    entry = k.lock_entry(actor, ref)
    edit = {
        "operation": operation,
        "content": content or "",
        "find": find,
        "section": section,
        "expected_count": expected_count,
    }
    # A stale edit that touches no line the other writer changed is made on the current text.
    rebased = k.check_version(
        entry,
        expected_version,
        actor=actor,
        redo=lambda text: apply_edit(text, **edit),
        edit={key: value for key, value in edit.items() if value is not None},
    )
    before = EntryBeforeWrite.of(entry)
    body = apply_edit(entry.body, **edit)
    if not k.apply_changes(entry, EntryFields(body=body)):
        return WriteResult(entry, "unchanged", rebased=rebased)
    saved = k.save_entry(entry, actor, reason or f"edit: {operation}", previous_body=before.body)
    return WriteResult(entry, "updated", before, saved.facts, saved.schema, rebased=rebased)


@transaction.atomic(durable=True)
def entry_correct(
    *,
    actor: Actor,
    ref: int | str,
    body: str,
    reason: str,
    title: str | None = None,
    expected_version: int | None = None,
) -> WriteResult:
    """Record that an entry was wrong: a new entry supersedes it and both are kept.

    The new entry takes over the title (so upserts by title reach it); the old one is renamed
    `<title> (superseded <short id>)` and marked superseded. Returns the new entry, outcome
    "corrected", with the old one as `superseded` and as it was found as `before` (its body and
    title before the correction: what the write's report compares with).
    """
    if not (reason or "").strip():
        raise ValidationFailed("Say what was wrong (reason).", field="reason")
    if not (body or "").strip():
        raise ValidationFailed("A correction needs the corrected body.", field="body")
    old = k.lock_entry(actor, ref)
    k.check_version(old, expected_version, actor=actor, body=body)
    before = EntryBeforeWrite.of(old)
    if old.status == EntryStatus.SUPERSEDED:
        raise ValidationFailed(
            f"Entry {old.short_id} is already superseded"
            + (f" by entry {old.superseded_by_id}" if old.superseded_by_id else "")
            + ". Correct the newer entry instead.",
            field="id",
        )
    # Taken before the old entry is marked superseded: the new one keeps its status.
    fields = replace(
        EntryFields.from_revision(old), title=k.normalize_title(title or old.title), body=body
    )
    old.title = f"{old.title} (superseded {old.short_id})"[:300]
    old.status = EntryStatus.SUPERSEDED
    k.save_entry(old, actor, f"superseded: {reason}", authored=False)

    new = k.new_entry(
        actor, project=old.project, subtopic=old.subtopic, fields=fields, supersedes=old
    )
    saved = k.save_entry(new, actor, f"correction: {reason}")
    new.sources.set(old.sources.all())
    # The link back is derived from the new entry's revision: no third revision for it.
    old.superseded_by = new
    Entry.objects.filter(pk=old.pk).update(superseded_by=new)
    return WriteResult(new, "corrected", before, saved.facts, saved.schema, superseded=old)


@transaction.atomic(durable=True)
def entry_verify(
    *, actor: Actor, ref: int | str, expected_version: int | None = None, reason: str = ""
) -> WriteResult:
    """Record that a person confirmed the entry (verified_by = the acting user).

    Only a person signed in (web page, admin) may verify: an actor acting through an API token
    is refused, so no agent can claim that a human checked an entry."""
    if actor.token_id is not None:
        raise Forbidden(
            "Only a person can verify an entry, not an API token: open the entry in the "
            "browser, signed in, and verify it there.",
            entry=str(ref),
            reason="person_only",
        )
    entry = k.lock_entry(actor, ref)
    # A person confirmed the version they read: a later one is shown to be read, never "applies".
    k.check_version(entry, expected_version, actor=actor)
    before = EntryBeforeWrite.of(entry)
    entry.verified_by, entry.verified_at = actor.db_user, timezone.now()
    # A confirmation is a revision, not a new version of the text.
    saved = k.save_entry(entry, actor, reason or "verified", authored=False, new_version=False)
    return WriteResult(entry, "updated", before, saved.facts)


__all__ = ["EDIT_OPERATIONS", "apply_edit", "entry_correct", "entry_edit", "entry_verify"]
