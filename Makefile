# Cairn: the two commands a newcomer needs are `make run` and `make test`.
# Both create .venv on first use with a Python >= 3.12 found on this machine.

VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat requirements/*.txt | cksum | cut -d' ' -f1)

# Find an interpreter >= 3.12: $PYTHON wins, then python3.13/python3.12/python3 on PATH
# (pyenv shims that fail count as missing), then any 3.12/3.13 installed under pyenv.
define FIND_PYTHON
ok() { "$$1" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; }; \
if [ -n "$$PYTHON" ]; then \
  ok "$$PYTHON" && { echo "$$PYTHON"; exit 0; }; \
  echo "PYTHON=$$PYTHON is not a working Python 3.12 or newer." >&2; exit 1; \
fi; \
for c in python3.13 python3.12 python3; do \
  p=$$(command -v $$c 2>/dev/null) && ok "$$p" && { echo "$$p"; exit 0; }; \
done; \
root=$$(pyenv root 2>/dev/null || echo "$$HOME/.pyenv"); \
for p in $$(ls -d "$$root"/versions/3.13*/bin/python3 "$$root"/versions/3.12*/bin/python3 2>/dev/null); do \
  ok "$$p" && { echo "$$p"; exit 0; }; \
done; \
echo "Cairn needs Python 3.12 or newer and found none (tried PYTHON, python3.13, python3.12, python3, pyenv)." >&2; \
echo "Install one (e.g. 'pyenv install 3.13' or your OS package python3.13), or run: make PYTHON=/path/to/python3.13 ..." >&2; \
exit 1
endef
export FIND_PYTHON

.PHONY: run test lint format check pytest bench clean-var venv chromium redis node-sdk docs \
	docs-serve docs-reference release mutants

venv: $(STAMP)

$(STAMP): requirements/base.txt requirements/dev.txt
	@if [ ! -x $(VPY) ]; then \
	  py=$$(sh -c "$$FIND_PYTHON") || exit 1; \
	  echo "Creating $(VENV) with $$py ($$($$py --version))"; \
	  "$$py" -m venv $(VENV) || exit 1; \
	fi
	$(VPY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(VPY) -m pip install --quiet --disable-pip-version-check -r requirements/dev.txt
	@rm -f $(VENV)/.installed-*; touch $@

## run: set up and start Cairn (embedded Postgres + broker, web on :8000, Celery worker)
run: $(STAMP)
	$(VPY) manage.py migrate --no-input
	$(VPY) manage.py seed_demo --if-empty
	$(VPY) manage.py serve $(ARGS)

## chromium: the browser the browser tests drive (Debian's package; Playwright's download is
## not reachable everywhere). CAIRN_CHROMIUM=/path/to/chrome picks another one.
chromium:
	@if [ -n "$$CAIRN_CHROMIUM" ] || command -v chromium >/dev/null 2>&1 \
	    || command -v chromium-browser >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "Installing Chromium for the browser tests: apt-get install chromium"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else \
	  echo "The browser tests need Chromium and found none." >&2; \
	  echo "  Debian/Ubuntu: sudo apt-get install chromium" >&2; \
	  echo "  elsewhere: .venv/bin/python -m playwright install chromium, then" >&2; \
	  echo "  CAIRN_CHROMIUM=/path/to/the/chrome/it/installed make test" >&2; \
	  exit 1; \
	fi

## redis: Debian's redis-server for the team-mode test (tests/test_team_mode.py), which runs
## Cairn the way the README's team mode does. CAIRN_REDIS_SERVER=/path/to/redis-server picks another.
redis:
	@if [ -n "$$CAIRN_REDIS_SERVER" ] || command -v redis-server >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "Installing Redis for the team-mode test: apt-get install redis-server"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null; \
	else \
	  echo "The team-mode test needs redis-server and found none." >&2; \
	  echo "  Debian/Ubuntu: sudo apt-get install redis-server" >&2; \
	  echo "  elsewhere: install Redis 7, then CAIRN_REDIS_SERVER=/path/to/redis-server make test" >&2; \
	  exit 1; \
	fi

## node-sdk: the official MCP TypeScript SDK for the TypeScript client test
## (tests/mcp_api/oauth/ts/, pinned by its package-lock.json): installed once per lock, so
## later runs need no network. Without Node the test says so and is skipped.
TS_CLIENT := tests/mcp_api/oauth/ts
TS_STAMP := $(TS_CLIENT)/node_modules/.installed-$(shell cksum < $(TS_CLIENT)/package-lock.json | cut -d' ' -f1)
node-sdk:
	@if command -v npm >/dev/null 2>&1; then $(MAKE) -s --no-print-directory $(TS_STAMP); \
	else echo "Node/npm not found: the TypeScript client test will be skipped."; fi

$(TS_STAMP): $(TS_CLIENT)/package.json $(TS_CLIENT)/package-lock.json
	npm ci --prefix $(TS_CLIENT) --no-audit --no-fund --loglevel=error
	@rm -f $(TS_CLIENT)/node_modules/.installed-*; touch $@

## test: lint, migration check and the whole test suite (browser tests included; the strict docs
## build is tests/test_docs_site.py's), in
## TEST_WORKERS processes (pytest-xdist; 0: one process), each with its own test database.
## Tests go out ten at a time, so no worker is left holding a queue of slow ones at the end.
TEST_WORKERS ?= 2
test: $(STAMP) chromium redis node-sdk
	$(VPY) -m ruff check .
	$(VPY) -m ruff format --check .
	$(VPY) manage.py makemigrations --check --dry-run
	$(VPY) -m pytest -n $(TEST_WORKERS) --maxschedchunk=10 $(PYTEST_ARGS)

## check: the inner loop, in one process and well under a minute: ruff, the architecture rules
## and the in-process tests of the core (CHECK_TESTS); tests/quick.py leaves out every module
## that starts a process (subprocess, browser, live server). `make test` still runs everything.
CHECK_TESTS ?= tests/architecture tests/knowledge tests/note_types tests/hardening tests/ops \
	tests/admin/test_graph.py tests/admin/test_schemas.py \
	tests/search/test_query.py tests/search/test_filters.py tests/search/test_chunking.py \
	tests/search/test_providers.py tests/search/test_provider_errors.py
check: $(STAMP)
	$(VPY) -m ruff check .
	$(VPY) -m ruff format --check .
	$(VPY) -m pytest -n 0 -p tests.quick -q $(CHECK_TESTS) $(PYTEST_ARGS)

## mutants: mutation testing of the core's guarantees (mutmut; not part of `make test`). The
## functions listed per guarantee in pyproject.toml [tool.cairn.mutants] are changed one small
## way at a time, and each mutant runs against its guarantee's tests (those that reach it,
## fastest first, until one fails). The closing table counts per guarantee the mutants killed,
## those that survive with a reason in docs/developers/mutants.md, and those that survive
## without one (listed with their diff: the target fails until each is killed or explained).
## MUTANT_WORKERS mutants at once; mutants/ keeps mutmut's copy of the code and its results.
## ONLY="bounds knowledge.markdown" runs part of it: guarantees, or the start of functions' names.
MUTANT_WORKERS ?= 2
ONLY ?=
mutants: $(STAMP)
	@start=$$(date +%s); set -f; \
	names=$$($(VPY) -m tests.mutation.scope $(ONLY)) || exit 1; \
	CAIRN_LIVE_VAR_DIR=$(CURDIR)/var $(VENV)/bin/mutmut run --max-children $(MUTANT_WORKERS) \
	  $$names || exit 1; \
	$(VPY) -m tests.mutation.report $(ONLY); status=$$?; \
	echo "make mutants: $$(( ($$(date +%s) - start) / 60 )) min $$(( ($$(date +%s) - start) % 60 )) s"; \
	exit $$status

lint: $(STAMP)
	$(VPY) -m ruff check .

format: $(STAMP)
	$(VPY) -m ruff format .
	$(VPY) -m ruff check --fix .

## docs: the documentation site, built strictly (a broken link or a page missing from nav fails)
## into var/site/: open var/site/index.html from disk, no server or network needed (search
## included). `make test` runs the same build. docs-serve: the same, live-reloaded, on :8001.
MKDOCS := NO_MKDOCS_2_WARNING=1 $(VPY) -m mkdocs
docs: $(STAMP)
	$(MKDOCS) build --strict --quiet
	@echo "Built the documentation: open var/site/index.html (works from disk, search included)"

docs-serve: $(STAMP)
	$(MKDOCS) serve --strict --dev-addr 127.0.0.1:8001

## docs-reference: rewrite docs/reference/ (MCP, REST, settings, commands) from the code;
## tests/test_docs.py fails until the committed pages match what this writes.
docs-reference: $(STAMP)
	$(VPY) docs/generate.py

## release: check that pyproject.toml's version, CHANGELOG.md and the upgrade notes agree, that
## the reference pages are current and the tree is clean, then tag v<version> (docs/release.py;
## docs/developers/releases.md says how to cut one).
release: $(STAMP)
	$(VPY) docs/release.py
	$(VPY) -m pytest -n 0 -q tests/test_docs.py tests/test_docs_drift.py tests/test_release.py
	$(VPY) docs/release.py --tag

## bench: the write path's benchmark, in its own database (not part of the tests); every other
## benchmark is one command too: bench/README.md lists them with their latest tables.
bench: $(STAMP)
	$(VPY) bench/write_path.py

## clean-var: stop embedded servers and remove local data (asks nothing: careful)
clean-var:
	-$(VPY) manage.py embedded stop
	rm -rf var/
