"""/metrics: Prometheus text, protected, counting calls by outcome."""

import pytest
from prometheus_client.parser import text_string_to_metric_families

pytestmark = pytest.mark.django_db


def _scrape(client, **headers) -> dict:
    response = client.get("/metrics", REMOTE_ADDR="127.0.0.1", headers=headers)
    assert response.status_code == 200, response.content
    values = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            values[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return values


def _ops(values, operation, outcome) -> float:
    key = ("cairn_operations_total",
           (("operation", operation), ("outcome", outcome), ("surface", "rest")))  # fmt: skip
    return values.get(key, 0.0)


def test_metrics_count_rest_calls_by_outcome(client, api):
    before = _scrape(client)
    assert api.get("/api/v1/search", {"q": "nothing"}).status_code == 200
    assert api.get("/api/v1/entries/999999").status_code == 404
    assert api.get("/api/v1/entries/999998").status_code == 404
    bad = {"Authorization": "Bearer bad"}
    assert client.get("/api/v1/search", {"q": "x"}, headers=bad).status_code == 401
    after = _scrape(client)
    assert _ops(after, "GET v1/search", "ok") - _ops(before, "GET v1/search", "ok") == 1
    assert (
        _ops(after, "GET v1/entries/<ref>", "refused")
        - _ops(before, "GET v1/entries/<ref>", "refused")
        == 2
    )
    failures = ("cairn_token_auth_failures_total", (("surface", "rest"),))
    assert after[failures] - before.get(failures, 0.0) == 1
    latency = ("cairn_operation_seconds_count",
               (("operation", "GET v1/search"), ("surface", "rest")))  # fmt: skip
    assert after[latency] - before.get(latency, 0.0) == 2  # the 401 took time too


def test_metrics_show_the_memory_state(client, acme):
    values = _scrape(client)
    assert values[("cairn_projects", ())] >= 1
    names = "entries revisions mirror_pending mirror_lag_seconds mirror_parked embedding_backlog"
    names += " embedding_oldest_seconds"
    names = [f"cairn_{name}" for name in names.split()]
    assert [name for name in names if (name, ()) not in values] == []


def test_metrics_answer_loopback_only_by_default(client):
    response = client.get("/metrics", REMOTE_ADDR="203.0.113.9")
    assert response.status_code == 403
    assert b"CAIRN_METRICS_TOKEN" in response.content


def test_metrics_want_the_bearer_token_when_one_is_set(client, settings):
    settings.CAIRN_METRICS_TOKEN = "s3cret-scrape"
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 401
    wrong = client.get("/metrics", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    right = client.get(
        "/metrics", REMOTE_ADDR="203.0.113.9", headers={"Authorization": "Bearer s3cret-scrape"}
    )
    assert right.status_code == 200
    assert b"cairn_operations_total" in right.content or b"cairn_entries" in right.content


def test_counters_of_several_processes_add_up_in_the_multiprocess_directory(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    from prometheus_client import CollectorRegistry, generate_latest, multiprocess

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    count = "from ops import metrics; metrics.observe('rest', 'GET x', 'ok', 0.01)"
    for _ in range(2):  # two "web workers"
        subprocess.run([sys.executable, "-c", count], cwd=root, env=env, check=True)
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=str(tmp_path))  # what /metrics reads
    out = generate_latest(registry).decode()
    assert 'cairn_operations_total{operation="GET x",outcome="ok",surface="rest"} 2.0' in out
