"""The embedded PostgreSQL starts on the first connection, not when the settings are imported:
reading the settings (a check, `embedded status`, a tool importing them) starts no server."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_IMPORT = "import memory_site.settings as s; print(s.DATABASES['default']['ENGINE'])"
_QUERY = (
    "import django; django.setup(); from django.db import connection\n"
    "with connection.cursor() as c:\n"
    "    c.execute('SELECT 1'); print(c.fetchone()[0])"
)
_STOP = "from memory_site import embedded; embedded.stop_postgres()"


def _python(code: str, env: dict) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_importing_the_settings_starts_no_server_and_the_first_query_does():
    # A data directory of its own: the run's shared server is never stopped or touched. Not under
    # pytest's tmp_path: every pytest session that starts meanwhile makes /tmp/pytest-of-<user>
    # 0700 again, and the server's own user could then no longer reach it to stop it.
    tmp_path = Path(tempfile.mkdtemp(dir=os.environ["CAIRN_TEST_VAR_DIR"]))
    pg_dir = tmp_path / "pg"
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(
        DJANGO_SETTINGS_MODULE="memory_site.settings",
        CAIRN_VAR_DIR=str(tmp_path / "var"),
        CAIRN_PG_DIR=str(pg_dir),
        DJANGO_SECRET_KEY="cairn-test-suite-only-" + "0" * 40,
    )
    try:
        _python(_IMPORT, env)
        assert not (pg_dir / "postmaster.pid").exists(), "importing the settings started it"
        assert not (pg_dir / "PG_VERSION").exists(), "importing the settings ran initdb"

        assert _python(_QUERY, env) == "1"
        assert (pg_dir / "postmaster.pid").exists()
    finally:
        if (pg_dir / "postmaster.pid").exists():
            _python(_STOP, env)
    assert not (pg_dir / "postmaster.pid").exists()
    shutil.rmtree(tmp_path, ignore_errors=True)
