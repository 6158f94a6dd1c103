"""Deploy hygiene: nothing of an installation goes into the image, team mode needs a real key,
secrets are private from their first byte, security settings come from the environment."""

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from memory_site import embedded

ROOT = Path(__file__).resolve().parents[2]


def test_dockerignore_keeps_the_installation_out_of_the_image():
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {"var/", ".env", ".git/"} <= set(ignored)


def test_compose_has_no_default_secret_key():
    compose = (ROOT / "docker" / "compose.yaml").read_text()
    assert "change-me" not in compose
    assert "DJANGO_SECRET_KEY:?" in compose


def _settings_in(env: dict) -> subprocess.CompletedProcess:
    code = (
        "from django.conf import settings; settings.SECRET_KEY; print(settings.SECURE_HSTS_SECONDS)"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env | {"DJANGO_SETTINGS_MODULE": "memory_site.settings"},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("key", ["", "change-me-in-docker-env", "short"])
def test_team_mode_refuses_a_missing_or_placeholder_secret_key(key):
    env = os.environ | {
        "DATABASE_URL": "postgres://cairn@127.0.0.1:1/cairn",
        "DJANGO_SECRET_KEY": key,
    }
    done = _settings_in(env)
    assert done.returncode != 0
    assert "needs DJANGO_SECRET_KEY" in done.stderr


def test_security_settings_come_from_the_environment():
    env = os.environ | {
        "DATABASE_URL": "postgres://cairn@127.0.0.1:1/cairn",
        "DJANGO_SECRET_KEY": "k" * 50,
        "DJANGO_SECURE_HSTS_SECONDS": "31536000",
    }
    done = _settings_in(env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "31536000"


TEAM = {"DATABASE_URL": "postgres://cairn@127.0.0.1:1/cairn", "DJANGO_SECRET_KEY": "k" * 50}
_COOKIES = (
    "from django.conf import settings; "
    "print(settings.DEBUG, settings.SESSION_COOKIE_SECURE, settings.CSRF_COOKIE_SECURE)"
)


def _without_security_env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_URL"))}


def _run(code: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
        env=_without_security_env() | env | {"DJANGO_SETTINGS_MODULE": "memory_site.settings"},
    )  # fmt: skip


def test_team_mode_refuses_debug():
    done = _run(_COOKIES, TEAM | {"DJANGO_DEBUG": "true"})
    assert done.returncode != 0
    assert "ImproperlyConfigured" in done.stderr and "DJANGO_DEBUG=false" in done.stderr


def test_team_mode_sets_secure_cookies_unless_told_otherwise():
    done = _run(_COOKIES, TEAM)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True", "True"]
    # A plain-http trial deployment may say so explicitly.
    done = _run(_COOKIES, TEAM | {"DJANGO_SESSION_COOKIE_SECURE": "false"})
    assert done.stdout.split() == ["False", "False", "False"], done.stderr


def test_embedded_mode_keeps_debug_and_plain_cookies_possible():
    done = _run(_COOKIES, {"DJANGO_DEBUG": "true"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False", "False"]


def test_secret_files_are_private_from_the_start(tmp_path, monkeypatch):
    monkeypatch.setattr(embedded, "VAR_DIR", tmp_path / "var")
    old = os.umask(0)  # even with a permissive umask
    try:
        embedded.write_private(tmp_path / "var" / "secret_key", "s3cret")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "var" / "secret_key").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "var").stat().st_mode) == 0o700


def test_as_root_the_var_dir_still_lets_the_embedded_postgres_reach_its_data(tmp_path, monkeypatch):
    """As root the embedded server runs as another user: it must traverse var/ (but not list
    it) or it stops at its next checkpoint."""
    monkeypatch.setattr(embedded.os, "geteuid", lambda: 0)
    monkeypatch.setattr(embedded, "VAR_DIR", tmp_path / "var")
    monkeypatch.setattr(embedded, "PG_DIR", tmp_path / "var" / "postgres")
    embedded.write_private(tmp_path / "var" / "admin-password.txt", "pw")
    assert stat.S_IMODE((tmp_path / "var").stat().st_mode) == 0o711
    assert stat.S_IMODE((tmp_path / "var" / "admin-password.txt").stat().st_mode) == 0o600

    monkeypatch.setattr(embedded, "PG_DIR", tmp_path / "elsewhere" / "postgres")
    embedded.ensure_var_dir()
    assert stat.S_IMODE((tmp_path / "var").stat().st_mode) == 0o700


def test_the_admin_login_form_is_rate_limited(client, db, settings):
    from django.core.cache import cache

    from tests.factories import UserFactory

    cache.clear()
    settings.CAIRN_LOGIN_MAX_FAILURES = 3
    UserFactory(username="boss", is_staff=True, password="right-password-123")
    for _ in range(3):
        response = client.post("/admin/login/", {"username": "boss", "password": "wrong"})
        assert response.status_code == 200
    blocked = client.post("/admin/login/", {"username": "boss", "password": "right-password-123"})
    assert blocked.status_code == 429
    assert "Too many failed sign-ins" in blocked.content.decode()
    cache.clear()
    ok = client.post("/admin/login/", {"username": "boss", "password": "right-password-123"})
    assert ok.status_code == 302
