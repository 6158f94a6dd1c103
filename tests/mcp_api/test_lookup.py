"""Search and lookup over the real MCP client: filters without words, check_sources across
every visible project, a deleted entry that says when, by whom and how to bring it back, and the
old argument names that still work."""

import pytest

from tests.mcp_api.conftest import text

pytestmark = pytest.mark.usefixtures("acme")


def _ok(res):
    assert not res.is_error, text(res)
    return res


def _new(call, title, **kw):
    res = _ok(call("upsert", project="acme", title=title, body=kw.pop("body", "x"), **kw))
    return res.structured_content["entry"]


def test_search_without_words_lists_what_the_filters_select_newest_first(call):
    _new(call, "Old incident", tags="incident")
    _new(call, "Lunch", tags="food")
    _new(call, "New incident", tags="incident")
    res = _ok(call("search", query="", tags="incident", since="7d"))
    assert [h["title"] for h in res.structured_content["results"]] == [
        "New incident",
        "Old incident",
    ]
    assert "2 result(s) matching the filters, newest first" in text(res)
    old_name = _ok(call("search", query="", tags="incident", after="7d"))
    assert len(old_name.structured_content["results"]) == 2

    refused = call("search", query="")
    assert refused.is_error
    assert "at least one filter" in text(refused)


def test_check_sources_without_a_project_looks_everywhere_and_says_so(call):
    email = {"kind": "email", "external_id": "<a@x>"}
    entry = _new(call, "Mail", sources=[email])
    res = _ok(call("check_sources", sources=[email, {"kind": "email", "external_id": "<b@x>"}]))
    logged, new = res.structured_content["sources"]
    assert logged["entries"] == [entry["short_id"]]
    assert new["logged"] is False
    assert "Checked in every project you can see:" in text(res)
    assert "logged in none of the projects you can see" in text(res)
    scoped = _ok(call("check_sources", project="acme", sources=[email]))
    assert "Checked in project acme:" in text(scoped)


def test_reading_a_deleted_entry_says_when_by_whom_and_how_to_bring_it_back(call):
    entry = _new(call, "Doomed", body="Last words.", subtopic="ops")
    _ok(call("delete", id=entry["short_id"], reason="duplicate"))
    for ref in (entry["short_id"], str(entry["id"]), "memory://acme/ops/doomed", "acme/ops/Doomed"):
        res = call("get", id=ref)
        assert res.is_error
        out = text(res)
        assert f"Entry {entry['short_id']} 'Doomed' was deleted on" in out, ref
        assert "by owner: duplicate" in out
        assert f'delete("{entry["short_id"]}", reason=…, undo=true)' in out  # same id back
        gone = res.structured_content["error"]["deleted"]
        assert gone["body"] == "Last words."
        assert "Search found" not in out


def test_an_entry_that_never_existed_puts_its_search_hits_in_the_structured_answer(call):
    _new(call, "Pricing plan")
    res = call("get", id="acme/pricing-plans")
    assert res.is_error
    assert [f["title"] for f in res.structured_content["error"]["found"]] == ["Pricing plan"]


def test_old_argument_names_still_work(call):
    entry = _new(call, "Named")
    assert "Named" in text(_ok(call("get", id_or_path=entry["short_id"])))
    res = _ok(call("build_context", url=entry["short_id"], timeframe="30d"))
    assert "Named" in text(res)


def test_browse_counts_include_subtopics_below(call):
    for n in range(3):
        _new(call, f"Note {n}", subtopic="incidents/2026-08/checkout")
    res = _ok(call("browse", project="acme"))
    tree = {n["path"]: n for n in res.structured_content["subtopics"]}
    assert (tree["incidents/2026-08"]["entries"], tree["incidents/2026-08"]["total"]) == (0, 3)
    assert "- incidents/2026-08 (3, 0 directly)" in text(res)


def test_a_task_is_open_until_resolved(call):
    task = _new(call, "Call the vendor", kind="task")
    assert [e["title"] for e in call("list_open").structured_content["entries"]] == [
        "Call the vendor"
    ]
    assert call("browse", project="acme").structured_content["project"]["open"] == 1
    _ok(call("update", id=task["short_id"], status="resolved"))
    assert call("list_open").structured_content["entries"] == []


def test_every_entry_says_its_memory_address(call):
    entry = _new(call, "Addressed", subtopic="a/b")
    assert entry["address"] == "memory://acme/a/b/addressed"
    res = _ok(call("get", id=entry["address"]))
    assert res.structured_content["entry"]["address"] == entry["address"]
    assert entry["address"] in text(res)
