"""Where the data and the queue live: a team's own servers (DATABASE_URL, CELERY_BROKER_URL)
or, with neither set, the embedded PostgreSQL and Valkey under var/ (memory_site/embedded.py)."""

from urllib.parse import unquote

from memory_site import embedded
from memory_site.settings.base import env

# --- Database: DATABASE_URL (team mode) or the embedded PostgreSQL ---------------------------
if env("DATABASE_URL", default=""):
    DATABASES = {"default": env.db("DATABASE_URL")}
    # A unix socket directory may be given percent-encoded: postgres://user@%2Frun%2Fpg/db
    DATABASES["default"]["HOST"] = unquote(DATABASES["default"].get("HOST", ""))
else:
    DATABASES = {"default": embedded.database_settings()}  # started on the first connection
DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("DATABASE_CONN_MAX_AGE", default=60))
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# A web process holds at most this many connections, in one pool its threads share. Without it
# Django's persistent connections leak under ASGI: each request runs in a thread of its own, and
# its connection stays open until the garbage collector finds it (a few hundred writes left 95
# idle, and every process answered 503 "too many clients"). A request that finds the pool empty
# waits up to 10 s for a connection. Commands and Celery workers (one thread) keep theirs.
CAIRN_WEB_DB_POOL_SIZE = env.int("CAIRN_WEB_DB_POOL_SIZE", default=10)
# Set by the web processes themselves (memory_site/webserver.py): the pool is theirs.
CAIRN_WEB_PROCESS = env.bool("CAIRN_WEB_PROCESS", default=False)
if CAIRN_WEB_PROCESS and CAIRN_WEB_DB_POOL_SIZE > 0:
    DATABASES["default"]["CONN_MAX_AGE"] = 0  # a connection goes back to the pool, not away
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": CAIRN_WEB_DB_POOL_SIZE,
        "timeout": 10,
        # No ping before each use (a round trip per request): a connection broken by a database
        # restart fails one request, and the pool drops it.
        "check": None,
    }
# Bounded work per request: every SQL statement (0 = no limit).
CAIRN_STATEMENT_TIMEOUT_MS = env.int("CAIRN_STATEMENT_TIMEOUT_MS", default=30_000)
if CAIRN_STATEMENT_TIMEOUT_MS:
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    _options["options"] = (
        f"{_options.get('options', '')} -c statement_timeout={CAIRN_STATEMENT_TIMEOUT_MS}"
    ).strip()

# --- Celery: CELERY_BROKER_URL (team mode) or the embedded Valkey on a unix socket -----------
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default="") or embedded.broker_url()
CELERY_EMBEDDED_BROKER = not env("CELERY_BROKER_URL", default="")
# The embedded broker's socket ('' with a team broker): a write skips queueing while it is absent.
CAIRN_BROKER_SOCKET = str(embedded.BROKER_SOCKET) if CELERY_EMBEDDED_BROKER else ""
# Run tasks in the calling process instead of queueing them (no worker needed; for debugging).
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A write must never hang on a missing broker: publishing gives up fast, sweeps catch up.
CELERY_BROKER_TRANSPORT_OPTIONS = {"socket_connect_timeout": 2, "max_retries": 1}
CELERY_TASK_PUBLISH_RETRY = False
CELERY_TASK_IGNORE_RESULT = True
# A task past the soft limit raises inside (logged, retried later); the hard limit kills.
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CAIRN_TASK_SOFT_TIME_LIMIT", default=300)
CELERY_TASK_TIME_LIMIT = env.int("CAIRN_TASK_TIME_LIMIT", default=360)
