"""MCP upsert refuses a source URL a page must not link, with a tool error naming the field."""

from __future__ import annotations

import pytest

from knowledge.models import Entry
from tests.mcp_api.conftest import text

pytestmark = pytest.mark.django_db


def test_upsert_with_a_javascript_source_url_is_a_tool_error(call, acme):
    result = call(
        "upsert",
        project="acme",
        title="Sourced",
        body="b",
        sources=[{"kind": "url", "external_id": "x1", "url": "javascript:alert(document.cookie)"}],
    )
    assert result.is_error
    answer = text(result)
    assert "sources.url" in answer and "https:" in answer, answer
    assert not Entry.objects.exists()
