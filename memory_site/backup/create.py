"""`manage.py backup DIR`: a consistent snapshot of an installation, in three files.

- database.dump: the whole database, `pg_dump --format=custom`, taken in one exported snapshot;
- mirror.bundle: the git mirror (`git bundle`, every ref), taken under the mirror's lock after a
  drain, so every commit the dump records is in it (revisions still pending in the dump are
  committed by the restored installation's worker);
- manifest.json: Cairn's version, the migrations applied per app, counts, the time, the
  database server's and pg_dump's versions, the mirror's head.

`manage.py restore DIR` (restore.py) reads them back. The PostgreSQL client
programs are the embedded server's own when the database is embedded; with DATABASE_URL the
first new enough of the ones on PATH and the bundled ones.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.migrations.recorder import MigrationRecorder

from history import mirror
from knowledge.models import Entry, Membership, Project, Subtopic
from memory_site import embedded
from ops.version import VERSION

FORMAT = 1  # of the snapshot directory; restore refuses another
DUMP, BUNDLE, MANIFEST = "database.dump", "mirror.bundle", "manifest.json"
Step = Callable[[str], None]


class BackupError(Exception):
    """Something the operator must fix first; the message says what."""


# --- the tools --------------------------------------------------------------------------------


def cairn_version() -> str:
    return VERSION


def server_major() -> int:
    connection.ensure_connection()
    return connection.pg_version // 10000


def _major(program: Path) -> int:
    out = subprocess.run(
        [str(program), "--version"], capture_output=True, text=True, timeout=30, check=True
    ).stdout
    found = re.search(r"(\d+)(?:\.\d+)?", out)
    return int(found.group(1)) if found else 0


def embedded_database() -> bool:
    return settings.DATABASES["default"]["ENGINE"] == embedded.ENGINE


def client_tool(name: str, at_least: int) -> tuple[Path, int]:
    """The `name` program (pg_dump or pg_restore) of version `at_least` or newer, and its
    version: the embedded server's own when embedded, else PATH's, else the bundled one."""
    bundled = embedded.client_binary(name)
    candidates = [bundled] if embedded_database() else [shutil.which(name), bundled]
    seen = []
    for candidate in candidates:
        if not candidate or not Path(candidate).exists():
            continue
        try:
            version = _major(Path(candidate))
        except (OSError, subprocess.SubprocessError):
            continue
        if version >= at_least:
            return Path(candidate), version
        seen.append(f"{candidate} is version {version}")
    found = "; ".join(seen) or "none found"
    raise BackupError(
        f"{name} {at_least} or newer is needed ({found}). Install the PostgreSQL {at_least} "
        f"client programs (Debian/Ubuntu: `apt-get install postgresql-client-{at_least}`, from "
        "apt.postgresql.org when your release lacks it) and put them first on PATH."
    )


def database_env() -> dict[str, str]:
    """libpq's environment for the default database (what psql would get)."""
    db = connection.settings_dict
    embedded.ensure_started(db)
    options = db.get("OPTIONS") or {}
    env = {
        "PGHOST": str(db.get("HOST") or ""),
        "PGPORT": str(db.get("PORT") or ""),
        "PGUSER": str(db.get("USER") or ""),
        "PGPASSWORD": str(db.get("PASSWORD") or ""),
        "PGDATABASE": str(db.get("NAME") or ""),
        "PGSSLMODE": str(options.get("sslmode") or ""),
        "PGSSLROOTCERT": str(options.get("sslrootcert") or ""),
        "PGSSLCERT": str(options.get("sslcert") or ""),
        "PGSSLKEY": str(options.get("sslkey") or ""),
    }
    return os.environ | {k: v for k, v in env.items() if v}


def run(command: list, *, what: str, env: dict | None = None) -> str:
    """Run a program; its error output becomes the message when it fails."""
    try:
        done = subprocess.run(
            [str(c) for c in command], capture_output=True, text=True, env=env, check=False
        )
    except OSError as exc:
        raise BackupError(f"Could not {what}: {exc}") from exc
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip()[-2000:]
        raise BackupError(f"Could not {what} ({Path(str(command[0])).name} said: {detail})")
    return done.stdout


def git() -> str:
    found = shutil.which("git")
    if not found:
        raise BackupError(
            "git is needed for the mirror's bundle and found none on PATH. Install git "
            "(Debian/Ubuntu: `apt-get install git`)."
        )
    return found


# --- what a snapshot records ------------------------------------------------------------------


def migrations() -> dict[str, list[str]]:
    """The migrations applied, per app, as the django_migrations table says."""
    out: dict[str, list[str]] = {}
    for app, name in MigrationRecorder.Migration.objects.order_by("app", "id").values_list(
        "app", "name"
    ):
        out.setdefault(app, []).append(name)
    return out


def counts() -> dict[str, int]:
    return {
        "projects": Project.objects.count(),
        "subtopics": Subtopic.objects.count(),
        "memberships": Membership.objects.count(),
        "entries": Entry.objects.count(),
        "revisions": Entry.history.count(),
        "users": get_user_model().objects.count(),
    }


# --- backup -----------------------------------------------------------------------------------


def _target(path: Path) -> Path:
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise BackupError(
            f"{path} already exists and is not an empty directory; pass a new directory "
            "(a backup never overwrites another)."
        )
    # It holds password hashes and token digests: private to this user.
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.chmod(0o700)
    return path


def _bundle(target: Path) -> str | None:
    """Bundle the mirror into target; its head, or None for a mirror with no commit yet."""
    repo = mirror.open_mirror()
    head = repo.head()
    if head is None:
        return None
    tool = git()
    run([tool, "-C", repo.path, "bundle", "create", "--quiet", target / BUNDLE, "--all"],
        what="bundle the git mirror")  # fmt: skip
    run([tool, "-C", repo.path, "bundle", "verify", "--quiet", target / BUNDLE],
        what="check the mirror's bundle")  # fmt: skip
    return str(head.id)


def backup(path: Path, *, step: Step = lambda name: None) -> dict:
    """Write a snapshot of the database and the mirror into the new directory `path`; return
    its manifest."""
    step("check")
    major = server_major()
    pg_dump, dump_version = client_tool("pg_dump", major)
    target = _target(Path(path))
    step("drain the mirror")
    drained = mirror.drain()
    step("dump the database")
    # Under the mirror's lock no drain commits: the dump and the bundle agree.
    with mirror.advisory_lock(wait=True), transaction.atomic():
        with connection.cursor() as cur:
            cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            cur.execute("SELECT pg_export_snapshot()")
            snapshot = cur.fetchone()[0]
        run([pg_dump, "--format=custom", f"--snapshot={snapshot}", "--file", target / DUMP],
            what="dump the database", env=database_env())  # fmt: skip
        manifest = {
            "format": FORMAT,
            "cairn_version": cairn_version(),
            "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "database": {
                "server_version": connection.pg_version,
                "server_major": major,
                "pg_dump_major": dump_version,
                "embedded": embedded_database(),
            },
            "migrations": migrations(),
            "counts": counts(),
            "mirror": {
                "branch": settings.CAIRN_MIRROR_BRANCH,
                "parked": drained.parked,
                "pending": mirror.pending().count(),
            },
        }
        step("bundle the mirror")
        manifest["mirror"]["head"] = _bundle(target)
    step("write the manifest")
    (target / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    for name in (DUMP, BUNDLE, MANIFEST):
        if (target / name).exists():
            (target / name).chmod(0o600)
    manifest["bytes"] = sum(p.stat().st_size for p in target.iterdir())
    return manifest
