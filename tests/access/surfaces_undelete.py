"""Access columns for bringing a deleted entry back (issue 37): only an editor of the project it
was in may, and a refusal says nothing of it to whom may not read there."""

from __future__ import annotations

import json

from knowledge.actors import Actor
from knowledge.models import Entry
from knowledge.services import EntryFields, entry_delete, entry_undelete, entry_upsert
from tests.access.surfaces import refused, surface
from tests.access.surfaces_api import API, _mcp, _refusal_is_silent
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


@surface("rest_entry_undelete", "write", prepare=_deleted_in_target)
def _rest_entry_undelete(world: World) -> bool:
    short_id = world.prepared
    response = world.rest_client.post(
        f"{API}/entries/{short_id}/undelete",
        json.dumps({"reason": "back over REST"}),
        content_type="application/json",
    )
    ok = response.status_code == 200
    if not ok:
        assert response.status_code in (403, 404), response.content
        _refusal_is_silent(world, response)
        if not world.allowed("read"):  # the same answer as for an id that never existed
            never = world.rest_client.post(
                f"{API}/entries/zzzzzzzz/undelete",
                json.dumps({"reason": "back over REST"}),
                content_type="application/json",
            )
            assert response.status_code == never.status_code == 404
            assert _detail(response, short_id) == _detail(never, "zzzzzzzz")
            read = world.rest_client.get(f"{API}/entries/{short_id}")
            read_never = world.rest_client.get(f"{API}/entries/zzzzzzzz")
            assert _detail(read, short_id) == _detail(read_never, "zzzzzzzz")
    assert Entry.objects.filter(short_id=short_id).exists() == ok
    return ok


@surface("mcp_delete_undo", "write", prepare=_deleted_in_target)
def _mcp_delete_undo(world: World) -> bool:
    short_id = world.prepared
    ok, text = _mcp("delete", world, id=short_id, reason="back over MCP", undo=True)
    if not ok and not world.allowed("read"):
        _, never = _mcp("delete", world, id="zzzzzzzz", reason="back over MCP", undo=True)
        assert text.replace(short_id, "X") == never.replace("zzzzzzzz", "X")
        # Nor does reading it say that it was deleted, or how to bring it back.
        _, read = _mcp("get", world, id=short_id, offset=0, max_chars=8000)
        _, read_never = _mcp("get", world, id="zzzzzzzz", offset=0, max_chars=8000)
        assert read.replace(short_id, "X") == read_never.replace("zzzzzzzz", "X")
    assert Entry.objects.filter(short_id=short_id).exists() == ok
    return ok


def _detail(response, ref: str) -> str:
    return response.json()["detail"].replace(ref, "X")
