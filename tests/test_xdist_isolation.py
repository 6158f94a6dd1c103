"""Under pytest-xdist every worker is a test run of its own: its own directory inside the run's
(so its own broker socket and mirror), while a subprocess of a worker (a Celery worker started
by a test) shares that worker's directory, as it does in a run without xdist."""

import json
import subprocess
import sys
from pathlib import Path

from tests import settings as test_settings

ROOT = Path(__file__).resolve().parent.parent
SHOW = """
import json, os
import tests.settings as s
print(json.dumps({"var_dir": str(s.TEST_VAR_DIR), "live_env": s.LIVE_ENV, "env": dict(os.environ)}))
"""


def _settings_in(env: dict) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", SHOW], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_each_xdist_worker_has_its_own_directory_and_its_subprocesses_share_it(tmp_path):
    live = {
        k: v
        for k, v in test_settings.LIVE_ENV.items()
        if not k.startswith(("CAIRN_TEST_", "CAIRN_LIVE_", "PYTEST_XDIST_"))
    }
    run = _settings_in(live | {"CAIRN_TEST_VAR_DIR": str(tmp_path / "run")})
    assert run["var_dir"] == str(tmp_path / "run")

    workers = {
        name: _settings_in(run["env"] | {"PYTEST_XDIST_WORKER": name}) for name in ("gw0", "gw1")
    }
    for name, worker in workers.items():
        mine = tmp_path / "run" / name
        assert worker["var_dir"] == str(mine)
        assert worker["env"]["CAIRN_BROKER_DIR"] == str(mine / "valkey")
        assert worker["env"]["CAIRN_MIRROR_PATH"] == str(mine / "mirror.git")
        assert worker["live_env"] == run["live_env"]  # what the isolation test compares with

        child = _settings_in(worker["env"])  # e.g. a Celery worker a test of this worker starts
        assert child["var_dir"] == str(mine)
        assert child["env"]["CAIRN_BROKER_DIR"] == str(mine / "valkey")
