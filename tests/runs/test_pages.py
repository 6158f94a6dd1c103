"""The runs pages, in process: the list, a run's page, the undo's preview and the undo with a
resolved conflict, revoking the token; a stranger and a plain reader see no run."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from knowledge.models import ApiToken, Entry, Membership, Role
from knowledge.services import EntryFields, entry_update, entry_upsert
from knowledge.services.tokens import token_authenticate
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(acme, owner, make_token):
    agent = token_authenticate(make_token(name="laptop", agent_label="agent:claude-code"))
    person = UserFactory(username="bob")
    Membership.objects.create(project=acme, user=person, role=Role.EDITOR)
    from knowledge.actors import Actor

    bob = Actor.for_user(person)
    note = entry_upsert(
        actor=bob, project="acme", fields=EntryFields(title="Note", body="one\ntwo\n")
    ).entry
    entry_update(actor=agent, ref=note.pk, fields=EntryFields(body="one\nagent two\n"))
    made = entry_upsert(
        actor=agent, project="acme", fields=EntryFields(title="Agent note", body="x\n")
    ).entry
    entry_update(actor=bob, ref=note.pk, fields=EntryFields(body="one\nbob two\n"))
    client = Client()
    client.force_login(owner)
    return {"note": note, "made": made, "client": client, "token": agent.token_id}


def test_the_owner_lists_a_run_previews_its_undo_and_undoes_it(run):
    client = run["client"]
    listing = client.get("/runs/").content.decode()
    key = re.search(r'href="/runs/(\d+)/"', listing).group(1)
    assert "agent:claude-code" in listing and "laptop (cairn_" in listing
    page = client.get(f"/runs/{key}/").content.decode()
    assert "+agent two" in page and "Changed since by: bob" in page
    preview = client.get(f"/runs/{key}/undo/").content.decode()
    assert "bring back 0" in preview and "1 conflict" in preview
    # a preview changes nothing
    assert Entry.objects.get(pk=run["note"].pk).body == "one\nbob two\n"
    form = {
        f"v-{run['note'].pk}": Entry.objects.get(pk=run["note"].pk).version,
        f"v-{run['made'].pk}": 1,
        f"resolve-{run['note'].pk}": "text",
        f"text-{run['note'].pk}": "one\nbob's two, checked\n",
        "reason": "the agent misread the ticket",
    }
    done = client.post(f"/runs/{key}/undo/", form, follow=True).content.decode()
    assert "undone: 1 set back, 1 deleted" in done
    assert Entry.objects.get(pk=run["note"].pk).body == "one\nbob's two, checked\n"
    assert not Entry.objects.filter(pk=run["made"].pk).exists()
    assert "an undo" in done  # the page of the undo's own run, which can be undone in turn


def test_a_stale_preview_undoes_nothing(run):
    client = run["client"]
    key = re.search(r'href="/runs/(\d+)/"', client.get("/runs/").content.decode()).group(1)
    form = {f"v-{run['note'].pk}": 1, "reason": "undo"}
    done = client.post(f"/runs/{key}/undo/", form, follow=True).content.decode()
    assert "changed since the preview" in done
    assert Entry.objects.filter(pk=run["made"].pk).exists()


def test_the_owner_revokes_the_token_from_the_run(run):
    client = run["client"]
    key = re.search(r'href="/runs/(\d+)/"', client.get("/runs/").content.decode()).group(1)
    done = client.post(f"/runs/{key}/revoke/", follow=True).content.decode()
    assert "revoked: it can no longer read or write" in done
    assert ApiToken.objects.get(pk=run["token"]).revoked_at is not None
    assert re.search(r"laptop \(cairn_[\w-]+…\) <span[^>]*>revoked", done)


@pytest.mark.parametrize("role", [None, Role.VIEWER, Role.EDITOR])
def test_others_see_no_run(run, acme, role):
    other = UserFactory(username="other")
    if role:
        Membership.objects.create(project=acme, user=other, role=role)
    client = Client()
    client.force_login(other)
    key = re.search(r'href="/runs/(\d+)/"', run["client"].get("/runs/").content.decode()).group(1)
    assert not re.findall(r'href="/runs/\d+/"', client.get("/runs/").content.decode())
    assert client.get(f"/runs/{key}/").status_code == 404
    assert client.get(f"/runs/{key}/undo/").status_code == 404
    assert client.post(f"/runs/{key}/undo/", {"reason": "x"}).status_code == 404
    assert client.post(f"/runs/{key}/revoke/").status_code == 404
    assert Entry.objects.filter(pk=run["made"].pk).exists()
