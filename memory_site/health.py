"""/healthz (the process answers), /readyz (what it depends on) and /metrics (Prometheus).

/healthz is safe to expose. /readyz answers 503 when Cairn cannot serve (database unreachable,
migrations not applied) and 200 when it can; to anyone, that is all it says ({"status": "ready"}
or "not ready"). Its report (each check, "degraded" when background work is stuck: broker down,
mirror revisions parked, the embedding model failing; counts, no names, paths or secrets) goes
to signed-in staff and, when CAIRN_METRICS_TOKEN is set, to callers bearing it. The broker is
asked at most once per CAIRN_READY_CACHE_SECONDS per process, however many ask. /metrics
answers loopback callers only, unless CAIRN_METRICS_TOKEN is set, in which case it wants
`Authorization: Bearer <that token>`. Behind a reverse proxy every caller arrives from
loopback, so a request with forwarding headers (or any request, with CAIRN_BEHIND_PROXY) is not
a loopback caller: it needs the token.
"""

from __future__ import annotations

import hmac
import threading
import time

from django.conf import settings
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from history.selectors import mirror_state, revision_count
from knowledge.db import ping
from knowledge.reads.health import embedding_state, entry_count, project_count
from memory_site.proxies import local_caller
from ops import metrics
from ops.version import VERSION

_migrated = False  # once every migration is applied it stays so for the process's life
# The memory's state is kept for CAIRN_READY_CACHE_SECONDS per process, so polling /readyz or
# scraping /metrics every few seconds costs a handful of indexed counts at most that often.
_lock = threading.Lock()
_cached: tuple[float, dict] | None = None
# One probe of the broker at a time, its answer kept as long: a flood of /readyz (anyone may
# send one) costs the broker one connection per CAIRN_READY_CACHE_SECONDS, not one per request.
_broker_lock = threading.Lock()
_broker_cached: tuple[float, dict] | None = None


def snapshot(*, fresh: bool = False) -> dict:
    global _cached
    with _lock:
        if (
            not fresh
            and _cached
            and time.monotonic() - _cached[0] < settings.CAIRN_READY_CACHE_SECONDS
        ):
            return _cached[1]
    state = {
        "mirror": mirror_state(),
        "embeddings": embedding_state(),
        "entries": entry_count(),
        "revisions": revision_count(),
        "projects": project_count(),
    }
    with _lock:
        _cached = (time.monotonic(), state)
    return state


def forget() -> None:
    global _cached, _broker_cached
    with _lock:
        _cached = None
    with _broker_lock:
        _broker_cached = None


def state_gauges() -> list[tuple[str, str, float]]:
    """The memory's state as Prometheus gauges (CAIRN_OPS_STATE_GAUGES names it for ops.metrics)."""
    state = snapshot()
    return [
        ("cairn_mirror_pending", "Revisions not yet committed to the git mirror.",
         state["mirror"]["pending"]),
        ("cairn_mirror_lag_seconds", "Age of the oldest revision not yet in the mirror.",
         state["mirror"]["lag_seconds"]),
        ("cairn_mirror_parked", "Revisions set aside by the mirror with their error.",
         state["mirror"]["parked"]),
        ("cairn_embedding_backlog", "Entries whose vectors are missing or out of date.",
         state["embeddings"]["backlog"]),
        ("cairn_embedding_oldest_seconds", "Age of the oldest entry waiting for vectors.",
         state["embeddings"]["oldest_seconds"]),
        ("cairn_entries", "Entries in the memory.", state["entries"]),
        ("cairn_revisions", "Entry revisions kept.", state["revisions"]),
        ("cairn_projects", "Projects.", state["projects"]),
    ]  # fmt: skip


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    # The version is what a person reports with a problem and what an upgrade is checked by.
    return JsonResponse({"status": "ok", "version": VERSION})


def check_database() -> dict:
    try:
        ping()
        return {"status": "ok"}
    except Exception as exc:
        return {"status": "fail", "error": type(exc).__name__}


def check_migrations() -> dict:
    global _migrated
    if _migrated:
        return {"status": "ok"}
    try:
        executor = MigrationExecutor(connection)
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except Exception as exc:
        return {"status": "fail", "error": type(exc).__name__}
    if plan:
        return {"status": "fail", "unapplied": len(plan), "fix": "run `manage.py migrate`"}
    _migrated = True
    return {"status": "ok"}


def check_broker() -> dict:
    global _broker_cached
    with _broker_lock:  # held through the probe: concurrent callers wait for its answer
        if (
            _broker_cached
            and time.monotonic() - _broker_cached[0] < settings.CAIRN_READY_CACHE_SECONDS
        ):
            return _broker_cached[1]
        result = _probe_broker()
        _broker_cached = (time.monotonic(), result)
        return result


def _probe_broker() -> dict:
    from memory_site import embedded

    if settings.CAIRN_BROKER_SOCKET:
        up = embedded.broker_running(settings.CAIRN_BROKER_SOCKET)
        return {"status": "ok"} if up else {"status": "degraded", "error": "not running"}
    from celery import current_app

    try:
        with current_app.connection_for_write(url=settings.CELERY_BROKER_URL) as conn:
            conn.ensure_connection(max_retries=0, timeout=1)  # one try: a poll
        return {"status": "ok"}
    except Exception as exc:
        return {"status": "degraded", "error": type(exc).__name__}


def readiness() -> dict:
    started = time.perf_counter()
    checks = {"database": check_database()}
    if checks["database"]["status"] == "ok":
        checks["migrations"] = check_migrations()
    checks["broker"] = check_broker()
    if checks.get("migrations", {}).get("status") == "ok":
        try:
            state = snapshot()
        except Exception as exc:
            checks["state"] = {"status": "fail", "error": type(exc).__name__}
        else:
            mirror = state["mirror"]
            checks["mirror"] = {
                "status": "degraded" if mirror["parked"] or mirror["stale"] else "ok",
                **mirror,
            }
            emb = state["embeddings"]
            checks["embeddings"] = {"status": "degraded" if emb.get("error") else "ok", **emb}
            checks["embeddings"].pop("error", None)
    statuses = {c["status"] for c in checks.values()}
    overall = "fail" if "fail" in statuses else "degraded" if "degraded" in statuses else "ok"
    return {
        "status": overall,
        "checks": checks,
        "took_ms": round((time.perf_counter() - started) * 1000, 1),
    }


def _bearer(request: HttpRequest) -> str | None:
    header = request.headers.get("Authorization", "")
    return header.removeprefix("Bearer ").strip() if header.startswith("Bearer ") else None


def _token_matches(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode(), token.encode())


@never_cache
@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    report = readiness()
    status = 503 if report["status"] == "fail" else 200
    user = getattr(request, "user", None)
    token, given = settings.CAIRN_METRICS_TOKEN, _bearer(request)
    if token and given is not None:
        if _token_matches(given, token):
            return JsonResponse(report, status=status)
        metrics.auth_failed("readyz")
        return JsonResponse(
            {"detail": "Send Authorization: Bearer <CAIRN_METRICS_TOKEN>, or no header for "
                       "the public answer."},
            status=401,
            headers={"WWW-Authenticate": "Bearer"},
        )  # fmt: skip
    if user is not None and user.is_active and user.is_staff:
        return JsonResponse(report, status=status)
    return JsonResponse({"status": "not ready" if status == 503 else "ready"}, status=status)


@never_cache
@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    token = settings.CAIRN_METRICS_TOKEN
    if token:
        given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if not _token_matches(given, token):
            metrics.auth_failed("metrics")
            return HttpResponse(
                "Send Authorization: Bearer <CAIRN_METRICS_TOKEN>.\n",
                status=401,
                content_type="text/plain",
                headers={"WWW-Authenticate": "Bearer"},
            )
    elif not local_caller(request):
        return HttpResponse(
            "/metrics answers loopback callers only, and a request relayed by a proxy is not "
            "one; set CAIRN_METRICS_TOKEN to scrape it from elsewhere with a bearer token.\n",
            status=403,
            content_type="text/plain",
        )
    body, content_type = metrics.exposition()
    return HttpResponse(body, content_type=content_type)
