import pytest

from history.mirror.manifest import MANIFEST_DIR
from history.mirror.queue import open_mirror
from memory_site import embedded


@pytest.fixture(autouse=True)
def mirror_path(settings, tmp_path):
    settings.CAIRN_MIRROR_PATH = str(tmp_path / "mirror.git")
    settings.CAIRN_MIRROR_PUSH_URL = ""
    return tmp_path / "mirror.git"


class EntriesOnly:
    """The mirror as the entry tests see it: its entry files and revision commits, without the
    projects manifest (tests/history/test_restore.py checks that one)."""

    def __init__(self, mirror):
        self._mirror = mirror

    def __getattr__(self, name):
        return getattr(self._mirror, name)

    def files(self, *args, **kwargs):
        files = self._mirror.files(*args, **kwargs)
        return {p: data for p, data in files.items() if not p.startswith(MANIFEST_DIR)}

    def walk(self):
        return (c for c in self._mirror.walk() if c.revision is not None)


@pytest.fixture
def git(mirror_path):
    """A fresh view of the mirror's entries (re-opened on each call, as a drain would)."""
    return lambda: EntriesOnly(open_mirror())


@pytest.fixture
def broker():
    """The real embedded broker, running and empty (a write with no broker waits for its
    connection attempts; the tests that commit transactions use a live one)."""
    from knowledge.services import background

    started = embedded.start_broker()
    background._broker_down_until = 0.0  # an earlier test may have seen it down
    from memory_site.celery import app

    with app.connection_for_write() as conn:
        conn.default_channel.queue_purge("celery")  # leftovers from earlier runs
    background.tasks_started()  # and the marks of the tasks just purged
    yield
    if started is not None:
        embedded.stop_broker()


@pytest.fixture
def alone_on_the_database(db):
    """The backup drill stops the web server and the worker before `restore`, which refuses to
    run under other sessions: sessions that earlier tests' servers left on this test database
    (a uvicorn thread's, a Celery worker's) are ended, as stopping them would."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid() "
            "AND backend_type = 'client backend'"
        )
