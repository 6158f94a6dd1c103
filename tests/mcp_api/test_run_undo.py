"""Issue 43 over the official MCP client: one agent writes forty times in one session, a person
changes three of those entries afterwards, the run is undone as one unit (the person's changes
kept, the one clash listed and left as it is), then the undo is undone and everything reads as
before it, made and deleted entries back under their ids; the git mirror verifies after it all.
A stranger and a plain reader of the project are refused over REST."""

from __future__ import annotations

import anyio
import httpx2
import pytest

from history import maintenance, mirror
from knowledge.actors import Actor
from knowledge.models import Entry, HistoricalEntry, Membership, Role
from knowledge.selectors.runs import runs_list
from knowledge.services import EntryFields, entry_update, entry_upsert, run_undo
from knowledge.services.tokens import token_create
from tests.factories import UserFactory
from tests.mcp_api.conftest import mcp_session, text

LINES = [f"line {n}" for n in range(1, 6)]


def body(*changes: tuple[int, str]) -> str:
    lines = list(LINES)
    for index, line in changes:
        lines[index] = line
    return "\n".join(lines) + "\n"


def state(pk: int) -> dict | None:
    entry = Entry.objects.filter(pk=pk).select_related("project", "subtopic").first()
    if entry is None:
        return None
    return {
        "short_id": entry.short_id,
        "title": entry.title,
        "body": entry.body,
        "kind": entry.kind,
        "tags": entry.tags,
        "status": entry.status,
        "place": entry.permalink,
    }


@pytest.fixture
def mirror_path(settings, tmp_path):
    settings.CAIRN_MIRROR_PATH = str(tmp_path / "mirror.git")
    settings.CAIRN_MIRROR_PUSH_URL = ""


@pytest.fixture
def pat(acme):
    person = UserFactory(username="pat")
    Membership.objects.create(project=acme, user=person, role=Role.EDITOR)
    return Actor.for_user(person)


async def agent_session(url: str, token: str, seeded: dict[str, Entry]) -> None:
    """Forty writes in one MCP session, as an agent makes them (its own new entries named by
    their path, as an agent that kept no ids would)."""
    made = {f"New {n}": f"acme/agent/New {n}" for n in range(10)}
    writes = 0
    async with mcp_session(url, token) as session:

        async def ok(tool: str, **args) -> str:
            nonlocal writes
            result = await session.call_tool(tool, args)
            assert not result.is_error, text(result)
            writes += 1
            return text(result)

        for n in range(10):  # 10 new entries
            answer = await ok("upsert", project="acme", subtopic="agent", title=f"New {n}",
                              body=body(), tags=["agent"])  # fmt: skip
            assert "created" in answer.lower()
        for n in range(10):  # 10 edits of line two
            await ok("edit", id=seeded[f"Seed {n}"].short_id, operation="find_replace",
                     find="line 2", content="agent's line 2")  # fmt: skip
        for n in range(5):  # 5 field changes
            await ok("update", id=seeded[f"Seed {n}"].short_id, status="open",
                     tags=["seed", "agent"])  # fmt: skip
        for n in range(5):  # 5 appends to its own new entries
            await ok("edit", id=made[f"New {n}"], operation="append", content="more")
        for n in (10, 11):  # 2 deletes of the team's entries
            await ok("delete", id=seeded[f"Seed {n}"].short_id, reason="looks stale")
        await ok("delete", id=made["New 9"], reason="made by mistake")  # made and deleted
        for n in range(5, 10):  # 5 edits of line four
            await ok("edit", id=seeded[f"Seed {n}"].short_id, operation="find_replace",
                     find="line 4", content="agent's line 4")  # fmt: skip
        for n in (5, 6):  # 2 rewrites of its own entries
            await ok("upsert", project="acme", subtopic="agent", title=f"New {n}",
                     body=body((0, "rewritten")))  # fmt: skip
    assert writes == 40


@pytest.mark.usefixtures("mirror_path")
def test_an_agents_run_of_forty_writes_is_undone_and_redone_as_one(
    mcp_url, live_server_url, owner, acme, pat, make_token
):
    seeded = {
        f"Seed {n}": entry_upsert(
            actor=pat,
            project="acme",
            subtopic="team",
            fields=EntryFields(title=f"Seed {n}", body=body(), tags=["seed"], kind="note"),
        ).entry
        for n in range(12)
    }
    before_run = {title: state(e.pk) for title, e in seeded.items()}
    token = make_token(name="laptop", agent_label="agent:claude-code")
    anyio.run(agent_session, mcp_url, token, seeded)
    new_ids = {
        f"New {n}": HistoricalEntry.objects.filter(title=f"New {n}").values_list("id").first()[0]
        for n in range(10)
    }

    # A person changes three of them afterwards.
    seed = {title: e.pk for title, e in seeded.items()}
    entry_update(actor=pat, ref=seed["Seed 0"], fields=EntryFields(
        body=body((1, "agent's line 2"), (4, "pat's line 5"))))  # fmt: skip
    entry_update(actor=pat, ref=seed["Seed 7"], fields=EntryFields(kind="decision"))
    entry_update(actor=pat, ref=seed["Seed 8"], fields=EntryFields(
        body=body((1, "agent's line 2"), (3, "pat's line 4"))))  # fmt: skip
    before_undo = {t: state(pk) for t, pk in [*seed.items(), *new_ids.items()]}

    maintainer = Actor.for_user(owner)
    [run] = [r for r in runs_list(maintainer) if r.agent == "agent:claude-code"]
    assert (run.revisions, run.entries, run.created, run.deleted) == (40, 22, 10, 3)
    refused_over_rest(live_server_url, run.key, acme)

    report = run_undo(actor=maintainer, run=run.key, reason="the agent was confused")

    assert report.conflicts == ((seeded["Seed 8"].short_id, report.conflicts[0][1]),)
    assert "same body" in report.conflicts[0][1]
    assert state(seed["Seed 8"]) == before_undo["Seed 8"]  # the clash stays as pat left it
    expected = dict(before_run)
    expected["Seed 0"] = {**before_run["Seed 0"], "body": body((4, "pat's line 5"))}
    expected["Seed 7"] = {**before_run["Seed 7"], "kind": "decision"}
    expected["Seed 8"] = before_undo["Seed 8"]
    assert {t: state(pk) for t, pk in seed.items()} == expected
    assert {t: state(pk) for t, pk in new_ids.items()} == dict.fromkeys(new_ids)
    assert (len(report.restored), len(report.deleted), len(report.undeleted)) == (9, 9, 2)

    # Undoing the undo puts everything back as it was before it: same ids, same text.
    again = run_undo(actor=maintainer, run=report.undo_run, reason="it was right after all")
    assert again.conflicts == ()
    assert {t: state(pk) for t, pk in [*seed.items(), *new_ids.items()]} == before_undo

    # The mirror holds every revision, the runs' own among them, and matches the database.
    mirror.drain()
    assert maintenance.verify() == []
    undo_rows = HistoricalEntry.objects.filter(history_run__startswith="~undo").count()
    assert undo_rows == 40  # 20 each way
    assert HistoricalEntry.objects.filter(git_commit="").count() == 0


def refused_over_rest(base: str, key: int, acme) -> None:
    """A stranger's and a plain reader's tokens see no run and may not undo it."""
    stranger = UserFactory(username="stranger")
    reader = UserFactory(username="reader")
    Membership.objects.create(project=acme, user=reader, role=Role.VIEWER)
    for user in (stranger, reader):
        secret = token_create(actor=Actor.system(), user=user, name="t").secret
        with httpx2.Client(base_url=base, headers={"Authorization": f"Bearer {secret}"}) as http:
            assert http.get("/api/v1/runs").json() == []
            assert http.get(f"/api/v1/runs/{key}").status_code == 404
            undo = http.post(f"/api/v1/runs/{key}/undo", json={"reason": "mine now"})
            assert undo.status_code == 404, undo.text
