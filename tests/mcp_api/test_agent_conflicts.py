"""Issue 37, scripted over the official MCP client: answers that used to mislead an agent.

A stale write once said "repeat your call with expected_version=2", which wrote the old text back
over another agent's change; a diff of a correction said "the same"; a deleted entry could only
come back as a new entry. Each case is done here the way an agent would, following the answers.
"""

import pytest

from knowledge.models import Entry
from tests.mcp_api.conftest import text

pytestmark = pytest.mark.usefixtures("acme")

ACCOUNT = """\
# Acme Corp

- [plan] Enterprise, since 2025-03
- [seats] 40
- [contact] Dana

Renewal talks in May.
"""


@pytest.fixture
def sam(make_token):
    return make_token(name="sam", agent_label="agent:sam")


def _write(call, body, **args):
    res = call("upsert", project="acme", title="Acme Corp", body=body, **args)
    return res


def test_a_stale_upsert_shows_the_other_change_and_a_merge_that_keeps_both(call, sam):
    first = _write(call, ACCOUNT).structured_content["entry"]
    ref = first["short_id"]
    # Meanwhile another agent raises the seats.
    moved = call("edit", sam, id=ref, operation="find_replace", find="[seats] 40",
                 content="[seats] 45", reason="seats from the new contract")  # fmt: skip
    assert not moved.is_error, text(moved)
    # The first agent still holds version 1 and changes another line of the whole body.
    res = _write(call, ACCOUNT.replace("[contact] Dana", "[contact] Lee"), expected_version=1)
    assert res.is_error
    answer = text(res)
    assert "repeat your call" not in answer.lower()
    assert "-- [seats] 40\n+- [seats] 45" in answer  # what the other agent changed
    assert "agent:sam" in answer and "seats from the new contract" in answer  # who and why
    assert "Merged body" in answer
    error = res.structured_content["error"]
    assert "[seats] 45" in error["merged_body"] and "[contact] Lee" in error["merged_body"]
    assert error["edits"] == [{"find": "- [contact] Dana", "replace": "- [contact] Lee"}]
    assert 'edit("' in answer and 'find="- [contact] Dana"' in answer

    # Following the advice: only this agent's change, on the current version.
    step = error["edits"][0]
    done = call("edit", id=ref, operation="find_replace", find=step["find"],
                content=step["replace"], expected_version=error["current_version"])  # fmt: skip
    assert not done.is_error, text(done)
    body = Entry.objects.get(short_id=ref).body
    assert "- [seats] 45" in body and "- [contact] Lee" in body  # both changes kept


def test_the_merged_body_keeps_both_changes_and_a_clash_names_the_lines(call, sam):
    ref = _write(call, ACCOUNT).structured_content["entry"]["short_id"]
    call("edit", sam, id=ref, operation="find_replace", find="[seats] 40", content="[seats] 45")
    res = _write(call, ACCOUNT.replace("May", "June"), expected_version=1)
    error = res.structured_content["error"]
    sent = _write(call, error["merged_body"], expected_version=error["current_version"])
    assert not sent.is_error, text(sent)
    body = Entry.objects.get(short_id=ref).body
    assert "[seats] 45" in body and "June" in body

    stale = _write(call, ACCOUNT.replace("[seats] 40", "[seats] 50"), expected_version=1)
    answer = text(stale)
    assert "merged_body" not in stale.structured_content["error"]
    assert "same lines (4-4 of version 1)" in answer
    assert "theirs '- [seats] 45'; yours '- [seats] 50'" in answer
    assert "repeat your call" not in answer.lower()


def test_a_diff_of_a_correction_shows_the_text_it_changed(call):
    before = "Standup on Tuesdays and Thursdays at 10."
    old = call("upsert", project="acme", title="Standup", body=before).structured_content["entry"]
    fixed = call("correct", id=old["short_id"], body="Standup on Wednesdays only at 10.",
                 reason="moved in September")  # fmt: skip
    new = fixed.structured_content["entry"]["short_id"]

    answer = text(call("diff", id=new))
    assert "are the same" not in answer
    assert "-Standup on Tuesdays and Thursdays at 10." in answer
    assert "+Standup on Wednesdays only at 10." in answer
    assert f"corrected {old['short_id']}" in answer

    history = text(call("history", id=new))
    assert f"[corrected {old['short_id']}] v1" in history
    assert f"diff({new})" in history
    assert f"[corrected by {new}] v1" in text(call("history", id=old["short_id"]))
    assert f"diff({new})" in text(call("diff", id=old["short_id"]))  # points to the change


def test_undelete_brings_back_the_same_entry_with_sources_kind_and_tags(call):
    made = call("upsert", project="acme", subtopic="decisions", title="Use Postgres",
                body="We use PostgreSQL 17.", kind="decision", tags=["db"],
                sources=[{"kind": "ticket", "external_id": "OPS-7"}])  # fmt: skip
    ref = made.structured_content["entry"]["short_id"]
    assert not call("delete", id=ref, reason="cleanup").is_error
    gone = call("get", id=ref)
    assert gone.is_error and f'delete("{ref}", reason=…, undo=true)' in text(gone)
    assert "new entry" not in text(gone)

    back = call("delete", id=ref, reason="deleted by mistake", undo=True)
    assert not back.is_error, text(back)
    entry = Entry.objects.get(short_id=ref)
    assert entry.pk == made.structured_content["entry"]["id"]
    assert (entry.kind, entry.tags, entry.subtopic.path) == ("decision", ["db"], "decisions")
    assert [(s.kind, s.external_id) for s in entry.sources.all()] == [("ticket", "OPS-7")]
    history = text(call("history", id=ref))
    assert "undelete: deleted by mistake" in history and "cleanup" in history
