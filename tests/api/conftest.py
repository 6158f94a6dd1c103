import pytest
from django.test import Client


def _client(secret: str) -> Client:
    return Client(headers={"Authorization": f"Bearer {secret}"})


@pytest.fixture
def api(make_token, acme):
    return _client(make_token(name="rest"))


@pytest.fixture
def read_api(make_token, acme):
    return _client(make_token(name="ro", scope="read"))
