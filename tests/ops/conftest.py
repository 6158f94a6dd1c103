import pytest
from django.test import Client

from memory_site.ops import stats, timing


@pytest.fixture(autouse=True)
def _clean_ops_state(settings):
    """Each test starts with an empty timing buffer and uncached readiness counts."""
    settings.CAIRN_READY_CACHE_SECONDS = 0
    timing.discard()
    stats.forget()
    yield
    timing.discard()
    stats.forget()


@pytest.fixture
def api(make_token, acme):
    return Client(headers={"Authorization": f"Bearer {make_token(name='ops')}"})


@pytest.fixture
def rows():
    """rows(**filters) → the OperationTiming rows recorded so far (after writing the buffer)."""
    from memory_site.models import OperationTiming

    def get(**filters):
        timing.flush()
        return list(OperationTiming.objects.filter(**filters).order_by("pk"))

    return get
