"""REST filters go by their published names (`kind`, `category`) and mean what a search's
filters mean: the listing and the search share one scope (knowledge.search.scope)."""

from django.test import Client

V1 = "/api/v1"


def _put(api: Client, **data) -> dict:
    response = api.put(
        f"{V1}/entries", {"project": "acme", **data}, content_type="application/json"
    )
    assert response.status_code in (200, 201), response.content
    return response.json()["entry"]


def _titles(response) -> list[str]:
    assert response.status_code == 200, response.content
    body = response.json()
    return sorted(e["title"] for e in body.get("items", body.get("results", [])))


def test_the_entry_listing_filters_by_kind_and_lists_transcripts_too(api):
    _put(api, title="Use Postgres", body="x", kind="decision")
    _put(api, title="Call with Ann", body="talked", kind="transcript")
    _put(api, title="Loose note", body="y")

    assert _titles(api.get(f"{V1}/entries", {"kind": "decision"})) == ["Use Postgres"]
    assert _titles(api.get(f"{V1}/entries", {"kind": ["decision", "transcript"]})) == [
        "Call with Ann",
        "Use Postgres",
    ]
    assert len(_titles(api.get(f"{V1}/entries"))) == 3


def test_the_entry_listing_refuses_an_unknown_status_as_search_does(api):
    for path in ("entries", "search"):
        response = api.get(f"{V1}/{path}", {"status": "done"})
        assert response.status_code == 422, (path, response.content)
        assert "active" in response.json()["detail"]  # it names the statuses there are


def test_search_filters_by_category(api):
    _put(api, title="Cache risk", body="- [risk] the cache may fill up")
    _put(api, title="Cache fact", body="- [fact] the cache is 2 GB")

    found = api.get(f"{V1}/search", {"q": "cache", "category": "risk", "mode": "text"})
    assert _titles(found) == ["Cache risk"]


def test_post_creates_through_entry_create_with_its_sources(api):
    data = {
        "project": "acme",
        "title": "Once",
        "body": "x",
        "sources": [{"kind": "ticket", "external_id": "OPS-7"}],
    }
    created = api.post(f"{V1}/entries", data, content_type="application/json")
    assert created.status_code == 201, created.content
    assert [s["external_id"] for s in created.json()["sources"]] == ["OPS-7"]

    again = api.post(f"{V1}/entries", data, content_type="application/json")
    assert again.status_code == 409
    body = again.json()
    assert body["code"] == "already_exists" and body["entry"] == created.json()["short_id"]
    assert f"PATCH /api/v1/entries/{body['entry']}" in body["detail"]
