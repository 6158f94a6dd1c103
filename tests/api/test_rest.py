"""The REST API through Django's test client: same services, bearer or session auth, 7807."""

import pytest
from django.test import Client

from api.site import api as ninja_api
from knowledge.models import Entry, EntryStatus
from tests.snapshot import assert_matches_snapshot

V1 = "/api/v1"


def _put(api, **data):
    data.setdefault("project", "acme")
    return api.put(f"{V1}/entries", data, content_type="application/json")


def _problem(response, status, code):
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["status"] == status and body["code"] == code and body["detail"]
    return body


def test_openapi_schema_matches_the_snapshot(db):
    assert_matches_snapshot("openapi.json", ninja_api.get_openapi_schema())


def test_docs_page_is_served(client):
    assert client.get("/api/docs").status_code == 200


def test_no_credentials_is_401_problem(client, acme):
    response = client.get(f"{V1}/projects")
    body = _problem(response, 401, "unauthorized")
    assert "Bearer" in body["detail"]
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_bad_token_is_401(acme):
    response = Client(headers={"Authorization": "Bearer cairn_nope"}).get(f"{V1}/projects")
    _problem(response, 401, "unauthorized")


def test_projects_list_create_get_patch(api):
    assert [p["slug"] for p in api.get(f"{V1}/projects").json()] == ["acme"]
    created = api.post(f"{V1}/projects", {"slug": "Customer X"}, content_type="application/json")
    assert created.status_code == 201 and created.json()["slug"] == "customer-x"
    _problem(
        api.post(f"{V1}/projects", {"slug": "customer-x"}, content_type="application/json"),
        409,
        "already_exists",
    )
    assert api.get(f"{V1}/projects/ACME CORP").json()["entry_count"] == 0
    patched = api.patch(
        f"{V1}/projects/acme", {"description": "d"}, content_type="application/json"
    )
    assert patched.json()["description"] == "d"
    body = _problem(api.get(f"{V1}/projects/acmee"), 404, "not_found")
    assert body["suggestions"] == ["acme"]


def test_upsert_create_get_list_and_subtopics(api):
    first = _put(api, title="Pricing", body="v1", subtopic="a > b", tags=["Billing"])
    assert first.status_code == 201 and first.json()["outcome"] == "created"
    entry = first.json()["entry"]
    assert entry["path"] == "acme/a/b" and entry["tags"] == ["billing"]
    assert _put(api, title="pricing", body="v1", subtopic="a/b").json()["outcome"] == "unchanged"
    assert _put(api, title="Pricing", body="v2", subtopic="a/b").json()["entry"]["version"] == 2
    got = api.get(f"{V1}/entries/{entry['short_id']}").json()
    assert got["body"] == "v2"
    by_path = api.get(f"{V1}/entries/lookup", {"path": "acme/a/b/pricing"}).json()
    assert by_path["id"] == entry["id"]
    listed = api.get(f"{V1}/entries", {"project": "acme", "subtopic": "a"}).json()
    assert listed["count"] == 1 and listed["items"][0]["id"] == entry["id"]
    tree = api.get(f"{V1}/projects/acme/subtopics").json()
    assert [(n["path"], n["entries"]) for n in tree] == [("a", 0), ("a/b", 1)]
    grown = api.post(
        f"{V1}/projects/acme/subtopics", {"path": "A > C"}, content_type="application/json"
    ).json()
    assert [n["path"] for n in grown] == ["a", "a/b", "a/c"]


def test_put_reports_what_the_write_did_and_a_search_may_have_no_words(api):
    _put(api, title="Plan", body="keep\nold line\n- relates_to [[Nowhere]]", tags=["ops"])
    res = _put(api, title="Plan", body="keep\nnew line\n- relates_to [[Nowhere]]").json()
    change = res["report"]["change"]
    assert (change["added"], change["removed"]) == (1, 1)
    assert change["removed_lines"][0]["text"] == "old line"
    assert res["report"]["relations"][0] == {
        "type": "relates_to", "target": "Nowhere", "resolved": False, "entry": None
    }  # fmt: skip
    found = api.get(f"{V1}/search", {"tags": "ops"}).json()["results"]
    assert [h["title"] for h in found] == ["Plan"]


def test_post_creates_only(api):
    data = {"project": "acme", "title": "Once", "body": "x"}
    assert api.post(f"{V1}/entries", data, content_type="application/json").status_code == 201
    body = _problem(
        api.post(f"{V1}/entries", data, content_type="application/json"), 409, "already_exists"
    )
    assert "PUT" in body["detail"]


def test_validation_errors_are_422_with_field_paths(api):
    response = api.post(
        f"{V1}/entries",
        {"project": "acme", "titel": "x", "sources": [{"kind": "email"}]},
        content_type="application/json",
    )
    body = _problem(response, 422, "validation_failed")
    fields = {e["field"] for e in body["errors"]}
    assert {"title", "titel", "sources.0.external_id"} <= fields
    bad_status = _put(api, title="T", body="b", status="bogus")
    assert _problem(bad_status, 422, "validation_failed")["field"] == "status"
    assert not Entry.objects.exists()


def test_patch_with_stale_version_is_409_with_current_version(api):
    entry = _put(api, title="T", body="v1").json()["entry"]
    _put(api, title="T", body="v2")
    response = api.patch(
        f"{V1}/entries/{entry['id']}",
        {"body": "v3", "expected_version": 1},
        content_type="application/json",
    )
    body = _problem(response, 409, "entry_conflict")
    assert body["current_version"] == 2
    assert Entry.objects.get(pk=entry["id"]).body == "v2"


def test_edit_move_status_verify_correct_history_delete(api, owner):
    ref = _put(api, title="Plan", body="# Plan\n\n## Next\n\nold\n").json()["entry"]["short_id"]
    url = f"{V1}/entries/{ref}"
    edited = api.post(
        f"{url}/edit",
        {"operation": "replace_section", "section": "Next", "content": "new"},
        content_type="application/json",
    )
    assert "## Next\n\nnew" in edited.json()["body"]
    moved = api.post(f"{url}/move", {"subtopic": "x/y"}, content_type="application/json")
    assert moved.json()["path"] == "acme/x/y"
    status = api.post(f"{url}/status", {"status": "open"}, content_type="application/json")
    assert status.json()["status"] == "open"
    refused = api.post(f"{url}/verify", {}, content_type="application/json")
    body = _problem(refused, 403, "forbidden")
    assert "Only a person can verify" in body["detail"] and f"/e/{ref}/" in body["detail"]
    assert Entry.objects.get(short_id=ref).verified_at is None
    corrected = api.post(
        f"{url}/correct", {"body": "right", "reason": "was wrong"}, content_type="application/json"
    )
    assert corrected.status_code == 201
    assert corrected.json()["superseded"]["status"] == EntryStatus.SUPERSEDED
    history = api.get(f"{url}/history").json()
    assert history[0]["correction"] == "corrected by"  # the correcting entry's revision
    assert next(h for h in history if not h["correction"])["reason"] == "superseded: was wrong"
    assert [h["action"] for h in history][-1] == "created"
    assert "git_commit" in history[0]  # null until the mirror commits it
    diff = api.get(f"{url}/diff?from_version=1").json()
    assert diff["from_version"] == 1 and "+" in diff["diff"]
    reverted = api.post(f"{url}/revert", {"to_version": 1}, content_type="application/json")
    assert reverted.status_code == 200, reverted.content
    _problem(api.delete(url), 422, "validation_failed")  # reason is required
    assert api.delete(f"{url}?reason=cleanup").status_code == 204
    _problem(api.get(url), 404, "not_found")


def test_search_and_source_check(api):
    _put(
        api,
        title="Kubernetes upgrade",
        body="Cluster upgraded to 1.31",
        tags=["ops"],
        sources=[{"kind": "ticket", "external_id": "OPS-1"}],
    )
    hits = api.get(f"{V1}/search", {"q": "cluster", "tags": "ops", "after": "7d"}).json()
    assert [h["title"] for h in hits["results"]] == ["Kubernetes upgrade"]
    # No worker runs here: the entry waits for its vectors, and the answer says so.
    assert hits["note"].startswith("1 entry written in the last minute is found by words only")
    assert api.get(f"{V1}/search", {"q": "cluster", "mode": "text"}).json()["note"] == ""
    assert api.get(f"{V1}/search", {"q": "cluster", "before": "7d"}).json()["results"] == []
    _problem(api.get(f"{V1}/search", {"q": "x", "after": "someday"}), 422, "validation_failed")
    checked = api.post(
        f"{V1}/sources/check",
        {
            "project": "acme",
            "sources": [
                {"kind": "ticket", "external_id": "OPS-1"},
                {"kind": "ticket", "external_id": "OPS-2"},
            ],
        },
        content_type="application/json",
    ).json()
    assert [c["logged"] for c in checked] == [True, False]


def test_read_token_cannot_write(read_api):
    body = _problem(_put(read_api, title="T", body="b"), 403, "forbidden")
    assert "read-only" in body["detail"]
    assert read_api.get(f"{V1}/projects").status_code == 200
    assert not Entry.objects.exists()


@pytest.fixture
def browser(owner, acme):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    return client


def test_session_auth_reads_and_needs_csrf_to_write(browser):
    assert browser.get(f"{V1}/projects").status_code == 200
    data = {"project": "acme", "title": "From the browser", "body": "b"}
    refused = browser.post(f"{V1}/entries", data, content_type="application/json")
    assert refused.status_code == 403
    assert not Entry.objects.exists()
    browser.get("/admin/login/")  # sets the csrftoken cookie
    csrf = browser.cookies["csrftoken"].value
    created = browser.post(
        f"{V1}/entries", data, content_type="application/json", headers={"X-CSRFToken": csrf}
    )
    assert created.status_code == 201
    assert created.json()["generated_by"] == "human:owner"


def test_nul_bytes_are_422_not_500(api):
    _problem(_put(api, title="T", body="a\x00b"), 422, "validation_failed")
    _problem(api.get(f"{V1}/search", {"q": "a\x00"}), 422, "validation_failed")
    _problem(api.get(f"{V1}/entries/a%00b"), 422, "validation_failed")


def test_a_database_outage_is_a_503_problem_that_says_retry(api, monkeypatch):
    from django.db import OperationalError

    from api import auth as rest_auth  # not `import api.auth`: `api` is the client fixture

    def down(secret):
        raise OperationalError("connection refused")

    monkeypatch.setattr(rest_auth, "token_authenticate", down)
    response = api.get(f"{V1}/projects")
    body = _problem(response, 503, "database_unavailable")
    assert "Retry in a few seconds" in body["detail"]
    assert response["Retry-After"] == "5"


def test_entries_carry_their_size_and_sort_by_it(api):
    for title, body in (("Short", "One line."), ("Long", "a\nb\nc\n" * 50), ("Mid", "x" * 60)):
        assert api.post(
            "/api/v1/entries", {"project": "acme", "title": title, "body": body},
            content_type="application/json",
        ).status_code == 201  # fmt: skip
    rows = api.get("/api/v1/entries", {"sort": "size"}).json()["items"]
    assert [(r["title"], r["chars"], r["lines"]) for r in rows] == [
        ("Long", 300, 150),
        ("Mid", 60, 1),
        ("Short", 9, 1),
    ]
    newest = api.get("/api/v1/entries").json()["items"]
    assert [r["title"] for r in newest] == ["Mid", "Long", "Short"]
    assert api.get("/api/v1/entries", {"sort": "biggest"}).status_code == 422
