"""Note types and schemas over REST: validate, infer, diff, note types, and the modes on PUT."""

from __future__ import annotations

V1 = "/api/v1"


def _put(api, title, body, kind="person"):
    data = {"project": "acme", "title": title, "body": body, "kind": kind}
    return api.put(f"{V1}/entries", data, content_type="application/json")


def _people(api):
    for name in ("Ada", "Grace", "Ken"):
        assert _put(api, name, "- [role] Engineer").status_code == 201
    dennis = _put(api, "Dennis", "- [team] Core")
    assert dennis.status_code == 201
    return dennis.json()["entry"]["short_id"]


def test_infer_validate_diff_and_note_types(api):
    dennis = _people(api)
    inferred = api.get(f"{V1}/projects/acme/schemas/infer?note_type=person").json()
    assert (
        inferred["optional"] == ["role", "team"]
        or "role" in inferred["required"] + inferred["optional"]
    )
    assert _put(api, "person", "```yaml\nrole: string\n```", kind="schema").status_code == 201
    [run] = api.get(f"{V1}/projects/acme/schemas/validate?note_type=person").json()
    misfits = [e["title"] for e in run["entries"] if not e["fits"]]
    assert misfits == ["Dennis"] and run["schema"]["version"] == 1 and run["fitting"] == 3
    one = api.get(f"{V1}/entries/{dennis}/schema").json()
    assert one["entries"][0]["misfits"][0]["field"] == "role"
    drift = api.get(f"{V1}/projects/acme/schemas/diff?note_type=person").json()
    assert [f["field"] for f in drift["new_fields"]] == ["team"]  # 25 %: at the threshold
    types = {t["kind"]: t for t in api.get(f"{V1}/projects/acme/note-types").json()}
    assert types["person"]["entries"] == 4 and types["person"]["fitting"] == 3


def test_modes_on_put_warn_reports_strict_refuses_with_a_problem(api):
    assert _put(api, "person", "```yaml\nrole: string\n```", kind="schema").status_code == 201
    patched = api.patch(
        f"{V1}/projects/acme", {"schema_mode": "warn"}, content_type="application/json"
    )
    assert patched.json()["schema_mode"] == "warn"
    warned = _put(api, "Dennis", "no role")
    assert warned.status_code == 201 and warned.json()["schema_report"]["fits"] is False
    api.patch(f"{V1}/projects/acme", {"schema_mode": "strict"}, content_type="application/json")
    refused = _put(api, "Linus", "no role")
    assert refused.status_code == 422
    body = refused.json()
    assert body["code"] == "schema_misfit" and body["misfits"][0]["field"] == "role"
    assert body["schema_version"] == 1 and "schemas/validate" in body["detail"]
    assert _put(api, "Linus", "- [role] Kernel").status_code == 201


def test_a_broken_schema_is_a_422_naming_the_problem(api):
    response = _put(api, "person", "```yaml\nrole: strng\n```", kind="schema")
    assert response.status_code == 422 and "unknown type" in response.json()["detail"]
