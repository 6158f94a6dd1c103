"""The team-mode files stay in step with the settings (no Docker engine runs on CI machines)."""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def test_compose_runs_postgres_redis_web_and_worker():
    compose = yaml.safe_load((ROOT / "docker" / "compose.yaml").read_text())
    services = compose["services"]
    assert {"db", "redis", "web", "worker", "migrate"} <= set(services)
    assert "pgvector" in services["db"]["image"]
    for name in ("web", "worker", "migrate"):
        env = services[name]["environment"]
        assert env["DATABASE_URL"].startswith("postgres://")
        assert env["CELERY_BROKER_URL"].startswith("redis://")
    assert "celery" in services["worker"]["command"]


def test_compose_keeps_team_modes_secure_defaults():
    compose = yaml.safe_load((ROOT / "docker" / "compose.yaml").read_text())
    for name in ("web", "worker", "migrate"):
        env = compose["services"][name]["environment"]
        assert "DJANGO_DEBUG" not in env  # team mode refuses it
        assert env["DJANGO_SESSION_COOKIE_SECURE"].endswith(":-true}")


def test_env_example_lists_every_variable_the_settings_read():
    settings_source = "\n".join(
        p.read_text() for p in sorted((ROOT / "memory_site" / "settings").glob("*.py"))
    )
    example = (ROOT / ".env.example").read_text()

    names = set(re.findall(r'env(?:\.\w+)?\(\s*"([A-Z_]+)"', settings_source))
    assert names, "the settings read no variables?"
    missing = sorted(n for n in names if n not in example)
    assert missing == [], f"add these to .env.example: {missing}"


def test_compose_serves_this_host_only_and_wants_a_database_password():
    text = (ROOT / "docker" / "compose.yaml").read_text()
    compose = yaml.safe_load(text)
    services = compose["services"]
    published = [str(p) for s in services.values() for p in s.get("ports", [])]
    assert published == ["127.0.0.1:8000:8000"]  # a bare "8000:8000" listens on every interface
    required = re.compile(r"\$\{CAIRN_DB_PASSWORD:\?[^}]+\}")
    assert required.fullmatch(services["db"]["environment"]["POSTGRES_PASSWORD"])
    for name in ("web", "worker", "migrate"):
        url = services[name]["environment"]["DATABASE_URL"]
        assert re.fullmatch(r"postgres://cairn:\$\{CAIRN_DB_PASSWORD:\?[^}]+\}@db:5432/cairn", url)
    assert "CAIRN_DB_PASSWORD=" in (ROOT / ".env.example").read_text()
