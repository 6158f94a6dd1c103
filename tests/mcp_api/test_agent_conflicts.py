"""Issue 37, scripted over the official MCP client: answers that used to mislead an agent.

A stale write once said "repeat your call with expected_version=2", which wrote the old text back
over another agent's change; a diff of a correction said "the same"; a deleted entry could only
come back as a new entry. Each case is done here the way an agent would, following the answers.
"""

import ast
import re

import pytest

from knowledge.actors import Actor
from knowledge.models import Entry
from mcp_api import tools
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


def test_a_stale_edit_of_untouched_text_applies_on_the_current_version(call, sam):
    """Their change leaves the text this edit changes alone: one call, no refusal, and the
    answer says on which version it applied and who changed it since."""
    ref = _write(call, ACCOUNT).structured_content["entry"]["short_id"]
    call("edit", sam, id=ref, operation="find_replace", find="[seats] 40", content="[seats] 45",
         reason="seats from the new contract")  # fmt: skip
    res = call("edit", id=ref, operation="find_replace", find="[contact] Dana",
               content="[contact] Lee", expected_version=1)  # fmt: skip
    answer = text(res)
    assert not res.is_error, answer
    assert "Applied on version 2, the current one (you read version 1" in answer
    assert "v2 by agent:sam (seats from the new contract)" in answer
    applied = res.structured_content["applied_on"]
    assert (applied["read_version"], applied["version"]) == (1, 2)
    assert applied["changes"][0]["by"] == "agent:sam" and applied["changes"][0]["at"]
    body = Entry.objects.get(short_id=ref).body
    assert "- [seats] 45" in body and "- [contact] Lee" in body  # both changes kept


def test_a_stale_edit_of_text_they_changed_shows_the_clash_not_a_retry(call, sam):
    ref = _write(call, ACCOUNT).structured_content["entry"]["short_id"]
    call("edit", sam, id=ref, operation="find_replace", find="[seats] 40", content="[seats] 45")
    res = call("edit", id=ref, operation="find_replace", find="[seats] 40",
               content="[seats] 50", expected_version=1)  # fmt: skip
    answer, error = text(res), res.structured_content["error"]
    assert "applies" not in error and "merged_body" not in error
    assert "same lines (4-4 of version 1)" in answer
    assert "theirs '- [seats] 45'; yours '- [seats] 50'" in answer
    assert "expected_version=2" in answer and "repeat your call" not in answer.lower()
    # The one call offered keeps theirs and adds this one's line after it.
    assert error["keep_both"] == [{"find": "- [seats] 45", "replace": "- [seats] 45\n- [seats] 50"}]
    assert "[seats] 45" in Entry.objects.get(short_id=ref).body


def test_a_clash_over_long_lines_is_not_sent_back_as_steps(call, sam):
    """The steps that keep both repeat both sides' lines: past MAX_KEEP_BOTH_CHARS the answer
    points to the current text instead of echoing a large clash twice more."""
    from knowledge.reads.conflicts import MAX_KEEP_BOTH_CHARS

    long = "x" * (MAX_KEEP_BOTH_CHARS // 2)
    ref = _write(call, ACCOUNT).structured_content["entry"]["short_id"]
    call("edit", sam, id=ref, operation="find_replace", find="[seats] 40",
         content=f"[seats] 45 {long}")  # fmt: skip
    res = call("edit", id=ref, operation="find_replace", find="[seats] 40",
               content=f"[seats] 50 {long}", expected_version=1)  # fmt: skip
    answer, error = text(res), res.structured_content["error"]
    assert res.is_error and error["conflicts"] and "keep_both" not in error
    assert f'get("{ref}") shows the current text' in answer
    assert len(answer) < 3 * MAX_KEEP_BOTH_CHARS, len(answer)


def test_a_stale_section_edit_beside_their_change_applies_as_it_is(call, sam):
    body = "# Plan\n\n## Now\n\nShip v2.\n\n## Later\n\nMaybe v3.\n"
    ref = call("upsert", project="acme", title="Plan", body=body).structured_content["entry"]
    ref = ref["short_id"]
    call("edit", sam, id=ref, operation="find_replace", find="Ship v2.", content="Ship v2.1.")
    res = call("edit", id=ref, operation="replace_section", section="Later",
               content="v3 in spring.", expected_version=1)  # fmt: skip
    assert not res.is_error and "Applied on version 2" in text(res), text(res)
    assert "Ship v2.1." in Entry.objects.get(short_id=ref).body
    # The same section edit, over the other agent's change to that section: refused.
    call("edit", sam, id=ref, operation="append", section="Later", content="Or summer.")
    clash = call("edit", id=ref, operation="replace_section", section="Later",
                 content="v3 in autumn.", expected_version=3)  # fmt: skip
    assert clash.is_error, text(clash)
    assert "Or summer." in text(clash)  # their added line is in the diff shown
    assert "Or summer." in Entry.objects.get(short_id=ref).body


def test_a_stale_update_of_fields_they_left_alone_applies(call, sam):
    ref = _write(call, ACCOUNT).structured_content["entry"]["short_id"]
    call("update", sam, id=ref, tags=["customer"], reason="tagged")
    res = call("update", id=ref, status="resolved", expected_version=1)
    assert not res.is_error and "Applied on version 2" in text(res), text(res)
    assert "v2 by agent:sam (tagged)" in text(res)
    clash = call("update", id=ref, tags=["prospect"], expected_version=1)
    assert clash.is_error and "Their tags" in text(clash)


def _printed_call(answer: str, tool: str) -> tuple[str, dict]:
    """The `tool(...)` call an answer prints, as the tool's name and its arguments (the first,
    positional, is the entry's id), read the way an agent would send it."""
    found = re.search(rf"\b{tool}\(.*\)(?=\.$)", answer, re.MULTILINE)
    assert found, answer
    call = ast.parse(found.group(0), mode="eval").body
    args = {"id": ast.literal_eval(call.args[0])}
    return call.func.id, args | {k.arg: ast.literal_eval(k.value) for k in call.keywords}


def test_a_stale_update_with_a_long_value_names_it_instead_of_echoing_it(owner):
    me, sam = Actor(user=owner, agent="agent:me"), Actor(user=owner, agent="agent:sam")
    made = tools.answer("upsert", me, {"project": "acme", "title": "Deploy", "body": "Fridays."})
    ref = made.structured_content["entry"]["short_id"]
    tools.answer("update", sam, {"id": ref, "kind": "howto", "status": "open"})
    tags = [f"release-train-{n:02}" for n in range(40)]  # 800 characters as JSON
    res = tools.answer(
        "update", me, {"id": ref, "tags": tags, "status": "resolved", "expected_version": 1}
    )
    answer, error = text(res), res.structured_content["error"]
    assert f'update("{ref}", tags=<your tags, unchanged>, expected_version=2)' in answer
    assert "release-train-39" not in answer
    assert error["update"] == {"status": "resolved"} and error["update_left_out"] == ["tags"]


def test_a_stale_update_of_a_field_they_changed_too_keeps_theirs(owner):
    """Both set tags: the call printed keeps theirs (their tags plus these), never one that
    drops them; sent as printed, both agents' tags and this one's status are there."""
    me, sam = Actor(user=owner, agent="agent:me"), Actor(user=owner, agent="agent:sam")
    made = tools.answer("upsert", me, {"project": "acme", "title": "Deploy", "body": "Fridays."})
    ref = made.structured_content["entry"]["short_id"]
    tools.answer("update", sam, {"id": ref, "tags": ["customer"], "title": "Deploy steps"})
    res = tools.answer(
        "update",
        me,
        {"id": ref, "tags": ["prospect"], "title": "Deploys", "status": "resolved",
         "expected_version": 1},
    )  # fmt: skip
    answer, error = text(res), res.structured_content["error"]
    assert error["both_changed"] == ["tags", "title"]
    assert "Their tags: [] → ['customer']" in answer
    exact = f'update("{ref}", tags=["customer", "prospect"], status="resolved", expected_version=2)'
    assert exact in answer and "Deploys" not in answer.split("Both changed")[-1]
    assert "find_replace" not in answer
    assert "you and they changed the same field(s) (tags, title)" in answer
    tool, args = _printed_call(answer, "update")
    assert not tools.answer(tool, me, args).is_error
    entry = Entry.objects.get(short_id=ref)
    assert (entry.title, entry.tags, entry.status) == (
        "Deploy steps",
        ["customer", "prospect"],
        "resolved",
    )
