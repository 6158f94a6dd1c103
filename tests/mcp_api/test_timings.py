"""MCP tool calls are timed at the tool wrapper: one row each, outcome and content size."""

import pytest
from django.utils import timezone

from ops import metrics, timing
from ops.models import OperationTiming

pytestmark = pytest.mark.usefixtures("acme")


def _rows(since):
    timing.flush()
    return list(OperationTiming.objects.filter(surface="mcp", at__gte=since).order_by("pk"))


def test_each_tool_call_is_recorded_with_its_outcome(call):
    timing.discard()
    since = timezone.now()
    assert not call("upsert", project="acme", title="Timed", body="x" * 300).is_error
    assert not call("search", query="timed").is_error
    assert call("get", id_or_path=987654).is_error
    upsert, search, get = _rows(since)
    assert (upsert.operation, upsert.outcome, upsert.content_bytes) == ("upsert", "ok", 300)
    assert upsert.db_ms > 0 and upsert.total_ms >= upsert.db_ms
    assert (search.operation, search.outcome, search.content_bytes) == ("search", "ok", None)
    assert (get.operation, get.outcome) == ("get", "refused")
    assert upsert.entries is not None


def test_a_failure_to_record_does_not_fail_the_tool_call(call, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("metrics are down")

    monkeypatch.setattr(metrics, "observe", broken)
    result = call("upsert", project="acme", title="Still saved", body="kept")
    assert not result.is_error
    assert result.structured_content["outcome"] == "created"


def _auth_failures() -> float:
    from prometheus_client.parser import text_string_to_metric_families

    body, _ = metrics.exposition()
    for family in text_string_to_metric_families(body.decode()):
        for sample in family.samples:
            if sample.name == "cairn_token_auth_failures_total" and sample.labels == {
                "surface": "mcp"
            }:
                return sample.value
    return 0.0


def test_a_wrong_token_counts_as_an_auth_failure(mcp_url):
    import httpx

    before = _auth_failures()
    response = httpx.post(
        mcp_url,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": "Bearer not-a-token", "Accept": "application/json"},
    )
    assert response.status_code == 401
    assert _auth_failures() - before == 1
