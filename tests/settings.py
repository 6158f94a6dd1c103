"""Settings for the test suite: the site's own, with everything that belongs to the installation
moved under a temporary directory, so `make test` beside a running `make run` leaves the live
service, its queue, its mirror and its secret alone.

The embedded PostgreSQL server is shared (pytest-django makes its own `test_` database on it);
the broker socket, the git mirror, the secret key, the admin password and static files are the
run's own. Subprocesses (Celery workers started by tests) inherit the directory through
CAIRN_TEST_VAR_DIR.
"""

import atexit
import os
import shutil
import tempfile
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
# What `make run` in this checkout uses (before any test override), for the isolation test.
LIVE_ENV = dict(os.environ)
LIVE_VAR_DIR = Path(
    os.environ.get("CAIRN_LIVE_VAR_DIR") or os.environ.get("CAIRN_VAR_DIR") or BASE_DIR / "var"
).resolve()

if os.environ.get("CAIRN_TEST_ISOLATED"):
    # A subprocess of the run (a Celery worker): its environment is already the run's, with
    # whatever the test that started it chose (e.g. its own CAIRN_MIRROR_PATH).
    TEST_VAR_DIR = Path(os.environ["CAIRN_TEST_VAR_DIR"])
else:
    if os.environ.get("CAIRN_TEST_VAR_DIR"):
        TEST_VAR_DIR = Path(os.environ["CAIRN_TEST_VAR_DIR"]).resolve()
        TEST_VAR_DIR.mkdir(parents=True, exist_ok=True)
    else:
        TEST_VAR_DIR = Path(tempfile.mkdtemp(prefix="cairn-test-"))

        def _cleanup() -> None:
            from memory_site import embedded

            if embedded.broker_running():  # a test broker a fixture left running
                embedded.stop_broker()
            shutil.rmtree(TEST_VAR_DIR, ignore_errors=True)

        atexit.register(_cleanup)
    os.environ.update(
        {
            "CAIRN_TEST_ISOLATED": "1",
            "CAIRN_TEST_VAR_DIR": str(TEST_VAR_DIR),
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
