"""Every write answer says what it did, over the real MCP client: the change in lines, the text a
write removed with the revision that wrote it, the observations and relations parsed (links
resolved or waiting), the sources recorded, and the similar entries a new one may repeat."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.markdown import is_fence, parse_heading
from knowledge.models import Entry
from knowledge.reads.write_reports import body_change, heading_above
from tests.mcp_api.conftest import text

pytestmark = pytest.mark.usefixtures("acme")

BODY = "# Checkout\n\n## Next steps\n\n- Roll back the cache\n"


def _ok(res):
    assert not res.is_error, text(res)
    return res


def test_replace_section_names_the_line_it_drops_and_who_wrote_it(call, make_token):
    sam = make_token(name="sam", agent_label="agent:sam")
    entry = _ok(call("upsert", project="acme", title="Incident", body=BODY)).structured_content
    ref = entry["entry"]["short_id"]
    appended = _ok(call("edit", sam, id=ref, operation="append", content="Follow-up owner: Sam"))
    assert appended.structured_content["report"]["change"]["under_heading"] == "Next steps"
    assert "under the heading 'Next steps': replace_section('Next steps')" in text(appended)

    res = _ok(
        call("edit", id=ref, operation="replace_section", section="Next steps", content="- Done")
    )
    report = res.structured_content["report"]
    assert report["change"]["removed"] >= 2
    dropped = {r["text"]: r for r in report["change"]["removed_lines"]}
    assert dropped["Follow-up owner: Sam"]["version"] == 2
    assert dropped["Follow-up owner: Sam"]["by"] == "agent:sam (owner)"  # the agent, its person
    assert dropped["- Roll back the cache"]["version"] == 1
    assert "'Follow-up owner: Sam' (written in v2 by agent:sam" in text(res)
    assert ": +1 -" in text(res).splitlines()[0]


def test_find_replace_reports_the_removed_line(call):
    ref = _ok(call("upsert", project="acme", title="Price", body="Price: 10 EUR\nOther\n"))
    ref = ref.structured_content["entry"]["short_id"]
    res = _ok(call("edit", id=ref, operation="find_replace", find="10 EUR", content="12 EUR"))
    change = res.structured_content["report"]["change"]
    assert (change["added"], change["removed"]) == (1, 1)
    assert change["removed_lines"][0]["text"] == "Price: 10 EUR"
    assert "Price: 10 EUR" in text(res)


def test_an_upsert_says_which_observations_and_relations_it_parsed(call):
    _ok(call("upsert", project="acme", title="Checkout outage 2026-08-14", body="It broke."))
    body = (
        "- [decision] Roll back the cache #ops\n"
        "- relates_to [[Checkout outage 2026-08-14]]\n"
        "- depends_on [[Cache vendor contract]]\n"
    )
    res = _ok(call("upsert", project="acme", title="Rollback decision", body=body))
    report = res.structured_content["report"]
    assert report["observations"] == [
        {"category": "decision", "content": "Roll back the cache", "tags": ["ops"], "new": True}
    ]
    rels = {r["target"]: r for r in report["relations"]}
    assert rels["Checkout outage 2026-08-14"]["resolved"] is True
    assert rels["Cache vendor contract"]["resolved"] is False
    out = text(res)
    assert "[decision] Roll back the cache" in out
    assert "relates_to →" in out and "(resolved)" in out
    assert "[[Cache vendor contract]] (waiting" in out


def test_an_upsert_with_sources_says_they_were_recorded(call):
    email = {"kind": "email", "external_id": "<m1@example.com>"}
    first = _ok(call("upsert", project="acme", title="Mail 1", body="x", sources=[email]))
    res = _ok(call("upsert", project="acme", title="Mail 1 again", body="y", sources=[email]))
    [source] = res.structured_content["report"]["sources"]
    assert source["external_id"] == "<m1@example.com>"
    assert source["also_logged_by"] == [first.structured_content["entry"]["short_id"]]
    assert "Sources recorded: email:<m1@example.com> (also logged by" in text(res)


def test_a_new_entry_names_similar_existing_ones(call):
    old = _ok(call("upsert", project="acme", title="Checkout outage 2026-08-14", body="Cache."))
    old_id = old.structured_content["entry"]["short_id"]
    res = _ok(call("upsert", project="acme", title="Checkout outage on 14 August", body="Cache."))
    similar = res.structured_content["report"]["similar"]
    assert [s["short_id"] for s in similar] == [old_id]
    assert "checkout" in similar[0]["why"]
    assert f"Similar entries exist: {old_id}" in text(res)

    other = _ok(call("upsert", project="acme", title="Lunch menu", body="Pizza."))
    assert other.structured_content["report"]["similar"] == []
    assert "Similar" not in text(other)


def test_an_update_puts_the_body_change_first_and_fields_on_one_line(call):
    _ok(call("upsert", project="acme", title="Plan", body="a\nb\n", tags="x"))
    res = _ok(call("upsert", project="acme", title="Plan", body="a\nc\n", status="open"))
    lines = text(res).splitlines()
    assert "+1 -1 lines" in lines[0]
    removed = next(i for i, line in enumerate(lines) if line.startswith("Removed text"))
    fields = next(i for i, line in enumerate(lines) if line.startswith("Fields:"))
    assert removed < fields
    assert lines[fields] == "Fields: status active → open"
    assert Entry.objects.get(title="Plan").status == "open"


def test_an_unchanged_write_reports_no_change(call):
    _ok(call("upsert", project="acme", title="Same", body="x"))
    res = _ok(call("upsert", project="acme", title="Same", body="x"))
    assert res.structured_content["report"] == {
        "outcome": "unchanged",
        "address": "memory://acme/same",
    }
    assert len(text(res).splitlines()) == 2


def test_update_sets_fields_without_the_body_and_keeps_the_rest(call):
    created = _ok(call("upsert", project="acme", title="Task", body="Do it.", tags="ops"))
    ref = created.structured_content["entry"]["short_id"]
    res = _ok(call("update", id=ref, status="resolved", kind="task"))
    entry = Entry.objects.get(short_id=ref)
    assert (entry.status, entry.kind, entry.tags, entry.body) == (
        "resolved",
        "task",
        ["ops"],
        "Do it.",
    )
    assert res.structured_content["outcome"] == "updated"
    assert "Fields: kind note → task; status active → resolved" in text(res)
    again = _ok(call("update", id=ref, status="resolved"))
    assert again.structured_content["outcome"] == "unchanged"
    cleared = _ok(call("update", id=ref, tags=[]))
    assert Entry.objects.get(short_id=ref).tags == []
    assert "tags [ops] → []" in text(cleared)


def test_update_refuses_an_unknown_status_with_the_values(call):
    ref = _ok(call("upsert", project="acme", title="T", body="x")).structured_content["entry"]
    res = call("update", id=ref["short_id"], status="done")
    assert res.is_error
    assert "resolved" in text(res)


def test_append_and_prepend_may_write_under_a_heading(call):
    body = "# Plan\n\n## Next\n\n- one\n\n## Done\n\n- zero\n"
    ref = _ok(call("upsert", project="acme", title="Plan", body=body)).structured_content
    ref = ref["entry"]["short_id"]
    _ok(call("edit", id=ref, operation="append", section="Next", content="- two"))
    _ok(call("edit", id=ref, operation="prepend", section="Done", content="- minus one"))
    assert Entry.objects.get(short_id=ref).body == (
        "# Plan\n\n## Next\n\n- one\n- two\n\n## Done\n\n- minus one\n- zero\n"
    )


def test_body_change_counts_lines_and_stays_bounded():
    from knowledge.reads.write_reports import body_change

    MAX_DIFF_LINES = 2000  # the old bound past which a rewrite counted as replaced whole

    assert body_change("a\nb\nc", "a\nB\nc\nd") == (2, 1, ["b"])
    assert body_change("x\n\ny", "x\n\ny") == (0, 0, [])
    long = "\n".join(f"line {n}" for n in range(MAX_DIFF_LINES + 5))
    added, removed, gone = body_change(long, "other")
    assert (added, removed, len(gone)) == (1, MAX_DIFF_LINES + 5, MAX_DIFF_LINES + 5)
    edited = long.replace("line 7\n", "line seven\n")
    assert body_change(long, edited) == (1, 1, ["line 7"])


@pytest.mark.parametrize(
    ("old", "new", "counts"),
    [
        ("", "a\nb\n", (2, 0)),  # a final newline ends the last line
        ("", "a\nb", (2, 0)),  # the first text of an empty body replaces no line
        ("a\nb", "a\nb\nc", (1, 0)),
        ("a\nb\n", "a\nb\nc\n", (1, 0)),
        ("a\nb\n", "a\nc\n", (1, 1)),
    ],
)
def test_lines_are_counted_as_an_editor_counts_them(old, new, counts):
    assert body_change(old, new)[:2] == counts


def _heading_above_line_by_line(body: str, old: str) -> str | None:
    """heading_above as it read every line (before issue 49): the reference it must agree with."""
    a, b = old.split("\n"), body.split("\n")
    start = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), len(a))
    found, fenced = None, False
    for line in b[: start + 1]:
        if is_fence(line):
            fenced = not fenced
        elif not fenced and (heading := parse_heading(line)):
            found = heading[1]
    return found


_REPORT_LINES = st.sampled_from(
    ["# Top", "## Next steps", "#Not a heading", " # indented", "```", "  ~~~ py", "\u00a0```",
     "text", "- [note] a fact", "", "  ", "\r", "### C# ##", "#", "####### seven"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(old=st.lists(_REPORT_LINES, max_size=20), added=st.lists(_REPORT_LINES, max_size=4))
def test_the_heading_above_an_edit_is_the_one_a_line_by_line_read_finds(old, added):
    before = "\n".join(old)
    for after in (f"{before}\n" + "\n".join(added), "\n".join(added) + f"\n{before}"):
        assert heading_above(after, before) == _heading_above_line_by_line(after, before)
