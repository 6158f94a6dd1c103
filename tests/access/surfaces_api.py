"""Leak-matrix columns for the REST API (over HTTP with a real token) and the MCP tools' bodies.

REST goes through Django's test client with `Authorization: Bearer`, so token auth, scope and
narrowing are part of each case. The MCP columns call the tool handlers with the actor a token
would give (the HTTP transport and its token check are covered in tests/mcp_api).
"""

from __future__ import annotations

import json

from mcp_api import tools
from tests.access.surfaces import surface, unchanged
from tests.access.world import SECRET_WORD, SLUG, SOURCE, World

API = "/api/v1"


def _refusal_is_silent(world: World, response, asked: str = "") -> None:
    body = response.content.decode().lower().replace(asked.lower(), "")  # echoing input is fine
    assert SECRET_WORD not in body, f"REST refusal leaks the entry: {body[:300]}"
    if not world.existence_known:
        assert response.status_code == 404, f"hidden project answered {response.status_code}"
        assert SLUG not in body, "a refusal names a hidden project"


def _read(world: World, response, asked: str = "") -> bool:
    if response.status_code == 200:
        return True
    assert response.status_code in (403, 404), response.status_code
    _refusal_is_silent(world, response, asked)
    return False


@surface("rest_entry_get", "read")
def _rest_entry_get(world: World) -> bool:
    response = world.rest_client.get(f"{API}/entries/{world.entry.short_id}")
    ok = _read(world, response)
    assert not ok or SECRET_WORD in response.content.decode().lower()
    return ok


@surface("rest_search", "read")
def _rest_search(world: World) -> bool:
    response = world.rest_client.get(f"{API}/search", {"q": SECRET_WORD, "mode": "text"})
    assert response.status_code == 200
    ids = [hit["short_id"] for hit in response.json()["results"]]
    if world.entry.short_id not in ids:
        assert SECRET_WORD not in response.content.decode().lower().replace(
            world.commons_entry.title.lower(), ""
        )
        return False
    return True


@surface("rest_history", "read")
def _rest_history(world: World) -> bool:
    response = world.rest_client.get(f"{API}/entries/{world.entry.short_id}/history")
    ok = _read(world, response)
    assert not ok or [r["version"] for r in response.json()] == [2, 1]
    return ok


@surface("rest_diff", "read")
def _rest_diff(world: World) -> bool:
    response = world.rest_client.get(
        f"{API}/entries/{world.entry.short_id}/diff", {"from_version": 1}
    )
    return _read(world, response)


@surface("rest_sources_check", "read")
def _rest_sources_check(world: World) -> bool:
    response = world.rest_client.post(
        f"{API}/sources/check",
        json.dumps({"project": SLUG, "sources": [SOURCE]}),
        content_type="application/json",
    )
    ok = _read(world, response, asked=SLUG)  # the answer may echo the slug it was asked for
    assert not ok or response.json()[0]["entries"] == [world.entry.short_id]
    return ok


@surface("rest_entry_patch", "write")
def _rest_entry_patch(world: World) -> bool:
    response = world.rest_client.patch(
        f"{API}/entries/{world.entry.short_id}",
        json.dumps({"body": "rewritten over REST"}),
        content_type="application/json",
    )
    if response.status_code == 200:
        return True
    assert response.status_code in (403, 404), response.content
    _refusal_is_silent(world, response)
    unchanged(world)
    return False


def _mcp(tool: str, world: World, asked: str = "", **kwargs) -> tuple[bool, str]:
    """Answer a tool call in this thread, as a call over MCP does (the connection recycling
    and the hop to a worker thread stay out, so the test's transaction stays open)."""
    result = tools.answer(tool, world.actor(), kwargs)
    text = " ".join(c.text for c in result.content) + json.dumps(
        result.structured_content or {}, default=str
    )
    if result.is_error:
        assert SECRET_WORD not in text.lower(), f"MCP refusal leaks the entry: {text[:300]}"
        if not world.existence_known:
            assert SLUG not in text.replace(asked, ""), "an MCP refusal names a hidden project"
    return not result.is_error, text


@surface("mcp_get", "read")
def _mcp_get(world: World) -> bool:
    ok, text = _mcp("get", world, id=world.entry.short_id, offset=0, max_chars=8000)
    assert not ok or SECRET_WORD in text.lower()
    return ok


@surface("mcp_search", "read")
def _mcp_search(world: World) -> bool:
    ok, text = _mcp(
        "search", world, query=SECRET_WORD, project=None, subtopic=None, kinds=None,
        tags=None, status=None, since=None, before=None, limit=10, include_history=False,
    )  # fmt: skip
    assert ok
    return world.entry.short_id in text


@surface("mcp_history", "read")
def _mcp_history(world: World) -> bool:
    ok, _ = _mcp("history", world, id=world.entry.short_id, limit=20)
    return ok


@surface("mcp_check_sources", "read")
def _mcp_check_sources(world: World) -> bool:
    ok, text = _mcp("check_sources", world, project=SLUG, sources=[SOURCE], asked=SLUG)
    assert not ok or world.entry.short_id in text
    return ok


@surface("mcp_edit", "write")
def _mcp_edit(world: World) -> bool:
    ok, _ = _mcp(
        "edit", world, id=world.entry.short_id, operation="append",
        content="appended by an agent", find=None, section=None, expected_count=None,
        expected_version=None, reason="matrix",
    )  # fmt: skip
    if not ok:
        unchanged(world)
    return ok
