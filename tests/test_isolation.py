"""The test suite never touches the installation: `make test` beside a running `make run` in the
same checkout leaves the live broker and its queue, the mirror and the secret key alone."""

import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from django.conf import settings
from django.db import connection

from memory_site import embedded
from tests import settings as test_settings

ROOT = Path(__file__).resolve().parent.parent


def _under(path: str | Path, root: Path) -> bool:
    return Path(path).resolve().is_relative_to(root.resolve())


def test_the_run_keeps_broker_mirror_and_secret_apart_from_the_installation(db):
    live, mine = test_settings.LIVE_VAR_DIR, test_settings.TEST_VAR_DIR
    assert not _under(mine, live)
    for path in (settings.CAIRN_MIRROR_PATH, settings.CAIRN_BROKER_SOCKET, settings.VAR_DIR):
        assert _under(path, mine) and not _under(path, live), path
    assert (live / "postgres").resolve() == embedded.PG_DIR  # one database server, own database
    assert connection.settings_dict["NAME"].startswith("test_")
    assert settings.CAIRN_MIRROR_PUSH_URL == ""
    secret_file = live / "secret_key"
    if secret_file.exists():
        assert secret_file.read_text().strip() != settings.SECRET_KEY


def _python(code: str, env: dict) -> str:
    # Output through files: a broker started here keeps its inherited descriptors open.
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=err,
            timeout=120,
        )
        out.seek(0), err.seek(0)
        done.stdout, done.stderr = out.read(), err.read()
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


def test_a_test_run_leaves_a_live_installations_queue_and_mirror_untouched(tmp_path):
    """A live installation (its own var/ with a running broker and a task waiting in its queue)
    and a test run started from the same environment: the run starts its broker, purges its
    queue and sends tasks as the suite's fixtures do; the live task is still waiting after."""
    live_var = tmp_path / "live-var"
    base = {
        k: v
        for k, v in test_settings.LIVE_ENV.items()
        if not k.startswith(("CAIRN_TEST_", "CAIRN_LIVE_"))
    }
    live_env = base | {
        "CAIRN_VAR_DIR": str(live_var),
        "CAIRN_PG_DIR": str(embedded.PG_DIR),  # the running server: no second initdb
        "DJANGO_SECRET_KEY": "live-installation-key-" + "1" * 40,
        "DJANGO_SETTINGS_MODULE": "memory_site.settings",
    }
    for key in ("CAIRN_BROKER_DIR", "CAIRN_MIRROR_PATH", "CELERY_BROKER_URL"):
        live_env.pop(key, None)
    setup = "import django; django.setup()\n"
    queue_length = (
        setup + "from memory_site.celery import app\n"
        "with app.connection_for_write() as c:\n"
        "    print(c.default_channel.client.llen('celery'))\n"
    )
    try:
        # One process starts the live broker (it outlives the process), queues a task, and
        # counts the queue: each Django start in a subprocess costs a second or more.
        queued = _python(
            setup + "from memory_site import embedded\n"
            "embedded.start_broker()\n"
            "from memory_site.celery import app\n"
            "app.send_task('history.tasks.mirror_drain')\n"
            "with app.connection_for_write() as c:\n"
            "    print(c.default_channel.client.llen('celery'))\n",
            live_env,
        )
        assert queued == "1"

        # `make test` from the same environment (only the settings module differs).
        run_env = live_env | {"DJANGO_SETTINGS_MODULE": "tests.settings"}
        paths = _python(
            setup
            + textwrap.dedent("""
            import json
            from django.conf import settings
            from memory_site import embedded
            from memory_site.celery import app
            started = embedded.start_broker()
            with app.connection_for_write() as conn:
                conn.default_channel.queue_purge("celery")  # what the broker fixtures do
            app.send_task("history.tasks.mirror_drain")
            if started is not None:
                embedded.stop_broker()
            print(json.dumps([settings.CAIRN_MIRROR_PATH, settings.CAIRN_BROKER_SOCKET,
                              str(settings.VAR_DIR)]))
            """),
            run_env,
        )
        for path in json.loads(paths):
            assert not _under(path, live_var), path

        assert _python(queue_length, live_env) == "1"  # the live task still waits
        assert not (live_var / "mirror.git").exists()
        assert not (live_var / "secret_key").exists()
    finally:
        _python("from memory_site import embedded; embedded.stop_broker()", live_env)
