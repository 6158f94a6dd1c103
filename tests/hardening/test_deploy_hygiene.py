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


def test_secret_files_are_private_from_the_start(tmp_path, monkeypatch):
    monkeypatch.setattr(embedded, "VAR_DIR", tmp_path / "var")
    old = os.umask(0)  # even with a permissive umask
    try:
        embedded.write_private(tmp_path / "var" / "secret_key", "s3cret")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "var" / "secret_key").stat().st_mode) == 0o600
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
