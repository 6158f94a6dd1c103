"""build_context and get's links over MCP, through the official client over HTTP."""

import pytest

from tests.mcp_api.conftest import text

pytestmark = pytest.mark.usefixtures("acme")


def _write(call, title, body, subtopic=None):
    res = call("upsert", project="acme", title=title, body=body, subtopic=subtopic)
    assert not res.is_error, text(res)
    return res.structured_content["entry"]


def test_build_context_both_directions_with_observations(call):
    api = _write(call, "API", "- [decision] Use Postgres #db\n- depends on [[Storage]]")
    storage = _write(call, "Storage", "- [fact] lives on disk", subtopic="infra")
    client = _write(call, "Client", "- calls [[API]]")
    res = call("build_context", url="memory://acme/api", depth=2)
    assert not res.is_error, text(res)
    ctx = res.structured_content
    assert ctx["primary"][0]["observations"][0]["content"] == "Use Postgres"
    related = {r["short_id"]: r["relation"] for r in ctx["related"]}
    assert related[storage["short_id"]]["direction"] == "outgoing"
    assert related[client["short_id"]] == {
        "type": "calls",
        "direction": "incoming",
        "distance": 1,
        "via": api["short_id"],
        "via_title": "API",
    }
    assert "[decision] Use Postgres #db" in text(res)
    assert "lives on disk" in text(res)


def test_get_lists_links_and_backlinks(call):
    api = _write(call, "API", "- uses [[Storage]]\n- uses [[Later]]")
    storage = _write(call, "Storage", "")
    got = call("get", id_or_path=f"memory://acme/{api['title'].lower()}")
    assert not got.is_error, text(got)
    assert f"uses → {storage['short_id']} 'Storage'" in text(got)
    assert "uses → [[Later]] (not found)" in text(got)
    back = call("get", id_or_path=storage["short_id"])
    assert f"Backlinks: uses ← {api['short_id']} 'API'" in text(back)


def test_build_context_not_found_gives_next_moves(call):
    res = call("build_context", url="memory://acme/nothing-here")
    assert res.is_error
    assert 'search("nothing here")' in text(res)
    assert "recent()" in text(res) and "upsert(" in text(res)


def test_build_context_bad_depth_is_refused(call):
    res = call("build_context", url="anything", depth=9)
    assert res.is_error


def test_search_by_category(call):
    _write(call, "Pricing decision", "- [decision] pricing goes up")
    _write(call, "Pricing idea", "- [idea] pricing tiers")
    res = call("search", query="pricing", category="decision")
    assert [h["title"] for h in res.structured_content["results"]] == ["Pricing decision"]
