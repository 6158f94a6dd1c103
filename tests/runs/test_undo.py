"""Undoing a run, in process: each entry back to before the run, later changes by others kept
(merged, or left as a conflict), entries made deleted and deleted ones back with their ids, the
undo itself undoable, and who may do it."""

from __future__ import annotations

import pytest

from knowledge.actors import Actor
from knowledge.errors import Forbidden, NotFound, RunChanged, ValidationFailed
from knowledge.models import Entry, HistoricalEntry, Membership, Role
from knowledge.reads.run_undo import undo_refusal
from knowledge.selectors.runs import run_get, runs_list
from knowledge.services import (
    EntryFields,
    entry_delete,
    entry_move,
    entry_update,
    entry_upsert,
    run_undo,
)
from knowledge.services.tokens import token_authenticate
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

BODY = "line one\nline two\nline three\nline four\nline five\n"


def state(pk: int) -> dict | None:
    entry = Entry.objects.filter(pk=pk).first()
    if entry is None:
        return None
    return {
        "title": entry.title,
        "body": entry.body,
        "kind": entry.kind,
        "tags": list(entry.tags),
        "status": entry.status,
        "project": entry.project_id,
        "subtopic": entry.subtopic.path if entry.subtopic_id else "",
        "metadata": entry.metadata,
    }


@pytest.fixture
def team(acme, owner):
    """acme, maintained by `owner`; bob edits there."""
    bob = UserFactory(username="bob")
    Membership.objects.create(project=acme, user=bob, role=Role.EDITOR)
    return {"owner": Actor.for_user(owner), "bob": Actor.for_user(bob)}


@pytest.fixture
def agent(make_token):
    return token_authenticate(make_token(agent_label="agent:claude-code"))


def write(actor, title, body=BODY, **fields):
    return entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title=title, body=body, **fields)
    ).entry


def latest_run(actor) -> int:
    return runs_list(actor, limit=1)[0].key


def test_an_undo_takes_the_run_back_and_keeps_what_others_changed_since(team, agent):
    bob = team["bob"]
    kept = {t: write(bob, t, tags=["ops"]) for t in ("Merged", "Clash", "Retagged", "Gone")}
    # The agent's run: two new entries, four changed, one deleted.
    made = write(agent, "Made by the agent", "new\n")
    entry_update(actor=agent, ref=kept["Merged"].pk, fields=EntryFields(
        body=BODY.replace("line two", "LINE TWO"), status="open"))  # fmt: skip
    entry_update(actor=agent, ref=kept["Clash"].pk, fields=EntryFields(
        body=BODY.replace("line four", "agent's four")))  # fmt: skip
    entry_update(actor=agent, ref=kept["Retagged"].pk, fields=EntryFields(tags=["ops", "x"]))
    entry_delete(actor=agent, ref=kept["Gone"].pk, reason="agent thinks it is stale")
    # A person changes three of them afterwards.
    entry_update(actor=bob, ref=kept["Merged"].pk, fields=EntryFields(
        body=BODY.replace("line two", "LINE TWO").replace("line five", "bob's five")))  # fmt: skip
    entry_update(actor=bob, ref=kept["Clash"].pk, fields=EntryFields(
        body=BODY.replace("line four", "bob's four")))  # fmt: skip
    entry_update(actor=bob, ref=kept["Retagged"].pk, fields=EntryFields(tags=["ops", "x", "y"]))
    clash_before = state(kept["Clash"].pk)

    run = run_get(team["owner"], latest_run(team["owner"]))
    assert (run.entries, run.created, run.deleted, run.changed) == (5, 1, 1, 3)
    report = run_undo(actor=team["owner"], run=run.key, reason="the agent was confused")

    assert state(made.pk) is None
    merged = state(kept["Merged"].pk)
    assert merged["body"] == BODY.replace("line five", "bob's five")  # run's line back, bob's kept
    assert merged["status"] == "active"
    assert state(kept["Clash"].pk) == clash_before  # the conflict is left as it is
    assert state(kept["Retagged"].pk)["tags"] == ["ops", "y"]  # x taken back, bob's y kept
    assert state(kept["Gone"].pk)["body"] == BODY
    assert Entry.objects.get(pk=kept["Gone"].pk).short_id == kept["Gone"].short_id
    assert [short for short, _ in report.conflicts] == [kept["Clash"].short_id]
    assert report.changed == 4

    # The undo is a run of its own: undoing it puts the agent's work back exactly.
    again = run_undo(actor=team["owner"], run=report.undo_run, reason="it was right after all")
    assert state(made.pk)["body"] == "new\n"
    assert Entry.objects.get(pk=made.pk).short_id == made.short_id
    assert state(kept["Gone"].pk) is None
    assert state(kept["Merged"].pk)["status"] == "open"
    assert again.changed == 4


def test_a_run_that_made_and_deleted_entries_comes_back_exactly(team, agent):
    bob = team["bob"]
    old = write(bob, "Old", "old text\n", kind="fact", tags=["a"])
    before_old = state(old.pk)
    made = [write(agent, f"New {n}", f"text {n}\n", tags=["n"]) for n in range(3)]
    entry_delete(actor=agent, ref=old.pk, reason="stale")
    after_run = {e.pk: state(e.pk) for e in [*made, old]}
    report = run_undo(actor=team["owner"], run=latest_run(team["owner"]), reason="undo")
    assert {e.pk: state(e.pk) for e in made} == {e.pk: None for e in made}
    assert state(old.pk) == before_old
    run_undo(actor=team["owner"], run=report.undo_run, reason="redo")
    assert {e.pk: state(e.pk) for e in [*made, old]} == after_run


def test_a_stranger_and_a_plain_reader_are_refused(team, agent, acme):
    entry = write(team["bob"], "Note")
    entry_update(actor=agent, ref=entry.pk, fields=EntryFields(body="agent text\n"))
    key = latest_run(team["owner"])
    stranger = Actor.for_user(UserFactory(username="stranger"))
    reader = UserFactory(username="reader")
    Membership.objects.create(project=acme, user=reader, role=Role.VIEWER)
    for who in (stranger, Actor.for_user(reader)):
        assert runs_list(who) == []
        with pytest.raises(NotFound):
            run_undo(actor=who, run=key, reason="no")
    # An editor sees no one else's runs either; a maintainer of the project does.
    with pytest.raises(NotFound):
        run_undo(actor=team["bob"], run=key, reason="no")
    assert state(entry.pk)["body"] == "agent text\n"


def test_the_owner_needs_the_editor_role_everywhere_the_run_wrote(team, agent, acme, owner):
    entry = write(team["bob"], "Note")
    entry_update(actor=agent, ref=entry.pk, fields=EntryFields(body="agent text\n"))
    key = latest_run(team["owner"])
    Membership.objects.filter(project=acme, user=owner).update(role=Role.VIEWER)
    run = run_get(Actor.for_user(owner), key)
    assert "editor role" in undo_refusal(Actor.for_user(owner), run)
    with pytest.raises(Forbidden, match="editor role in every project"):
        run_undo(actor=Actor.for_user(owner), run=key, reason="no")


def test_an_undo_refuses_when_the_preview_is_stale(team, agent):
    entry = write(team["bob"], "Note")
    entry_update(actor=agent, ref=entry.pk, fields=EntryFields(body="agent text\n"))
    key = latest_run(team["owner"])
    seen = {entry.pk: Entry.objects.get(pk=entry.pk).version}
    entry_update(actor=team["bob"], ref=entry.pk, fields=EntryFields(tags=["later"]))
    with pytest.raises(RunChanged, match="changed since the preview"):
        run_undo(actor=team["owner"], run=key, reason="undo", expected=seen)
    assert state(entry.pk)["body"] == "agent text\n"


def test_a_resolution_decides_a_conflict(team, agent):
    entry = write(team["bob"], "Note")
    entry_update(actor=agent, ref=entry.pk, fields=EntryFields(body="agent\n"))
    entry_update(actor=team["bob"], ref=entry.pk, fields=EntryFields(body="bob\n"))
    key = latest_run(team["owner"])
    report = run_undo(
        actor=team["owner"], run=key, reason="undo", resolutions={entry.pk: {"take": "before"}}
    )
    assert state(entry.pk)["body"] == BODY and report.restored == (entry.short_id,)


def test_an_undo_needs_a_reason(team, agent):
    write(agent, "x")
    with pytest.raises(ValidationFailed, match="reason"):
        run_undo(actor=team["owner"], run=latest_run(team["owner"]), reason=" ")


def test_each_revision_records_its_token_agent_and_run(team, agent, make_token):
    write(agent, "a")
    write(agent.in_run("session-7"), "b")
    other = token_authenticate(make_token(name="other", agent_label="agent:other"))
    write(other, "c")
    rows = HistoricalEntry.objects.order_by("history_id")
    runs = [(r.history_token_id, r.history_agent, r.history_run) for r in rows]
    assert runs[0][:2] == (agent.token_id, "agent:claude-code") and runs[0][2].startswith("~")
    assert runs[1] == (agent.token_id, "agent:claude-code", "session-7")
    assert runs[2][0] == other.token_id and runs[2][2] not in (runs[0][2], "session-7")
    assert len(runs_list(team["owner"])) == 3


def test_the_preview_shows_each_entry_and_what_the_undo_would_do(team, agent):
    from knowledge.reads.run_preview import run_preview

    entry = write(team["bob"], "Note")
    entry_update(actor=agent, ref=entry.pk, fields=EntryFields(body="agent\n", status="open"))
    made = write(agent, "Made", "made\n")
    entry_update(actor=team["bob"], ref=entry.pk, fields=EntryFields(tags=["later"]))
    page = run_preview(team["owner"], latest_run(team["owner"]))
    items = {i["short_id"]: i for i in page["items"]}
    note = items[entry.short_id]
    assert note["action"] == "restore" and note["run_action"] == "changed"
    assert "+agent" in note["did"] and "status active → open" in note["did"]
    assert "-agent" in note["will"] and "status open → active" in note["will"]
    assert [c["by"] for c in note["later"]] == ["bob"]
    assert items[made.short_id]["action"] == "delete"
    assert page["refusal"] is None and page["expected"][entry.pk] == 3
    assert page["counts"] == {"restore": 1, "delete": 1}


def test_the_command_lists_shows_previews_and_undoes_a_run(team, agent, owner):
    from io import StringIO

    from django.core.management import call_command

    entry = write(team["bob"], "Note")
    entry_update(actor=agent, ref=entry.pk, fields=EntryFields(body="agent text\n"))

    def run(*args) -> str:
        out = StringIO()
        call_command("runs", *args, "--by", "owner", stdout=out)
        return out.getvalue()

    key = latest_run(team["owner"])
    assert f"r{key}" in run("list") and "agent:claude-code" in run("list")
    assert "+agent text" in run("show", str(key))
    preview = run("undo", str(key), "--preview")
    assert "-agent text" in preview and "Nothing was changed" in preview
    assert state(entry.pk)["body"] == "agent text\n"
    done = run("undo", str(key), "--reason", "bad run")
    assert "1 set back" in done and state(entry.pk)["body"] == BODY


def test_an_undo_moves_entries_back_and_leaves_one_whose_old_title_was_taken(team, agent, owner):
    from tests.factories import ProjectFactory

    ops = ProjectFactory(slug="ops")
    Membership.objects.create(project=ops, user=owner, role=Role.MAINTAINER)
    moved = entry_upsert(
        actor=team["bob"], project="acme", fields=EntryFields(title="Moved", body=BODY),
        sources=[{"kind": "ticket", "external_id": "T-9"}],
    ).entry  # fmt: skip
    renamed = write(team["bob"], "Renamed")
    entry_move(actor=agent, ref=moved.pk, project="ops", subtopic="inbox", reason="tidy")
    entry_update(actor=agent, ref=renamed.pk, fields=EntryFields(title="Renamed by the agent"))
    taken = write(team["bob"], "Renamed", "bob's own\n")  # the old title, taken since

    report = run_undo(actor=team["owner"], run=latest_run(team["owner"]), reason="undo")

    back = Entry.objects.get(pk=moved.pk)
    assert (back.project.slug, back.subtopic_id, back.short_id) == ("acme", None, moved.short_id)
    assert [(s.project.slug, s.external_id) for s in back.sources.all()] == [("acme", "T-9")]
    assert report.restored == (moved.short_id,)
    assert report.conflicts == ((renamed.short_id, report.conflicts[0][1]),)
    assert "old title" in report.conflicts[0][1]
    assert state(renamed.pk)["title"] == "Renamed by the agent"
    assert state(taken.pk)["body"] == "bob's own\n"
