import pytest

from history.mirror.repo import open_mirror
from memory_site import embedded


@pytest.fixture(autouse=True)
def mirror_path(settings, tmp_path):
    settings.CAIRN_MIRROR_PATH = str(tmp_path / "mirror.git")
    settings.CAIRN_MIRROR_PUSH_URL = ""
    return tmp_path / "mirror.git"


@pytest.fixture
def git(mirror_path):
    """A fresh view of the mirror (re-opened on each call, as a drain would)."""
    return lambda: open_mirror()


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
    yield
    if started is not None:
        embedded.stop_broker()
