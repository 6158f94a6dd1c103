"""Behind a reverse proxy on the same host every caller arrives from loopback: /metrics then
wants its token, and the admin's login limit counts each client the proxy names on its own."""

import pytest
from django.core.cache import cache

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

LOOPBACK = {"REMOTE_ADDR": "127.0.0.1"}


def test_a_forwarded_request_from_loopback_is_not_local(client):
    for header in ("X-Forwarded-For", "Forwarded", "X-Real-IP"):
        response = client.get("/metrics", headers={header: "203.0.113.9"}, **LOOPBACK)
        assert response.status_code == 403, header
        assert b"CAIRN_METRICS_TOKEN" in response.content
    assert client.get("/metrics", **LOOPBACK).status_code == 200  # a local scraper still may


def test_behind_a_proxy_metrics_want_the_token_even_without_forwarding_headers(client, settings):
    settings.CAIRN_BEHIND_PROXY = True
    assert client.get("/metrics", **LOOPBACK).status_code == 403
    settings.CAIRN_METRICS_TOKEN = "scrape-me"
    forwarded = {"X-Forwarded-For": "203.0.113.9", "Authorization": "Bearer scrape-me"}
    assert client.get("/metrics", headers=forwarded, **LOOPBACK).status_code == 200


def _fail_logins(client, address: str, times: int) -> int:
    for _ in range(times):
        response = client.post(
            "/admin/login/",
            {"username": "boss", "password": "wrong"},
            headers={"X-Forwarded-For": f"198.51.100.200, {address}"},  # the proxy appended it
            **LOOPBACK,
        )
    return response.status_code


@pytest.fixture
def boss(settings):
    cache.clear()
    settings.CAIRN_LOGIN_MAX_FAILURES = 3
    UserFactory(username="boss", is_staff=True, password="right-password-123")
    yield
    cache.clear()


@pytest.mark.usefixtures("boss")
def test_the_login_limit_tells_two_clients_behind_the_proxy_apart(client, settings):
    settings.CAIRN_BEHIND_PROXY = True
    assert _fail_logins(client, "192.0.2.1", 4) == 429  # the guesser is stopped
    assert _fail_logins(client, "192.0.2.2", 1) == 200  # the colleague may still try


@pytest.mark.usefixtures("boss")
def test_without_a_trusted_proxy_a_forged_forwarding_header_escapes_no_limit(client):
    assert _fail_logins(client, "192.0.2.1", 3) == 200
    assert _fail_logins(client, "192.0.2.2", 1) == 429  # same caller, whatever it claims
