"""Access columns for bringing a deleted entry back (issue 37): only an editor of the project it
was in may, and a refusal says nothing of it to whom may not read there."""

from __future__ import annotations

from knowledge.actors import Actor
from knowledge.models import Entry
from knowledge.services import EntryFields, entry_delete, entry_undelete, entry_upsert
from tests.access.surfaces import refused, surface
from tests.access.world import SECRET_WORD, SLUG, World


def _deleted_in_target(world: World) -> str:
    root = Actor.for_user(world.users["superuser"])
    gone = entry_upsert(
        actor=root,
        project=SLUG,
        fields=EntryFields(title=f"Deleted {SECRET_WORD}", body=f"The {SECRET_WORD} plan."),
        sources=[{"kind": "ticket", "external_id": "SEC-1"}],
    ).entry
    entry_delete(actor=root, ref=gone.pk, reason="gone")
    return gone.short_id


@surface("entry_undelete", "write", prepare=_deleted_in_target)
def _entry_undelete(world: World) -> bool:
    short_id = world.prepared
    ok = refused(world, lambda: entry_undelete(actor=world.actor(), ref=short_id, reason="back"))
    assert Entry.objects.filter(short_id=short_id).exists() == ok
    return ok
