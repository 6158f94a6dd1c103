"""How writes become runs and what outlives what: a token's writes are one run until a pause
longer than CAIRN_RUN_GAP_MINUTES, an undo's writes never join the agent's next run, a run stays
listed and undoable after its token is revoked and deleted, and the admin lists the runs."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.db.models import F
from django.test import Client
from django.urls import reverse

from knowledge.actors import Actor
from knowledge.models import ApiToken, Entry, HistoricalEntry, Membership, Role
from knowledge.selectors.runs import runs_list
from knowledge.services import EntryFields, entry_update, entry_upsert, run_undo, token_revoke
from knowledge.services.tokens import token_authenticate
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent(acme, make_token):
    return token_authenticate(make_token(name="laptop", agent_label="agent:claude-code"))


def write(actor, title: str) -> Entry:
    return entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title=title, body=f"{title}\n")
    ).entry


def age_every_revision(minutes: int) -> None:
    """As if every write so far was made `minutes` earlier."""
    HistoricalEntry.objects.update(history_date=F("history_date") - dt.timedelta(minutes=minutes))


def titles_by_run(actor) -> list[list[str]]:
    """The titles each run wrote, the latest run first."""
    return [
        sorted(r.id.rows().values_list("title", flat=True).distinct()) for r in runs_list(actor)
    ]


def test_a_tokens_writes_are_one_run_until_a_pause_longer_than_the_gap(agent, owner, settings):
    settings.CAIRN_RUN_GAP_MINUTES = 30
    me = Actor.for_user(owner)
    write(agent, "a")
    age_every_revision(29)
    write(agent, "b")  # 29 minutes after a: the same run
    age_every_revision(31)
    write(agent, "c")  # 31 minutes after b: a new one
    assert titles_by_run(me) == [["c"], ["a", "b"]]

    # The token's owner undoing with that same token writes a run of its own, which the
    # agent's next write (however soon) does not join.
    report = run_undo(actor=agent, run=runs_list(me)[0].key, reason="not this one")
    assert report.deleted and not Entry.objects.filter(title="c").exists()
    write(agent, "d")
    assert titles_by_run(me) == [["d"], ["c"], ["c"], ["a", "b"]]
    assert [r.is_undo for r in runs_list(me)] == [False, True, False, False]


def test_a_run_outlives_its_token_and_can_still_be_undone(agent, owner, acme):
    bob = UserFactory(username="bob")
    Membership.objects.create(project=acme, user=bob, role=Role.EDITOR)
    note = write(Actor.for_user(bob), "Note")
    entry_update(actor=agent, ref=note.pk, fields=EntryFields(body="agent's text\n"))
    me = Actor.for_user(owner)
    token_revoke(actor=me, token_id=agent.token_id)
    [run] = runs_list(me)
    assert run.token_revoked and run.token.startswith("laptop (cairn_")
    assert not run.may_revoke(me)  # revoked already: nothing left to click

    ApiToken.objects.filter(pk=agent.token_id).delete()  # deleted, or a restore without it
    [run] = runs_list(me, token=agent.token_id)
    assert (run.token, run.token_gone, run.agent, run.changed) == (
        f"token {agent.token_id} (deleted)", True, "agent:claude-code", 1,
    )  # fmt: skip
    report = run_undo(actor=me, run=run.key, reason="the agent was wrong")
    assert report.restored == (note.short_id,)
    assert Entry.objects.get(pk=note.pk).body == "Note\n"


def test_the_admin_lists_every_tokens_runs_for_a_superuser_and_only_theirs_to_others(agent, acme):
    write(agent, "Agent note")
    url = reverse("admin:knowledge_apitoken_runs")
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(root)
    page = client.get(url).content.decode()
    [key] = re.findall(r'href="/runs/(\d+)/"', page)
    assert "agent:claude-code" in page and "laptop (cairn_" in page
    tokens = client.get(reverse("admin:knowledge_apitoken_changelist")).content.decode()
    assert f"{url}?token={agent.token_id}" in tokens  # each token links to its runs
    other = client.get(f"{url}?token={agent.token_id + 1}").content.decode()
    assert re.findall(r'href="/runs/(\d+)/"', other) == []  # another token's runs only
    assert client.get(f"/runs/{key}/").status_code == 200

    # Staff who only read acme see no one else's run there.
    clerk = UserFactory(username="clerk", is_staff=True)
    Membership.objects.create(project=acme, user=clerk, role=Role.VIEWER)
    client.force_login(clerk)
    page = client.get(url)
    assert page.status_code == 200 and "No run in these days." in page.content.decode()
