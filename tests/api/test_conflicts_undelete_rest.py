"""REST (issue 37): a 409 carries the other change and a merged body; undelete; a diff of a
correction shows what it changed."""

import pytest

from knowledge.models import Entry

pytestmark = pytest.mark.django_db

V1 = "/api/v1"
JSON = "application/json"


def _put(api, **data):
    return api.put(f"{V1}/entries", {"project": "acme", **data}, content_type=JSON)


def test_a_stale_patch_is_a_409_with_the_change_and_the_merged_body(api):
    ref = _put(api, title="Room", body="seats 40\nfloor 2\nTuesdays").json()["entry"]["short_id"]
    _put(api, title="Room", body="seats 45\nfloor 2\nTuesdays")
    response = api.patch(
        f"{V1}/entries/{ref}",
        {"body": "seats 40\nfloor 2\nWednesdays", "expected_version": 1},
        content_type=JSON,
    )
    assert response.status_code == 409
    problem = response.json()
    assert problem["code"] == "entry_conflict" and problem["current_version"] == 2
    assert "-seats 40\n+seats 45" in problem["diff"]
    assert problem["changes"][0]["version"] == 2
    assert problem["merged_body"] == "seats 45\nfloor 2\nWednesdays"
    assert "merged_body as body" in problem["detail"]
    again = api.patch(
        f"{V1}/entries/{ref}",
        {"body": problem["merged_body"], "expected_version": 2},
        content_type=JSON,
    )
    assert again.status_code == 200
    assert Entry.objects.get(short_id=ref).body == "seats 45\nfloor 2\nWednesdays"


def test_undelete_and_the_diff_of_a_correction(api):
    made = _put(api, title="Day", body="Tuesdays", kind="decision", tags=["team"]).json()["entry"]
    ref = made["short_id"]
    assert api.delete(f"{V1}/entries/{ref}?reason=oops").status_code == 204
    gone = api.get(f"{V1}/entries/{ref}")
    assert gone.status_code == 404 and f"/entries/{ref}/undelete" in gone.json()["detail"]
    back = api.post(f"{V1}/entries/{ref}/undelete", {"reason": "oops"}, content_type=JSON)
    assert back.status_code == 200, back.content
    assert (back.json()["id"], back.json()["kind"], back.json()["tags"]) == (
        made["id"],
        "decision",
        ["team"],
    )
    fixed = api.post(
        f"{V1}/entries/{ref}/correct", {"body": "Wednesdays", "reason": "moved"}, content_type=JSON
    ).json()["entry"]["short_id"]
    diff = api.get(f"{V1}/entries/{fixed}/diff").json()
    assert diff["from_entry"] == ref
    assert "-Tuesdays" in diff["diff"] and "+Wednesdays" in diff["diff"]


def test_a_stale_rest_edit_of_untouched_text_applies_on_the_current_version(api):
    ref = _put(api, title="Seats", body="seats 40\ncontact Dana").json()["entry"]["short_id"]
    edit_url = f"{V1}/entries/{ref}/edit"
    theirs = {"operation": "find_replace", "find": "seats 40", "content": "seats 45"}
    assert api.post(edit_url, theirs, content_type=JSON).status_code == 200
    edit = {"operation": "find_replace", "find": "contact Dana", "content": "contact Lee"}
    done = api.post(edit_url, {**edit, "expected_version": 1}, content_type=JSON)
    assert done.status_code == 200, done.content
    assert done.json()["version"] == 3
    assert Entry.objects.get(short_id=ref).body == "seats 45\ncontact Lee"
    # The same edit of the line they changed is refused, with their change.
    again = {"operation": "find_replace", "find": "seats 40", "content": "seats 50"}
    stale = api.post(edit_url, {**again, "expected_version": 1}, content_type=JSON)
    assert stale.status_code == 409
    assert "+seats 45" in stale.json()["diff"]


def test_a_stale_patch_of_fields_they_left_alone_applies_on_the_current_version(api):
    ref = _put(api, title="Deploy", body="Fridays.").json()["entry"]["short_id"]
    url = f"{V1}/entries/{ref}"
    assert api.patch(url, {"kind": "howto"}, content_type=JSON).status_code == 200
    mine = {"tags": ["ops", "db"], "status": "resolved"}
    done = api.patch(url, {**mine, "expected_version": 1}, content_type=JSON)
    assert done.status_code == 200, done.content
    entry = Entry.objects.get(short_id=ref)
    assert (entry.kind, entry.tags, entry.status) == ("howto", ["ops", "db"], "resolved")


def test_a_stale_patch_of_a_field_they_changed_too_shows_both_and_asks_for_a_decision(api):
    ref = _put(api, title="Deploy", body="Fridays.").json()["entry"]["short_id"]
    url = f"{V1}/entries/{ref}"
    assert api.patch(url, {"tags": ["customer"]}, content_type=JSON).status_code == 200
    stale = api.patch(url, {"tags": ["prospect"], "expected_version": 1}, content_type=JSON)
    assert stale.status_code == 409
    problem = stale.json()
    assert problem["both_changed"] == ["tags"] and "applies" not in problem
    assert problem["fields"]["tags"] == {"was": [], "now": ["customer"]}
    assert problem["patch"] == {"tags": ["prospect"]}
    assert "decide what they should be" in problem["detail"] and "edit" not in problem["detail"]


def test_a_stale_correction_is_a_409_and_corrects_nothing(api):
    ref = _put(api, title="Rota", body="Tuesdays").json()["entry"]["short_id"]
    _put(api, title="Rota", body="Thursdays")  # version 2, by someone else
    url = f"{V1}/entries/{ref}/correct"
    stale = api.post(
        url, {"body": "Wednesdays", "reason": "moved", "expected_version": 1}, content_type=JSON
    )
    assert stale.status_code == 409 and stale.json()["current_version"] == 2
    assert Entry.objects.get(short_id=ref).status == "active"  # not superseded
    assert not Entry.objects.filter(supersedes__short_id=ref).exists()
    done = api.post(
        url, {"body": "Wednesdays", "reason": "moved", "expected_version": 2}, content_type=JSON
    )
    assert done.status_code == 201 and done.json()["superseded"]["short_id"] == ref


def test_a_stale_write_that_applies_says_on_which_version(api):
    made = api.post(
        "/api/v1/entries", {"project": "acme", "title": "Onboarding", "body": "# On\n\n- Laptop\n"},
        content_type="application/json",
    ).json()  # fmt: skip
    ref = made["short_id"]
    api.patch(f"/api/v1/entries/{ref}", {"tags": ["people"]}, content_type="application/json")
    res = api.post(
        f"/api/v1/entries/{ref}/edit",
        {"operation": "append", "content": "- Badge", "expected_version": 1},
        content_type="application/json",
    )
    assert res.status_code == 200, res.content
    applied = res.json()["applied_on"]
    assert (applied["read_version"], applied["version"]) == (1, 2)
    assert applied["changes"][0]["version"] == 2
    res = api.patch(
        f"/api/v1/entries/{ref}", {"status": "open", "expected_version": 2},
        content_type="application/json",
    )  # fmt: skip
    assert res.json()["applied_on"]["version"] == 3 and res.json()["tags"] == ["people"]
    fresh = api.patch(f"/api/v1/entries/{ref}", {"tags": ["x"]}, content_type="application/json")
    assert fresh.json()["applied_on"] is None  # not stale: nothing to say
