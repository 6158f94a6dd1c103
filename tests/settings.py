"""Settings for the test suite: the site's own, with everything that belongs to the installation
moved under a temporary directory, so `make test` beside a running `make run` leaves the live
service, its queue, its mirror and its secret alone.

The embedded PostgreSQL server is shared (pytest-django makes its own `test_` database on it);
the broker socket, the git mirror, the secret key, the admin password and static files are the
run's own. Subprocesses (Celery workers started by tests) inherit the directory through
CAIRN_TEST_VAR_DIR. Under pytest-xdist each worker (gw0, gw1, …) takes a directory of its own
inside the run's, and pytest-django gives it a database of its own (test_cairn_gw0, …).
"""

import atexit
import json
import os
import shutil
import tempfile
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
# What `make run` in this checkout uses (before any test override), for the isolation test; an
# xdist worker or a subprocess gets it from the process that isolated the run.
LIVE_ENV = json.loads(os.environ.get("CAIRN_TEST_LIVE_ENV") or "null") or dict(os.environ)
LIVE_VAR_DIR = Path(
    os.environ.get("CAIRN_LIVE_VAR_DIR") or os.environ.get("CAIRN_VAR_DIR") or BASE_DIR / "var"
).resolve()
# Who isolated the environment: "1" for a run without xdist, the worker's id under xdist.
ISOLATED_BY = os.environ.get("PYTEST_XDIST_WORKER") or "1"


def _remove_when_done(var_dir: Path) -> None:
    def cleanup() -> None:
        from memory_site import embedded

        if embedded.broker_running():  # a test broker a fixture left running
            embedded.stop_broker()
        shutil.rmtree(var_dir, ignore_errors=True)

    atexit.register(cleanup)


if os.environ.get("CAIRN_TEST_ISOLATED") == ISOLATED_BY:
    # A subprocess of the run (a Celery worker): its environment is already the run's, with
    # whatever the test that started it chose (e.g. its own CAIRN_MIRROR_PATH).
    TEST_VAR_DIR = Path(os.environ["CAIRN_TEST_VAR_DIR"])
else:
    if os.environ.get("CAIRN_TEST_ISOLATED"):
        # An xdist worker: the controller isolated the run; the worker's broker socket and
        # mirror go in a directory of its own inside the run's.
        TEST_VAR_DIR = Path(os.environ["CAIRN_TEST_VAR_DIR"]) / ISOLATED_BY
        TEST_VAR_DIR.mkdir(parents=True, exist_ok=True)
        _remove_when_done(TEST_VAR_DIR)
    elif os.environ.get("CAIRN_TEST_VAR_DIR"):
        TEST_VAR_DIR = Path(os.environ["CAIRN_TEST_VAR_DIR"]).resolve()
        TEST_VAR_DIR.mkdir(parents=True, exist_ok=True)
    else:
        TEST_VAR_DIR = Path(tempfile.mkdtemp(prefix="cairn-test-"))
        _remove_when_done(TEST_VAR_DIR)
    os.environ.update(
        {
            "CAIRN_TEST_ISOLATED": ISOLATED_BY,
            "CAIRN_TEST_VAR_DIR": str(TEST_VAR_DIR),
            "CAIRN_TEST_LIVE_ENV": json.dumps(LIVE_ENV),
            "CAIRN_LIVE_VAR_DIR": str(LIVE_VAR_DIR),
            "CAIRN_PG_DIR": os.environ.get("CAIRN_PG_DIR") or str(LIVE_VAR_DIR / "postgres"),
            "CAIRN_VAR_DIR": str(TEST_VAR_DIR),
            "CAIRN_BROKER_DIR": str(TEST_VAR_DIR / "valkey"),
            "CAIRN_MIRROR_PATH": str(TEST_VAR_DIR / "mirror.git"),
            "CAIRN_MIRROR_PUSH_URL": "",  # never push test commits to the installation's remote
            "CELERY_BROKER_URL": "",  # the run's own embedded broker, never a team broker
            "DJANGO_SECRET_KEY": "cairn-test-suite-only-" + "0" * 40,
        }
    )

from memory_site.settings import *  # noqa: E402, F403

# Tests write timings when they ask (timing.flush()), inside their own transaction; a thread
# writing them on its own connection would race them. tests/ops/test_timing_flush.py runs one.
CAIRN_TIMINGS_FLUSH_THREAD = False
