"""Every REST string input has a maximum length: over it is a quick 422 problem naming the field
and its limit, before any parsing or lookup (a 200,000-character path once held the process)."""

import time
from urllib.parse import quote

import pytest

from knowledge.models import Entry, Project

LONG_PATH = "p/a" + " " * 200_000 + "b/x"


def _entry(**extra):
    return {"project": "acme", "title": "Capped", "body": "text", **extra}


@pytest.mark.parametrize(
    ("method", "url", "payload", "field", "limit"),
    [
        ("get", "/api/v1/entries/lookup", {"path": LONG_PATH}, "path", "1,000"),
        ("get", f"/api/v1/entries/{'x' * 1001}", None, "ref", "1,000"),
        ("get", f"/api/v1/projects/{quote('p' * 201)}", None, "project", "200"),
        ("get", "/api/v1/entries", {"subtopic": LONG_PATH}, "subtopic", "500"),
        ("get", "/api/v1/search", {"q": "x", "subtopic": LONG_PATH}, "subtopic", "500"),
        ("get", "/api/v1/search", {"q": "x", "tags": "t" * 1001}, "tags.0", "1,000"),
        ("get", "/api/v1/search", {"q": "x" * 2001}, "q", "2,000"),
        ("get", "/api/v1/context", {"url": LONG_PATH}, "url", "1,000"),
        ("get", "/api/v1/graph", {"around": LONG_PATH}, "around", "1,000"),
        ("delete", f"/api/v1/entries/x?reason={'r' * 1001}", None, "reason", "1,000"),
        ("put", "/api/v1/entries", _entry(reason="r" * 1001), "reason", "1,000"),
        ("put", "/api/v1/entries", _entry(project="p" * 201), "project", "200"),
        ("put", "/api/v1/entries", _entry(status="s" * 1001), "status", "1,000"),
        ("put", "/api/v1/entries",
         _entry(sources=[{"kind": "url", "external_id": "x1", "url": "u" * 2001}]),
         "sources.0.url", "2,000"),
        ("post", "/api/v1/projects", {"slug": "capped", "description": "d" * 5001},
         "description", "5,000"),
    ],
)  # fmt: skip
def test_an_overlong_string_is_a_quick_422_naming_the_field_and_limit(
    api, method, url, payload, field, limit
):
    start = time.perf_counter()
    if method in ("get", "delete"):
        response = getattr(api, method)(url, payload)
    else:
        response = getattr(api, method)(url, payload, content_type="application/json")
    elapsed = time.perf_counter() - start
    assert response.status_code == 422, response.content[:300]
    problem = response.json()
    assert problem["code"] == "validation_failed"
    assert f"{field}: " in problem["detail"] and f"the limit is {limit}" in problem["detail"]
    assert elapsed < 2, f"{method} {url[:40]} took {elapsed:.1f}s"
    assert not Entry.objects.filter(title="Capped").exists()
    assert not Project.objects.filter(slug="capped").exists()
