"""Runs over REST: a client marks its writes with X-Cairn-Run, lists its runs, reads one with
the undo's preview, and undoes it with the versions the preview saw."""

from __future__ import annotations

import pytest
from django.test import Client

from knowledge.models import Entry

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent(make_token, acme):
    secret = make_token(name="ci", agent_label="agent:ci")
    return Client(headers={"Authorization": f"Bearer {secret}", "X-Cairn-Run": "deploy 42"})


def test_a_marked_run_is_listed_previewed_and_undone(agent):
    for n in range(3):
        made = agent.post(
            "/api/v1/entries",
            {"project": "acme", "title": f"Step {n}", "body": "done\n"},
            content_type="application/json",
        )
        assert made.status_code == 201, made.content
    [run] = agent.get("/api/v1/runs").json()
    assert (run["run_id"], run["marked"], run["created"], run["agent"]) == (
        "deploy-42", True, 3, "agent:ci",
    )  # fmt: skip
    page = agent.get(f"/api/v1/runs/{run['key']}").json()
    assert [e["action"] for e in page["entries"]] == ["delete"] * 3
    assert page["undo_refusal"] is None
    stale = {str(k): v + 1 for k, v in page["expected"].items()}
    refused = agent.post(
        f"/api/v1/runs/{run['key']}/undo",
        {"reason": "wrong ticket", "expected": stale},
        content_type="application/json",
    )
    assert refused.status_code == 409 and refused.json()["code"] == "run_changed"
    assert f"GET /api/v1/runs/{run['key']}" in refused.json()["detail"]
    done = agent.post(
        f"/api/v1/runs/{run['key']}/undo",
        {"reason": "wrong ticket", "expected": page["expected"]},
        content_type="application/json",
    )
    assert done.status_code == 200, done.content
    assert len(done.json()["deleted"]) == 3 and not Entry.objects.exists()
    assert done.json()["undo_run"] > run["key"]


def test_a_run_nobody_may_see_is_not_found(agent, make_token):
    reader = Client(headers={"Authorization": f"Bearer {make_token(scope='read')}"})
    missing = reader.get("/api/v1/runs/r999")
    assert missing.status_code == 404 and "GET /api/v1/runs lists" in missing.json()["detail"]
