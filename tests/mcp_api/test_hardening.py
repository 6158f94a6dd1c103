"""Hostile input over MCP: each answer is a result or a clear tool error, never a hang."""

import time

import pytest

from knowledge.models import Entry
from tests.mcp_api.conftest import text

pytestmark = pytest.mark.usefixtures("acme")


@pytest.mark.parametrize("value", ["2026-02-30", "99999999d"])
def test_odd_dates_are_a_tool_error_naming_the_forms(call, value):
    res = call("search", query="x", after=value)
    assert res.is_error
    assert "ISO date" in text(res) and "7d" in text(res)


def test_a_body_over_the_limit_is_a_tool_error_and_nothing_is_saved(call):
    res = call("upsert", project="acme", title="Huge", body="word " * 210_000)
    assert res.is_error
    assert "1,000,000 bytes" in text(res)
    assert not Entry.objects.filter(title="Huge").exists()


def test_replace_section_under_a_hostile_heading_answers(call):
    body = "# " + " " * 5000 + "x \x0b\n\ntext\n\n## Next\n\nold\n"
    made = call("upsert", project="acme", title="H", body=body)
    assert not made.is_error, text(made)
    ref = made.structured_content["entry"]["short_id"]
    res = call("edit", id=ref, operation="replace_section", section="Next", content="new")
    assert not res.is_error, text(res)
    assert Entry.objects.get(short_id=ref).body.endswith("## Next\n\nnew")


def test_search_over_the_caps_is_a_tool_error(call):
    res = call("search", query=" ".join(f'-"w{i}"' for i in range(300)))
    assert res.is_error
    assert "the limit is" in text(res)


LONG_PATH = "p/a" + " " * 200_000 + "b/x"


@pytest.mark.parametrize(
    ("tool", "arguments", "argument", "limit"),
    [
        ("get", {"id": LONG_PATH}, "id", "1,000"),
        ("search", {"query": "x", "subtopic": LONG_PATH}, "subtopic", "500"),
        ("browse", {"project": "acme", "subtopic": LONG_PATH}, "subtopic", "500"),
        ("list_open", {"project": LONG_PATH}, "project", "200"),
        ("upsert", {"project": "acme", "title": "t" * 301, "body": "b"}, "title", "300"),
        ("upsert", {"project": "acme", "title": "T", "body": "b", "reason": "r" * 1001},
         "reason", "1,000"),
        ("upsert", {"project": "acme", "title": "T", "body": "b", "tags": ["t" * 1001]},
         "tags", "1,000"),
        ("upsert", {"project": "acme", "title": "T", "body": "b",
                    "sources": [{"kind": "url", "external_id": "x", "url": "u" * 2001}]},
         "sources", "2,000"),
        ("create_project", {"slug": "s" * 81}, "slug", "80"),
        ("build_context", {"id": LONG_PATH}, "id", "1,000"),
        ("search", {"query": "x" * 2001}, "query", "2,000"),
    ],
)  # fmt: skip
def test_an_overlong_string_argument_is_a_quick_tool_error_naming_it_and_its_limit(
    call, tool, arguments, argument, limit
):
    start = time.perf_counter()
    res = call(tool, **arguments)
    elapsed = time.perf_counter() - start
    assert res.is_error, text(res)
    assert argument in text(res) and f"the limit is {limit}" in text(res), text(res)
    assert elapsed < 2, f"{tool} took {elapsed:.1f}s"
    assert not Entry.objects.filter(title="T").exists()
