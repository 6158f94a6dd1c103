"""Metric labels and timing rows are named by the code's own routes and a fixed set of HTTP
methods, never by what a caller sends: made-up methods and paths add no series and no rows."""

import pytest

pytestmark = pytest.mark.django_db


def _metric_lines(client) -> set[str]:
    response = client.get("/metrics", REMOTE_ADDR="127.0.0.1")
    assert response.status_code == 200
    # The sample names with their labels; the values change, the series must not.
    return {line.rsplit(" ", 1)[0] for line in response.content.decode().splitlines()}


def _names(rows) -> set[tuple[str, str]]:
    return {(row.surface, row.operation) for row in rows(surface="rest")}


def test_made_up_methods_and_paths_add_no_series_and_no_timing_rows(client, api, rows):
    # Warm up: one call of each known shape, so their series exist before counting.
    api.get("/api/v1/projects")
    api.generic("MWARM", "/api/v1/projects")
    api.get("/api/v1/no-such-thing-warm")
    api.generic("MWARM", "/api/v1/no-such-thing-warm")
    before, names_before = _metric_lines(client), _names(rows)
    for i in range(30):
        api.generic(f"MFOO{i}", "/api/v1/projects")
        api.generic(f"MBAR{i}", f"/api/v1/made-up-{i}/path")
        api.get(f"/api/v1/no-such-thing-{i}")
        api.get(f"/api/made-up-{i}")
    after, names_after = _metric_lines(client), _names(rows)
    assert sorted(after - before) == []
    assert names_after == names_before
    assert ("rest", "other v1/projects") in names_after  # an unknown method, a known route
    assert ("rest", "GET other") in names_after  # a known method, no route


def test_known_methods_and_routes_keep_their_names(api, rows):
    api.get("/api/v1/projects")
    api.options("/api/v1/projects")
    assert {"GET v1/projects", "OPTIONS v1/projects"} <= {r.operation for r in rows()}
