import pytest
from django.test import Client


@pytest.fixture
def api(make_token, acme):
    """A REST client with a write token of acme's maintainer."""
    return Client(headers={"Authorization": f"Bearer {make_token(name='rest')}"})
