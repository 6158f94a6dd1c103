"""Answers that carry what they know (issue 37), over the official MCP client: a scripted
session that reads each answer's text the way an agent does, and needs no second call to learn
what the first one knew. Each step says what the agent would otherwise have had to ask.

Issue 37's case: "Outage postmortem" then "Outage notes" with the same body reported
`"similar": []`; an agent that reads that writes the same note twice.
"""

from __future__ import annotations

import json

import anyio
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from knowledge.actors import Actor
from knowledge.graph.parsing import MAX_ITEMS
from knowledge.models import Entry
from knowledge.reads.similar import same_body_entries
from knowledge.services import ProjectFields, project_update
from tests.factories import EntryFactory, ProjectFactory
from tests.mcp_api.conftest import mcp_session, text

pytestmark = pytest.mark.usefixtures("acme")

POSTMORTEM = """\
# Outage 2026-09-02

The primary database ran out of disk at 03:10.

- [cause] WAL archiving stalled #db
"""


def _ok(res):
    assert not res.is_error, text(res)
    return res


def test_answers_carry_what_they_know(call, mcp_url, token, owner):
    # tools/list is cheap to read, and what it no longer repeats the instructions say once.
    async def listing():
        async with mcp_session(mcp_url, token) as session:
            return session.initialize_result.instructions, await session.list_tools()

    instructions, tools = anyio.run(listing)
    wire = tools.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert len(json.dumps(wire)) <= 12_000
    assert "id (an entry) is its number (42), short id" in instructions
    assert "memory:// address" in instructions and "'7d'" in instructions

    # A write that fits its note type's schema says so in its text, not only in structured
    # content: the agent need not call schema_validate to know.
    _ok(call("upsert", project="acme", title="incident", kind="schema",
             body="```yaml\ncause: string\n```"))  # fmt: skip
    project_update(
        actor=Actor.for_user(owner), project="acme", fields=ProjectFields(schema_mode="warn")
    )
    first = _ok(call("upsert", project="acme", subtopic="incidents", kind="incident",
                     title="Outage postmortem", body=POSTMORTEM))  # fmt: skip
    assert "It fits the incident schema (version 1)." in text(first)
    postmortem = first.structured_content["entry"]

    # A second note with the same body (other line breaks, other case) under another title:
    # the answer names the first, beside the similar-title hint (which finds nothing here).
    same = POSTMORTEM.upper().replace("\n\n", "\n \n  ")
    second = _ok(call("upsert", project="acme", title="Outage notes", body=same))
    said = text(second)
    assert second.structured_content["report"]["similar"] == []
    assert (
        f"Same body (word for word, whitespace and case aside) as: {postmortem['short_id']} "
        f"'Outage postmortem' in acme/incidents (incident)." in said
    )
    notes = second.structured_content["entry"]["short_id"]
    assert f'delete("{notes}", reason=…)' in said
    # A different body is not named.
    other = _ok(call("upsert", project="acme", title="Outage timeline", body="03:10 disk full"))
    assert "Same body" not in text(other)

    # Links name the kind of what they reach: the agent can tell a decision from a note
    # without a get per link.
    decision = _ok(call("upsert", project="acme", subtopic="decisions", kind="decision",
                        title="Disk alarm at 80%",
                        body="- [decision] Alarm at 80% disk\n"
                             "- relates_to [[Outage postmortem]]"))  # fmt: skip
    alarm = decision.structured_content["entry"]["short_id"]
    read = _ok(call("get", id=postmortem["short_id"]))
    assert f"Backlinks: relates_to ← {alarm} 'Disk alarm at 80%' (decision)" in text(read)
    read = text(_ok(call("get", id=alarm)))
    assert f"Links: relates_to → {postmortem['short_id']} 'Outage postmortem' (incident)" in read

    # build_context names each related entry's kind, and the entry it was reached through by
    # title as well as short id.
    _ok(call("upsert", project="acme", title="Disk vendor", kind="vendor",
             body="- supplies [[Disk alarm at 80%]]"))  # fmt: skip
    context = text(_ok(call("build_context", id=postmortem["short_id"], depth=2)))
    assert f"## {postmortem['short_id']} · Outage postmortem · incident · memory://" in context
    assert (
        f"- 1 hop(s), {postmortem['short_id']} 'Outage postmortem' ← relates_to {alarm} · "
        "Disk alarm at 80% · decision · acme/decisions ·" in context
    )
    assert f"2 hop(s), {alarm} 'Disk alarm at 80%' ← supplies" in context
    assert "· Disk vendor · vendor · acme ·" in context

    # Search hits carry their memory:// address, in the text and in structured content: the
    # agent can cite or pass it on without a get.
    hits = _ok(call("search", query="outage postmortem"))
    top = hits.structured_content["results"][0]
    assert top["address"] == postmortem["address"]
    assert f"{top['short_id']} · {top['title']} · {top['address']} · " in text(hits)

    # correct answers like every write: what changed against the old body (the removed line,
    # kept in the old entry), the facts the new text holds, and the schema fit.
    fixed = POSTMORTEM.replace("03:10", "03:12")
    res = _ok(call("correct", id=postmortem["short_id"], reason="the clock was off", body=fixed))
    said = text(res)
    new = res.structured_content["entry"]["short_id"]
    assert f"supersedes {postmortem['short_id']}" in said
    assert ": +1 -1 lines." in said
    assert (
        "  - 'The primary database ran out of disk at 03:10.' "
        f"(kept in {postmortem['short_id']})" in said
    )
    assert "Observations: 1 current, 1 new: [cause] WAL archiving stalled" in said
    assert "It fits the incident schema (version 1)." in said
    report = res.structured_content["report"]
    assert report["outcome"] == "corrected" and report["change"]["fields"] == {}
    assert res.structured_content["entry"]["short_id"] == new


def test_same_body_leaves_out_what_the_writer_cannot_see(call, owner):
    hidden = ProjectFactory(slug="vault", name="Vault", sensitivity="restricted")
    EntryFactory(project=hidden, title="Secret postmortem", body=POSTMORTEM)
    res = _ok(call("upsert", project="acme", title="Outage postmortem", body=POSTMORTEM))
    assert res.structured_content["report"]["same_body"] == []
    assert "Same body" not in text(res) and "Secret" not in text(res)


def test_same_body_is_one_indexed_query(owner, acme):
    actor = Actor.for_user(owner)
    EntryFactory(project=acme, title="Outage postmortem", body=POSTMORTEM)
    for n in range(30):
        EntryFactory(project=acme, title=f"Other {n}", body=f"Note {n}")
    mine = EntryFactory(project=acme, title="Outage notes", body=POSTMORTEM.upper())
    with CaptureQueriesContext(connection) as queries:
        found = same_body_entries(actor, mine)
    assert [e["title"] for e in found] == ["Outage postmortem"]
    assert len(queries) == 1
    # The lookup is the index's, not a scan (seq scans off, as on a table too large for one).
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        cursor.execute("EXPLAIN " + queries[0]["sql"])
        plan = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute("RESET enable_seqscan")
    assert "entry_body_key" in plan, plan
    assert Entry.objects.count() == 32


def test_an_append_to_a_long_log_names_the_fact_it_added(call):
    # The report lists at most twenty facts; they used to be the log's first twenty, so an
    # append said "20 current, 0 new" and the agent could not tell its line was read as a fact.
    log = "".join(f"- [event] deploy {n} went out #release\n" for n in range(30))
    first = _ok(call("upsert", project="acme", title="Release log", body=log))
    assert "Observations: 30 current, 30 new" in text(first)
    assert "(version 1): +30 -0 lines." in text(first)  # a final newline starts no line
    ref = first.structured_content["entry"]["short_id"]
    line = "- [decision] freeze on Friday #release"
    res = _ok(call("edit", id=ref, operation="append", content=line))
    said = text(res)
    assert "(version 2): +1 -0 lines." in said
    assert "Observations: 31 current, 1 new: [decision] freeze on Friday" in said
    listed = res.structured_content["report"]["observations"]
    assert len(listed) == 20 and [o["content"] for o in listed if o["new"]] == ["freeze on Friday"]
    assert listed[0]["content"] == "deploy 0 went out"  # the rest, in the body's order


def test_an_append_past_the_fact_cap_says_its_fact_is_not_indexed(call):
    # Past 500 observations the parser stops: the line stays in the text but is no fact, and
    # "500 current, 0 new" alone left the agent thinking it was.
    log = "".join(f"- [event] deploy {n} went out #release\n" for n in range(MAX_ITEMS))
    ref = _ok(call("upsert", project="acme", title="Release log", body=log))
    ref = ref.structured_content["entry"]["short_id"]
    line = "- [decision] freeze on Friday #release"
    said = text(_ok(call("edit", id=ref, operation="append", content=line)))
    assert f"Observations: {MAX_ITEMS} current, 0 new (the most one entry indexes" in said
    assert "write more in a new entry" in said
    shorter = _ok(call("upsert", project="acme", title="Short log", body=log[:200]))
    assert "the most one entry indexes" not in text(shorter)
