import pytest

from history.mirror import open_mirror


@pytest.fixture
def mirror_path(settings, tmp_path):
    settings.CAIRN_MIRROR_PATH = str(tmp_path / "mirror.git")
    settings.CAIRN_MIRROR_PUSH_URL = ""
    return tmp_path / "mirror.git"


@pytest.fixture
def git(mirror_path):
    """A fresh view of the mirror (re-opened on each call, as a drain would)."""
    return lambda: open_mirror()
