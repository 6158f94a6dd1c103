"""Undelete: a deleted entry back as it was, under its own id, for as long as its revisions exist.

Writing its last text again would make a new entry (a new id: links and references to the old
one break, and its sources, kind and tags are lost); this puts the same row back from the
delete revision, which holds the last state, and the history goes on from there
(knowledge/services/_kernel/undelete.py).
"""

from __future__ import annotations

from django.db import transaction

from knowledge.actors import Actor
from knowledge.errors import ValidationFailed
from knowledge.selectors import (
    entry_lookup,
    entry_not_found,
    strip_memory_scheme,
    visible_entries,
    visible_projects,
)
from knowledge.selectors.deleted import deleted_entry
from knowledge.services import _kernel as k
from knowledge.write_result import WriteResult


@transaction.atomic(durable=True)
def entry_undelete(*, actor: Actor, ref: int | str, reason: str) -> WriteResult:
    """Bring the deleted entry `ref` names back with its id, short id, place, text, kind, tags,
    status and sources, as one new revision (one version up). Refused when it is not deleted,
    when its project is not writable, or when another entry has since taken its title there."""
    if not (reason or "").strip():
        raise ValidationFailed("Say why the entry comes back (reason).", field="reason")
    k.require_write(actor)
    text = strip_memory_scheme(str(ref).strip())
    if (alive := entry_lookup(visible_entries(actor), text)) is not None:
        raise ValidationFailed(
            f"Entry {alive.short_id} {alive.title!r} is not deleted; nothing to bring back.",
            entry=alive.short_id,
        )
    gone = deleted_entry(visible_projects(actor), text)
    if gone is None:
        raise entry_not_found(actor, ref)
    row = k.lock_delete_row(gone["id"])
    return k.restore_deleted(actor, row, reason=f"undelete: {reason.strip()}")
