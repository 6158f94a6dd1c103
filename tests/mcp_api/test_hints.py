"""Error answers name each next move once, in MCP words, whether or not the core's message
already names tool calls (the core's messages are becoming neutral: both kinds are tested)."""

import re

import pytest

from knowledge.errors import NotFound, ValidationFailed
from mcp_api.tools import listings, reads, writes
from tests.mcp_api.conftest import text

pytestmark = pytest.mark.usefixtures("acme")


def _entry(call, **kw):
    res = call("upsert", project="acme", title="Pricing", body="price: 10", **kw)
    assert not res.is_error, text(res)
    return res.structured_content["entry"]


def _neutral(monkeypatch, module, name, exc):
    def raise_it(*args, **kwargs):
        raise exc

    monkeypatch.setattr(module, name, raise_it)


def test_unknown_project_offers_browse_and_create_project_once(call):
    answer = text(call("browse", project="nope"))
    assert answer.count("browse()") == 1
    assert answer.count("create_project(slug, name)") == 1


def test_unknown_project_with_a_neutral_message_gets_the_mcp_moves(call, monkeypatch):
    _neutral(monkeypatch, listings, "project_browse", NotFound("No project 'x'.", project="x"))
    res = call("browse", project="x")
    assert res.is_error and res.structured_content["error"]["code"] == "not_found"
    answer = text(res)
    assert answer.startswith("No project 'x'.")
    assert answer.count("browse()") == 1
    assert answer.count("create_project(slug, name)") == 1


def test_unknown_project_names_each_close_match_once(call):
    answer = text(call("upsert", project="acmee", title="T", body="b"))
    assert len(re.findall(r"\bacme\b", answer)) == 1  # "Did you mean acme?", no repeat


def test_unknown_entry_offers_search_browse_and_upsert_once(call):
    _entry(call)
    answer = text(call("get", id_or_path="acme/pricng"))
    for move in ("search(", "browse(project)", "upsert(", "Pricing"):
        assert answer.count(move) == 1, (move, answer)


def test_unknown_entry_with_a_neutral_message_gets_the_mcp_moves(call, monkeypatch):
    _entry(call)
    missing = NotFound(
        "No entry 'acme/pricng' that you can see.", entry="acme/pricng", suggestions=["Pricing"]
    )
    _neutral(monkeypatch, reads, "entry_get", missing)
    answer = text(call("get", id_or_path="acme/pricng"))
    assert answer.count('search("pricng")') == 1
    assert answer.count("search(") == 1
    assert answer.count("browse(project)") == 1
    assert answer.count('upsert(project=…, title="pricng", body=…)') == 1
    assert answer.count('"Pricing"') == 1


def test_unknown_short_id_is_not_offered_as_a_title(call):
    answer = text(call("history", id="zzzzzzzz"))
    assert answer.count("search(") == 1
    assert "upsert(" not in answer


def test_missing_find_text_points_to_get_once(call, monkeypatch):
    entry = _entry(call)
    args = {"id": entry["short_id"], "operation": "find_replace", "find": "nope", "content": "x"}
    assert text(call("edit", **args)).count("get(") == 1
    neutral = ValidationFailed("The text 'nope' does not occur in this entry.", field="find")
    _neutral(monkeypatch, writes, "entry_edit", neutral)
    answer = text(call("edit", **args))
    assert answer.count("get(id) shows the current text.") == 1
    assert answer.count("get(") == 1


def test_a_conflict_says_how_to_apply_only_this_change_once(call):
    entry = _entry(call)
    call("upsert", project="acme", title="Pricing", body="price: 12")
    answer = text(call("upsert", project="acme", title="Pricing", body="x", expected_version=1))
    assert "repeat your call" not in answer.lower()
    # The clash shows their current lines, so the one move is the edit of those lines.
    assert (
        answer.count(f'edit("{entry["short_id"]}", operation="find_replace", find="price: 12"') == 1
    )
    assert answer.count("edit(") == 1 and "get(" not in answer


def test_a_missing_version_points_to_history_once(call):
    entry = _entry(call)
    answer = text(call("diff", id=entry["short_id"], from_version=9))
    assert answer.count("history(") == 1
    assert "search(" not in answer
