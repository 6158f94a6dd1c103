"""Prometheus metrics. Counters and histograms are written by every process (web workers and
Celery) into PROMETHEUS_MULTIPROC_DIR when it is set (settings put it under the var dir); the
gauges of the memory's state are read from the database when /metrics is scraped."""

from __future__ import annotations

import os

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily

OPERATIONS = Counter(
    "cairn_operations_total",
    "Operations by surface (mcp, rest, admin, command, task), operation and outcome "
    "(ok, refused, error).",
    ["surface", "operation", "outcome"],
)
LATENCY = Histogram(
    "cairn_operation_seconds",
    "Time per operation, by surface and operation.",
    ["surface", "operation"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)
AUTH_FAILURES = Counter(
    "cairn_token_auth_failures_total",
    "Requests refused for a missing, wrong, expired or revoked bearer token, by surface.",
    ["surface"],
)


def observe(surface: str, operation: str, outcome: str, seconds: float) -> None:
    OPERATIONS.labels(surface, operation, outcome).inc()
    LATENCY.labels(surface, operation).observe(seconds)


def auth_failed(surface: str) -> None:
    AUTH_FAILURES.labels(surface).inc()


class StateCollector:
    """The memory's state at scrape time: mirror backlog, embedding backlog, sizes."""

    def collect(self):
        from memory_site.ops import stats

        state = stats.snapshot()
        for name, doc, value in (
            ("cairn_mirror_pending", "Revisions not yet committed to the git mirror.",
             state["mirror"]["pending"]),
            ("cairn_mirror_lag_seconds", "Age of the oldest revision not yet in the mirror.",
             state["mirror"]["lag_seconds"]),
            ("cairn_mirror_parked", "Revisions set aside by the mirror with their error.",
             state["mirror"]["parked"]),
            ("cairn_embedding_backlog", "Entries whose vectors are missing or out of date.",
             state["embeddings"]["backlog"]),
            ("cairn_entries", "Entries in the memory.", state["entries"]),
            ("cairn_revisions", "Entry revisions kept.", state["revisions"]),
            ("cairn_projects", "Projects.", state["projects"]),
        ):  # fmt: skip
            yield GaugeMetricFamily(name, doc, value=value)


def exposition() -> tuple[bytes, str]:
    """The text exposition of every process's counters plus the state gauges."""
    state = CollectorRegistry()
    state.register(StateCollector())
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        counters = CollectorRegistry()
        multiprocess.MultiProcessCollector(counters)
    else:
        from prometheus_client import REGISTRY as counters
    return generate_latest(counters) + generate_latest(state), CONTENT_TYPE_LATEST
