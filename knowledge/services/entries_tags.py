"""Tag changes by difference: add some tags and remove others, keeping the rest, so a bulk
retag of many entries never overwrites tags another writer added meanwhile."""

from __future__ import annotations

from django.db import transaction

from knowledge.actors import Actor
from knowledge.errors import ValidationFailed
from knowledge.services import _kernel as k
from knowledge.services.fields import EntryFields
from knowledge.write_result import EntryBeforeWrite, WriteResult


@transaction.atomic(durable=True)
def entry_retag(
    *,
    actor: Actor,
    ref: int | str,
    add: list[str] | str | None = None,
    remove: list[str] | str | None = None,
    expected_version: int | None = None,
    reason: str = "",
) -> WriteResult:
    """Add `add` and remove `remove` (lists or comma-separated) from the entry's tags, as one
    revision; no revision (outcome "unchanged") when its tags already read so."""
    adding, removing = k.normalize_tags(add) or [], set(k.normalize_tags(remove) or [])
    if not adding and not removing:
        raise ValidationFailed("Name a tag to add or to remove.", field="tags")
    entry = k.lock_entry(actor, ref)
    # By difference: another writer's tags are kept, so a change of tags alone never clashes.
    # A stale one applies on the current version and says so (`rebased`).
    rebased = k.check_version(entry, expected_version, actor=actor, writes=frozenset())
    before = EntryBeforeWrite.of(entry)
    tags = [t for t in entry.tags if t not in removing]
    tags += [t for t in adding if t not in tags and t not in removing]
    if not k.apply_changes(entry, EntryFields(tags=tags)):
        return WriteResult(entry, "unchanged", rebased=rebased)
    saved = k.save_entry(entry, actor, reason or "tags changed")
    return WriteResult(entry, "updated", before, saved.facts, saved.schema, rebased=rebased)
