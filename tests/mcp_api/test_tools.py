"""Every MCP tool through the official client over HTTP: the happy path and the main error."""

import pytest

from knowledge.models import Entry, EntryStatus, Project
from tests.mcp_api.conftest import text

pytestmark = pytest.mark.usefixtures("acme")


def _upsert(call, title="Pricing", body="# Plan\n\nv1\n\n## Next\n\nold step\n", **kw):
    res = call("upsert", project="acme", title=title, body=body, **kw)
    assert not res.is_error, text(res)
    return res.structured_content["entry"]


def test_upsert_creates_updates_and_reports_unchanged(call):
    res = call(
        "upsert",
        project="ACME CORP",
        subtopic="Customer X > 2026-08",
        title="Pricing",
        body="v1",
        tags="billing, Q3",
    )
    assert res.structured_content["outcome"] == "created"
    entry = res.structured_content["entry"]
    assert entry["path"] == "acme/customer-x/2026-08"
    assert entry["tags"] == ["billing", "q3"]
    assert entry["generated_by"] == "agent:pytest"
    assert entry["short_id"] in text(res)

    again = call(
        "upsert",
        project="acme",
        subtopic="customer-x/2026-08",
        title="pricing",
        body="v1",
        tags=["billing", "q3"],
    )
    assert again.structured_content["outcome"] == "unchanged"
    assert again.structured_content["entry"]["version"] == 1

    changed = call(
        "upsert", project="acme", subtopic="customer-x/2026-08", title="Pricing", body="v2"
    )
    assert changed.structured_content["outcome"] == "updated"
    assert changed.structured_content["entry"]["version"] == 2
    assert Entry.objects.get(pk=entry["id"]).body == "v2"


def test_upsert_into_unknown_project_names_close_matches(call):
    res = call("upsert", project="acmee", title="T", body="b")
    assert res.is_error
    assert "acme" in text(res)
    assert "create_project" in text(res)
    assert not Entry.objects.exists()


def test_upsert_with_stale_version_gives_the_retry_call(call):
    entry = _upsert(call)
    call("upsert", project="acme", title="Pricing", body="v2")
    res = call("upsert", project="acme", title="Pricing", body="v3", expected_version=1)
    assert res.is_error
    assert res.structured_content["error"]["current_version"] == 2
    assert "expected_version=2" in text(res)
    # Both rewrote the same lines: the answer shows theirs and the edit that changes only them.
    assert f'edit("{entry["short_id"]}", operation="find_replace", find="v2"' in text(res)
    assert Entry.objects.get(pk=entry["id"]).body == "v2"


def test_search_returns_compact_hits_and_a_next_step(call):
    _upsert(call, title="Kubernetes upgrade", body="We upgraded the cluster to 1.31.", tags="ops")
    _upsert(call, title="Lunch", body="Pizza on Fridays.")
    res = call("search", query="cluster upgrade")
    hits = res.structured_content["results"]
    assert [h["title"] for h in hits] == ["Kubernetes upgrade"]
    assert set(hits[0]) >= {
        "id",
        "short_id",
        "title",
        "path",
        "kind",
        "tags",
        "status",
        "updated",
        "snippet",
    }
    assert "get(" in text(res)
    # No worker runs here: both entries wait for their vectors, and the answer says so.
    note = "2 entries written in the last minute are found by words only until their vectors"
    assert note in text(res) and res.structured_content["note"].startswith(note)
    assert call("search", query="cluster", tags="food").structured_content["results"] == []


def test_search_with_bad_date_explains_the_accepted_forms(call):
    res = call("search", query="x", after="last blue moon")
    assert res.is_error
    assert "7d" in text(res)


def test_unknown_argument_lists_the_valid_ones(call):
    res = call("search", query="x", projct="acme")
    assert res.is_error
    assert "projct" in text(res)
    assert "project" in res.structured_content["error"]["valid"]


def test_get_windows_long_bodies(call):
    body = "x" * 1000 + "END"
    entry = _upsert(call, title="Transcript", body=body)
    first = call("get", id_or_path=entry["short_id"], max_chars=600)
    assert first.structured_content["body"] == "x" * 600
    assert first.structured_content["next_offset"] == 600
    assert "offset=600" in text(first)
    rest = call("get", id_or_path="acme/transcript", offset=600, max_chars=600)
    assert rest.structured_content["body"].endswith("END")
    assert rest.structured_content["next_offset"] is None


def test_entry_references_take_the_numeric_id_as_a_number(call):
    entry = _upsert(call, body="v1")
    got = call("get", id_or_path=entry["id"])
    assert not got.is_error, text(got)
    assert got.structured_content["entry"]["short_id"] == entry["short_id"]
    edited = call("edit", id=entry["id"], operation="append", content="more")
    assert not edited.is_error, text(edited)
    assert edited.structured_content["entry"]["version"] == 2
    assert call("history", id=entry["id"]).structured_content["entry"] == entry["short_id"]
    assert not call("get", id_or_path=str(entry["id"])).is_error
    missing = call("get", id_or_path=entry["id"] + 1000)
    assert missing.is_error and missing.structured_content["error"]["code"] == "not_found"


def test_get_unknown_entry_suggests_matches_search_and_upsert(call):
    _upsert(call, title="Pricing")
    res = call("get", id_or_path="acme/pricng")
    assert res.is_error
    assert "Pricing" in text(res)
    assert "search(" in text(res)
    assert 'upsert(project=…, title="pricng"' in text(res)


def test_edit_operations(call):
    entry = _upsert(call)
    ref = entry["short_id"]
    res = call("edit", id=ref, operation="replace_section", section="## Next", content="ship it")
    assert not res.is_error, text(res)
    assert (
        call("edit", id=ref, operation="append", content="PS").structured_content["entry"][
            "version"
        ]
        == 3
    )
    call("edit", id=ref, operation="prepend", content="TL;DR")
    call("edit", id=ref, operation="find_replace", find="v1", content="v2")
    body = Entry.objects.get(pk=entry["id"]).body
    assert body.startswith("TL;DR\n\n# Plan")
    assert "## Next\n\nship it" in body and "old step" not in body
    assert "v2" in body and body.rstrip().endswith("PS")


def test_edit_find_replace_checks_the_count(call):
    entry = _upsert(call, body="a a a")
    res = call("edit", id=entry["short_id"], operation="find_replace", find="a", content="b")
    assert res.is_error
    assert "expected_count=3" in text(res)
    assert Entry.objects.get(pk=entry["id"]).body == "a a a"
    res = call(
        "edit", id=entry["short_id"], operation="replace_section", section="Nope", content="x"
    )
    assert res.is_error and "headings" in text(res)


def test_list_open_and_recent(call):
    _upsert(call, title="Follow up with Bob", body="call him", status="open")
    _upsert(call, title="Done thing", body="ok")
    open_ = call("list_open", project="acme")
    assert [e["title"] for e in open_.structured_content["entries"]] == ["Follow up with Bob"]
    recent = call("recent", since="2 days")
    assert len(recent.structured_content["entries"]) == 2
    bad = call("recent", since="whenever")
    assert bad.is_error


def test_browse_lists_projects_then_the_tree(call):
    _upsert(call, title="A", body="a", subtopic="x/y")
    top = call("browse")
    assert {"slug": "acme", "name": "Acme Corp", "sensitivity": "internal", "entries": 1} in (
        top.structured_content["projects"]
    )
    tree = call("browse", project="acme")
    assert [n["path"] for n in tree.structured_content["subtopics"]] == ["x", "x/y"]
    leaf = call("browse", project="acme", subtopic="x > y")
    assert [e["title"] for e in leaf.structured_content["entries"]] == ["A"]
    assert call("browse", project="nope").is_error


def test_browse_counts_the_project_and_lists_its_root(call):
    _upsert(call, title="Root", body="r", status="open")
    _upsert(call, title="Deep", body="d", subtopic="x")
    page = call("browse", project="acme").structured_content
    assert page["project"] == {"slug": "acme", "name": "Acme Corp", "total": 2, "open": 1}
    assert [e["title"] for e in page["entries"]] == ["Root"]
    assert [e["title"] for e in call("recent", project="acme").structured_content["entries"]] == [
        "Deep",
        "Root",
    ]


def test_history_lists_revisions_newest_first(call):
    entry = _upsert(call, body="v1")
    call("upsert", project="acme", title="Pricing", body="v2", reason="new prices")
    res = call("history", id=entry["short_id"])
    revs = res.structured_content["revisions"]
    assert [r["version"] for r in revs] == [2, 1]
    assert revs[0]["reason"] == "new prices"
    assert revs[0]["user"] == "owner"
    assert call("history", id="zzzzzzzz").is_error
    assert "diff(" in res.content[0].text  # the next move


def test_diff_shows_what_changed_between_versions(call):
    entry = _upsert(call, body="old price: 10")
    call("upsert", project="acme", title="Pricing", body="new price: 12", reason="raise")
    res = call("diff", id=entry["short_id"], from_version=1)
    assert not res.is_error
    text = res.structured_content["diff"]
    assert "-old price: 10" in text and "+new price: 12" in text
    assert res.structured_content["to_version"] == 2
    missing = call("diff", id=entry["short_id"], from_version=9)
    assert missing.is_error and "versions run from 1 to 2" in missing.content[0].text


def test_delete_needs_a_reason(call):
    entry = _upsert(call)
    res = call("delete", id=entry["short_id"], reason="  ")
    assert res.is_error and "reason" in text(res)
    assert Entry.objects.filter(pk=entry["id"]).exists()
    res = call("delete", id=entry["short_id"], reason="duplicate")
    assert not res.is_error
    assert not Entry.objects.filter(pk=entry["id"]).exists()


def test_check_sources(call):
    _upsert(call, sources=[{"kind": "email", "external_id": "<m1@x>"}])
    res = call(
        "check_sources",
        project="acme",
        sources=[
            {"kind": "email", "external_id": "<m1@x>"},
            {"kind": "email", "external_id": "<m2@x>"},
        ],
    )
    logged = {s["external_id"]: s["logged"] for s in res.structured_content["sources"]}
    assert logged == {"<m1@x>": True, "<m2@x>": False}
    assert call("check_sources", project="nope", sources=[]).is_error


def test_create_project(call):
    res = call("create_project", slug="Customer X", name="Customer X Ltd")
    assert res.structured_content["project"]["slug"] == "customer-x"
    assert Project.objects.filter(slug="customer-x").exists()
    dup = call("create_project", slug="customer-x")
    assert dup.is_error and dup.structured_content["error"]["code"] == "already_exists"


def test_correct_supersedes_and_keeps_both(call):
    old = _upsert(call, body="The price is 10.")
    res = call("correct", id=old["short_id"], body="The price is 12.", reason="typo in price")
    new = res.structured_content["entry"]
    assert new["supersedes"] == old["id"] and new["title"] == "Pricing"
    old_row = Entry.objects.get(pk=old["id"])
    assert old_row.status == EntryStatus.SUPERSEDED and old_row.superseded_by_id == new["id"]
    hits = call("search", query="price").structured_content["results"]
    assert [h["id"] for h in hits] == [new["id"]]
    both = call("search", query="price", include_history=True).structured_content["results"]
    assert {h["id"] for h in both} == {old["id"], new["id"]}
    again = call("correct", id=old["short_id"], body="x", reason="y")
    assert again.is_error and "already superseded" in text(again)


def test_agents_have_no_verify_tool(call):
    # Only a person verifies (web page or admin): an agent's token cannot claim a human check.
    entry = _upsert(call)
    res = call("verify", id=entry["short_id"])
    assert res.is_error
    assert Entry.objects.get(pk=entry["id"]).verified_at is None


def test_read_token_cannot_write(call, read_token):
    res = call("upsert", _token=read_token, project="acme", title="T", body="b")
    assert res.is_error
    assert res.structured_content["error"]["code"] == "forbidden"
    assert "read-only" in text(res)
    assert not Entry.objects.exists()
    assert not call("search", _token=read_token, query="x").is_error


def test_project_restricted_token_sees_only_its_projects(call, make_token):
    other = Project.objects.create(slug="other", name="Other")
    _upsert(call, title="In acme", body="shared words")
    only_other = make_token(projects=[other.slug])
    assert call("search", _token=only_other, query="shared").structured_content["results"] == []
    assert call("get", _token=only_other, id_or_path="acme/in-acme").is_error


def test_nul_bytes_are_refused_not_a_crash(call):
    res = call("upsert", project="acme", title="T", body="a\x00b")
    assert res.is_error and res.structured_content["error"]["field"] == "body"
    assert not call("search", query="fine").is_error


def test_agent_label_comes_from_the_client_header_when_the_token_has_none(mcp_url, make_token):
    import anyio

    from tests.mcp_api.conftest import mcp_session

    secret = make_token()  # no agent label

    async def go(headers):
        async with mcp_session(mcp_url, secret, headers=headers) as session:
            return await session.call_tool(
                "upsert", {"project": "acme", "title": str(headers), "body": "b"}
            )

    hinted = anyio.run(go, {"X-Cairn-Client": "Claude Code"})
    assert hinted.structured_content["entry"]["generated_by"] == "agent:claude-code"
    plain = anyio.run(go, {})
    assert plain.structured_content["entry"]["generated_by"] == "agent:mcp"
