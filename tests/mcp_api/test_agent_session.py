"""An agent's working day, scripted over the official MCP client: twenty everyday tasks, each
with the number of calls it may take, and no text lost on the way. Read it as documentation
of how an agent is meant to use Cairn; a task that starts needing more calls fails here.

The owner's token writes as agent:pytest in project acme (maintainer); `vault` is a
confidential project of someone else's.
"""

from __future__ import annotations

import re
from contextlib import contextmanager

import pytest

from knowledge.actors import Actor
from knowledge.models import Membership, Role, Sensitivity
from knowledge.services import EntryFields, entries_embed, entry_upsert, lexeme_stats_refresh
from tests.factories import ProjectFactory, UserFactory
from tests.mcp_api.conftest import text

INCIDENT = (
    "## Timeline\n\n- 09:12 alerts on checkout latency\n- 09:40 rolled back release 4.2\n\n"
    "## Cause\n\nA missing index on `orders.customer_id` after a migration.\n\n"
    "## Next steps\n\n- Add the index back\n"
)


class Agent:
    """Calls tools and counts them per task; every answer is kept for the assertions."""

    def __init__(self, call) -> None:
        self._call, self.calls, self.task = call, {}, None

    @contextmanager
    def doing(self, task: str):
        self.task, self.calls[task] = task, 0
        yield
        self.task = None

    def __call__(self, tool: str, **args):
        self.calls[self.task] += 1
        return self._call(tool, **args)

    def ok(self, tool: str, **args):
        result = self(tool, **args)
        assert not result.is_error, f"{tool}: {text(result)}"
        return result


@pytest.fixture
def memory(acme, owner):
    me = Actor.for_user(owner)
    entries = {}
    for subtopic, title, body, kind in [
        ("2026-08/incident", "Checkout outage 2026-08-14", INCIDENT, "note"),
        ("decisions", "Use PostgreSQL for search", "Postgres full text plus pgvector.", "decision"),
        ("people", "Dana", "- [role] CTO of Customer X\n- works_on [[Checkout outage 2026-08-14]]",
         "person"),
    ]:  # fmt: skip
        entries[title] = entry_upsert(
            actor=me,
            project="acme",
            subtopic=subtopic,
            fields=EntryFields(title=title, body=body, kind=kind, tags=["incident"]
                               if "outage" in title else []),
        ).entry  # fmt: skip
    entries_embed(entry_ids=[e.pk for e in entries.values()])
    lexeme_stats_refresh()
    stranger = UserFactory(username="mallory")
    vault = ProjectFactory(slug="vault", sensitivity=Sensitivity.CONFIDENTIAL)
    Membership.objects.create(project=vault, user=stranger, role=Role.MAINTAINER)
    return entries


def test_an_agent_does_twenty_everyday_tasks_in_few_calls_and_loses_no_text(call, memory):
    agent = Agent(call)
    incident = memory["Checkout outage 2026-08-14"]

    with agent.doing("find the cause of an incident"):
        hits = agent.ok("search", query="why did checkout break in August").structured_content
        assert hits["results"][0]["title"] == "Checkout outage 2026-08-14"
        page = text(agent.ok("get", id=hits["results"][0]["short_id"]))
        assert "missing index" in page

    with agent.doing("record a decision with a link"):
        res = agent.ok(
            "upsert", project="acme", subtopic="decisions", kind="decision",
            title="Index every foreign key",
            body="- [decision] Every foreign key gets an index #db\n"
                 "- relates_to [[Checkout outage 2026-08-14]]",
        )  # fmt: skip
        answer = text(res)
        assert "relates_to" in answer and "Checkout outage 2026-08-14" in answer
        assert "decision" in answer  # the observation was recognised, no get needed
        decision = res.structured_content["entry"]

    with agent.doing("append"):
        agent.ok("edit", id=incident.short_id, operation="append",
                 content="Follow-up owner: Sam")  # fmt: skip

    with agent.doing("replace a section"):
        res = agent.ok("edit", id=incident.short_id, operation="replace_section",
                       section="Next steps", content="- Index added on 2026-08-15")  # fmt: skip
        # The appended line sat inside the last section: the answer says it went, and who
        # wrote it, so the agent can put it back without re-reading the entry.
        assert "Follow-up owner: Sam" in text(res)

    with agent.doing("find and replace"):
        res = agent.ok("edit", id=incident.short_id, operation="find_replace",
                       find="09:40", content="09:41")  # fmt: skip
        assert "09:40" in text(res)  # the line it replaced

    with agent.doing("correct a wrong fact"):
        res = agent.ok("correct", id=decision["short_id"], reason="only hot tables",
                       body="- [decision] Foreign keys on hot tables get an index #db\n"
                            "- relates_to [[Checkout outage 2026-08-14]]")  # fmt: skip
        assert "supersede" in text(res).lower()

    with agent.doing("open and resolve an item"):
        task = agent.ok("upsert", project="acme", title="Backfill the index", kind="task",
                        body="Run the backfill.")  # fmt: skip
        task = task.structured_content["entry"]
        assert task["id"] in [e["id"] for e in agent.ok("list_open", project="acme")
                              .structured_content["entries"]]  # fmt: skip
        agent.ok("update", id=task["id"], status="resolved")

    with agent.doing("log an email once"):
        mail = [{"kind": "email", "external_id": "<a1@example.com>"}]
        assert "not" in text(agent.ok("check_sources", sources=mail)).lower()
        agent.ok("upsert", project="acme", title="Mail from Dana", body="Dana asks for a "
                 "post-mortem.", sources=mail)  # fmt: skip

    with agent.doing("build context two hops out"):
        ctx = text(agent.ok("build_context", id="memory://acme/people/dana", depth=2))
        assert "Checkout outage 2026-08-14" in ctx and "Index every foreign key" in ctx

    with agent.doing("history and diff"):
        history = text(agent.ok("history", id=incident.pk))
        assert "agent:pytest" in history
        diff = text(agent.ok("diff", id=incident.pk, from_version=1, to_version=3))
        assert "Index added" in diff

    with agent.doing("a new project"):
        agent.ok("create_project", slug="launch", name="Launch")
        agent.ok("upsert", project="launch", title="Plan", body="Ship in Q3.")

    with agent.doing("numeric ids"):
        assert "missing index" in text(agent.ok("get", id=incident.pk))

    with agent.doing("memory:// addresses"):
        got = agent.ok("get", id="memory://acme/decisions/use-postgresql-for-search")
        assert "pgvector" in text(got)

    with agent.doing("tag filters without words"):
        hits = agent.ok("search", query="", tags="incident", since="7d").structured_content
        assert [h["title"] for h in hits["results"]] == ["Checkout outage 2026-08-14"]

    with agent.doing("a paraphrase search"):
        hits = agent.ok("search", query="which database do we use for finding notes")
        assert hits.structured_content["results"][0]["title"] == "Use PostgreSQL for search"

    with agent.doing("a forbidden project"):
        refused = agent("upsert", project="vault", title="x", body="y")
        assert refused.is_error and "mallory" in text(refused)  # who to ask

    with agent.doing("a version conflict"):
        stale = agent(
            "edit", id=incident.pk, operation="append", content="late", expected_version=1
        )
        assert stale.is_error and re.search(r"version \d", text(stale))

    with agent.doing("a 20,000-character transcript in pages"):
        transcript = "".join(f"Line {i}: we talked about the rollout.\n" for i in range(540))
        assert len(transcript) > 20_000
        made = agent.ok("upsert", project="acme", title="Call transcript", kind="session",
                        body=transcript).structured_content["entry"]  # fmt: skip
        read, offset = "", 0
        while offset is not None:
            page = agent.ok("get", id=made["id"], offset=offset, max_chars=10_000)
            read += page.structured_content["body"]
            offset = page.structured_content.get("next_offset")
        assert read == transcript

    with agent.doing("browse"):
        tree = text(agent.ok("browse", project="acme"))
        assert "2026-08 (1, 0 directly)" in tree  # its subtopics' entries counted

    with agent.doing("delete"):
        agent.ok("delete", id=made["id"], reason="kept elsewhere")
        gone = text(agent("get", id=made["id"]))
        assert "deleted" in gone.lower()

    assert agent.calls == {
        "find the cause of an incident": 2,
        "record a decision with a link": 1,
        "append": 1,
        "replace a section": 1,
        "find and replace": 1,
        "correct a wrong fact": 1,
        "open and resolve an item": 3,
        "log an email once": 2,
        "build context two hops out": 1,
        "history and diff": 2,
        "a new project": 2,
        "numeric ids": 1,
        "memory:// addresses": 1,
        "tag filters without words": 1,
        "a paraphrase search": 1,
        "a forbidden project": 1,
        "a version conflict": 1,
        "a 20,000-character transcript in pages": 4,
        "browse": 1,
        "delete": 2,
    }
