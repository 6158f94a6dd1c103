"""Prometheus metrics. Counters and histograms are written by every process (web workers and
Celery) into PROMETHEUS_MULTIPROC_DIR when it is set (settings put it under the var dir); the
gauges of the memory's state come from `state_gauges`, which the site sets."""

from __future__ import annotations

import os

from django.conf import settings
from django.utils.module_loading import import_string
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
    """The memory's state is not ops' to read: CAIRN_OPS_STATE_GAUGES names a callable that
    returns (name, help, value) for each gauge, read when /metrics is scraped."""

    def collect(self):
        path = settings.CAIRN_OPS_STATE_GAUGES
        for name, doc, value in import_string(path)() if path else ():
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
