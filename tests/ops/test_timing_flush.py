"""A process's timings reach the table (what `manage.py metrics` reads) within seconds, from a
background timer, even when no later call comes to write them."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from ops.models import OperationTiming

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db(transaction=True)

# A "web process": records one call, then stays up and quiet (no call, no exit).
QUIET_PROCESS = """
import time, django
django.setup()
from ops import timing
timing.record(timing.Timer("mcp", "upsert"))
print("recorded", flush=True)
time.sleep(60)
"""


def test_a_recorded_call_is_written_within_10_seconds_without_a_later_call(tmp_path):
    env = os.environ | {
        "DJANGO_SETTINGS_MODULE": "tests.history.worker_settings",
        "CAIRN_TEST_DATABASE_NAME": connection.settings_dict["NAME"],
        "CAIRN_TIMINGS_FLUSH_SECONDS": "2",
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", QUIET_PROCESS], cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout.readline().strip() == "recorded", proc.stdout.read()
        recorded = time.monotonic()
        while not OperationTiming.objects.filter(surface="mcp", operation="upsert").exists():
            assert proc.poll() is None, proc.stdout.read()
            assert time.monotonic() - recorded < 10, "the call never reached the table"
            time.sleep(0.1)
    finally:
        proc.kill()
        proc.wait(10)
