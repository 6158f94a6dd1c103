import pytest
from django.test import Client

from memory_site import health
from ops import timing


@pytest.fixture(autouse=True)
def _clean_ops_state(settings, db):
    """Each test starts with no timings (buffered, or written by an earlier run's processes
    at exit into the reused test database) and uncached readiness counts."""
    from ops.models import OperationTiming

    settings.CAIRN_READY_CACHE_SECONDS = 0
    timing.discard()
    OperationTiming.objects.all().delete()  # inside the test's transaction: rolled back
    health.forget()
    yield
    timing.discard()
    health.forget()


@pytest.fixture
def api(make_token, acme):
    return Client(headers={"Authorization": f"Bearer {make_token(name='ops')}"})


@pytest.fixture
def rows():
    """rows(**filters) → the OperationTiming rows recorded so far (after writing the buffer)."""
    from ops.models import OperationTiming

    def get(**filters):
        timing.flush()
        return list(OperationTiming.objects.filter(**filters).order_by("pk"))

    return get
