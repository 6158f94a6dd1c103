"""Settings for a Celery worker subprocess started by the tests: the same as the site's, but
pointed at pytest-django's test database (named in CAIRN_TEST_DATABASE_NAME)."""

import os

from memory_site.settings import *  # noqa: F403
from memory_site.settings import DATABASES

DATABASES["default"]["NAME"] = os.environ["CAIRN_TEST_DATABASE_NAME"]
# Its sessions carry a name of their own, so a test can tell when a killed worker's last
# transaction is over (tests/history/test_worker.py).
DATABASES["default"].setdefault("OPTIONS", {})["application_name"] = "cairn-test-worker"
