"""The graph over REST: /context, /graph, /entries/{ref}/relations, /observations."""

import pytest

V1 = "/api/v1"
pytestmark = pytest.mark.django_db


def _put(api, title, body, subtopic=None):
    data = {"project": "acme", "title": title, "body": body}
    if subtopic:
        data["subtopic"] = subtopic
    response = api.put(f"{V1}/entries", data, content_type="application/json")
    assert response.status_code in (200, 201), response.content
    return response.json()["entry"]


def test_context_follows_links_both_ways(api):
    a = _put(api, "Alpha", "- [fact] first #x\n- leads to [[Beta]]")
    b = _put(api, "Beta", "- [fact] second", subtopic="ops")
    response = api.get(f"{V1}/context", {"url": "memory://acme/alpha", "depth": 2})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["primary"][0]["id"] == a["id"]
    assert body["primary"][0]["observations"][0]["tags"] == ["x"]
    assert [
        (r["id"], r["relation"]["type"], r["relation"]["direction"]) for r in body["related"]
    ] == [(b["id"], "leads_to", "outgoing")]
    back = api.get(f"{V1}/context", {"url": f"memory://acme/ops/{b['title'].lower()}"}).json()
    assert back["related"][0]["relation"]["direction"] == "incoming"


def test_context_not_found_names_the_endpoints(api):
    response = api.get(f"{V1}/context", {"url": "memory://acme/missing"})
    assert response.status_code == 404
    assert "GET /api/v1/search" in response.json()["detail"]


def test_context_refuses_bad_bounds(api):
    assert api.get(f"{V1}/context", {"url": "x", "depth": 4}).status_code == 422
    bad = api.get(f"{V1}/context", {"url": "x", "as_of": "someday"})
    assert bad.status_code in (400, 422) and "as_of" in bad.content.decode()


def test_relations_graph_and_observations(api):
    a = _put(api, "Alpha", "- [risk] vendor lock-in\n- uses [[Beta]]\n- uses [[Gamma]]")
    b = _put(api, "Beta", "")
    rel = api.get(f"{V1}/entries/{a['short_id']}/relations").json()
    assert [(o["target_text"], o["entry"] and o["entry"]["id"]) for o in rel["outgoing"]] == [
        ("Beta", b["id"]),
        ("Gamma", None),
    ]
    assert (
        api.get(f"{V1}/entries/{b['id']}/relations").json()["backlinks"][0]["entry"]["id"]
        == (a["id"])
    )
    graph = api.get(f"{V1}/graph", {"project": "acme"}).json()
    assert graph["edges"] == [{"source": a["id"], "target": b["id"], "type": "uses"}]
    assert graph["cut"] is False and graph["limit"] == 2000
    hits = api.get(f"{V1}/observations", {"category": "risk"}).json()
    assert [h["content"] for h in hits] == ["vendor lock-in"]
    assert api.get(f"{V1}/observations").status_code == 422
