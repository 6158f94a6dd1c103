"""Shared benchmark setup: Django on a separate database, so benchmarks never touch real data."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from django.conf import settings as django_settings

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


def setup_django(db_name: str) -> None:
    """Point Django at `db_name` on the same server (created and migrated when missing)."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_site.settings")
    import psycopg
    from django.conf import settings

    from memory_site import embedded

    db = settings.DATABASES["default"]
    embedded.ensure_started(db)  # settings no longer start the embedded server
    admin = psycopg.connect(
        host=db.get("HOST") or None,
        port=db.get("PORT") or None,
        user=db.get("USER") or None,
        password=db.get("PASSWORD") or None,
        dbname="postgres",
        autocommit=True,
    )
    with admin:
        if not admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [db_name]).fetchone():
            admin.execute(f'CREATE DATABASE "{db_name}"')
    db["NAME"] = db_name
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    # The benchmarks embed inline (timed); with no broker running, queuing each write's
    # background task would only add a connection timeout per write.

    django_settings.CAIRN_BACKGROUND_TASKS = False


def percentile(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


def write_json(name: str, payload: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = RESULTS / f"{name}-{stamp}.json"
    path.write_text(json.dumps(payload, indent=2, default=str))
    return path


def table(headers: list[str], rows: list[list]) -> str:
    def fmt(v):
        return f"{v:.3f}" if isinstance(v, float) else str(v)

    cells = [[fmt(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |"
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in cells
    ]
    return "\n".join([line, sep, *body])
