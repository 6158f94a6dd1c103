"""`manage.py restore DIR`: bring a snapshot made by `manage.py backup` (memory_site/backup.py)
back into an empty installation: the database with pg_restore, then the mirror from its bundle,
then the counts against the manifest and the mirror against the database (`mirror verify`).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connection, transaction
from django.db.migrations.loader import MigrationLoader

from history import maintenance, mirror
from memory_site.backup import (
    BUNDLE,
    DUMP,
    FORMAT,
    MANIFEST,
    BackupError,
    Step,
    cairn_version,
    client_tool,
    counts,
    database_env,
    git,
    migrations,
    run,
    server_major,
)

_CAIRN_TABLES = ("knowledge_project", "knowledge_entry", "knowledge_historicalentry")


@dataclass
class RestoreResult:
    manifest: dict
    migrated: list[str] = field(default_factory=list)  # migrations applied after the restore
    mirror_kept_aside: str = ""
    committed: int = 0  # revisions the dump had pending, committed after the restore
    problems: list[str] = field(default_factory=list)  # counts or mirror differences


def read_manifest(source: Path) -> dict:
    """The snapshot's manifest, after checking the directory holds a snapshot this Cairn reads."""
    if not source.is_dir():
        raise BackupError(f"{source} is not a directory; pass the directory `backup` wrote.")
    path = source / MANIFEST
    if not path.exists():
        raise BackupError(
            f"{source} holds no {MANIFEST}: it is not a snapshot made by `manage.py backup`."
        )
    try:
        manifest = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as exc:
        raise BackupError(f"{path} cannot be read ({exc}); the snapshot is damaged.") from exc
    if manifest.get("format") != FORMAT:
        raise BackupError(
            f"{source} is a snapshot of format {manifest.get('format')!r} (Cairn "
            f"{manifest.get('cairn_version', '?')}); this Cairn ({cairn_version()}) reads format "
            f"{FORMAT}. Restore it with the Cairn version that made it."
        )
    if not (source / DUMP).exists():
        raise BackupError(f"{source} has no {DUMP}; the snapshot is incomplete.")
    if manifest["mirror"].get("head") and not (source / BUNDLE).exists():
        raise BackupError(f"{source} has no {BUNDLE}; the snapshot is incomplete.")
    return manifest


def check_versions(manifest: dict) -> None:
    """Refuse a snapshot from a newer Cairn (migrations this code does not have) or a newer
    PostgreSQL than this server."""
    known = set(MigrationLoader(None, ignore_no_migrations=True).disk_migrations)
    unknown = [
        f"{app}.{name}"
        for app, names in manifest["migrations"].items()
        for name in names
        if (app, name) not in known
    ]
    if unknown:
        more = f" and {len(unknown) - 3} more" if len(unknown) > 3 else ""
        raise BackupError(
            f"The snapshot comes from a newer Cairn ({manifest.get('cairn_version')}, with "
            f"migrations {', '.join(unknown[:3])}{more} that this one ({cairn_version()}) does "
            "not have). Update Cairn to that version or later, then restore."
        )
    theirs, ours = manifest["database"]["server_major"], server_major()
    if ours < theirs:
        raise BackupError(
            f"The snapshot comes from PostgreSQL {theirs}; this server is PostgreSQL {ours}. "
            f"Restore into PostgreSQL {theirs} or newer."
        )


def holds_data() -> bool:
    """Whether the database already holds projects, entries or revisions."""
    tables = set(connection.introspection.table_names())
    if not set(_CAIRN_TABLES) <= tables:
        return False
    with connection.cursor() as cur:
        for table in _CAIRN_TABLES:
            cur.execute(f"SELECT EXISTS (SELECT 1 FROM {table})")
            if cur.fetchone()[0]:
                return True
    return False


def _empty_the_database() -> None:
    """Drop every table, view and sequence in the public schema but the extensions' own (an
    extension may belong to a superuser: in team mode Cairn's user could not create it again)."""
    kinds = {"r": "TABLE", "p": "TABLE", "v": "VIEW", "m": "MATERIALIZED VIEW",
             "f": "FOREIGN TABLE", "S": "SEQUENCE"}  # fmt: skip
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute(
            "SELECT c.relkind, c.relname FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relkind = ANY(%s) AND NOT EXISTS ("
            "  SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass "
            "  AND d.objid = c.oid AND d.deptype IN ('e', 'a', 'i'))",
            [list(kinds)],
        )
        for kind, name in cur.fetchall():
            quoted = connection.ops.quote_name(name)
            cur.execute(f"DROP {kinds[kind]} IF EXISTS public.{quoted} CASCADE")
    connection.close()


def _restore_list(pg_restore: Path, dump: Path, env: dict, work: Path) -> Path:
    """pg_restore's table of contents without the extensions the database already has (and
    their comments): only their owner may touch them, and they are there."""
    with connection.cursor() as cur:
        cur.execute("SELECT extname FROM pg_extension")
        present = {row[0] for row in cur.fetchall()}
    toc = run([pg_restore, "--list", dump], what="read the database dump", env=env)
    skip = re.compile(r"^\d+; \d+ \d+ (?:COMMENT - )?EXTENSION (?:- )?(\S+)")
    kept = [
        line
        for line in toc.splitlines()
        if not ((found := skip.match(line)) and found.group(1) in present)
    ]
    path = work / "restore.list"
    path.write_text("\n".join(kept) + "\n")
    return path


def _restore_mirror(source: Path, manifest: dict) -> str:
    """Make the bundle the installation's mirror; returns where an older one was kept ("")."""
    target = Path(settings.CAIRN_MIRROR_PATH)
    kept = ""
    if target.exists():
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
        aside = target.with_name(f"{target.name}.old-{stamp}")
        target.rename(aside)
        kept = str(aside)
    if not manifest["mirror"].get("head"):
        return kept  # the mirror had no commit yet: the next drain starts a new one
    tool = git()
    target.parent.mkdir(parents=True, exist_ok=True)
    run([tool, "clone", "--bare", "--quiet", source / BUNDLE, target], what="restore the mirror")
    run([tool, "-C", target, "remote", "remove", "origin"], what="detach the restored mirror")
    branch = manifest["mirror"].get("branch") or settings.CAIRN_MIRROR_BRANCH
    run([tool, "-C", target, "symbolic-ref", "HEAD", f"refs/heads/{branch}"],
        what="point the mirror's HEAD at its branch")  # fmt: skip
    return kept


def check_counts(manifest: dict) -> list[str]:
    now = counts()
    return [
        f"{name}: {now.get(name)} after the restore, {expected} in the snapshot"
        for name, expected in manifest["counts"].items()
        if now.get(name) != expected
    ]


def restore(source: Path, *, force: bool = False, step: Step = lambda name: None) -> RestoreResult:
    """Replace the database and the mirror by the snapshot in `source`, then check them.
    Refuses a database that holds projects or entries unless `force`."""
    step("check")
    source = Path(source)
    manifest = read_manifest(source)
    check_versions(manifest)
    pg_restore, _ = client_tool("pg_restore", manifest["database"]["pg_dump_major"])
    if manifest["mirror"].get("head"):
        run([git(), "bundle", "verify", "--quiet", source / BUNDLE],
            what="read the mirror's bundle")  # fmt: skip
    if holds_data() and not force:
        raise BackupError(
            "The database already holds projects or entries. Restore into an empty "
            "installation (a new database, or after deleting var/postgres when embedded), or "
            "pass --force to replace everything in it."
        )
    step("empty the database")
    env = database_env()  # before closing: it starts the embedded server if needed
    _empty_the_database()
    step("restore the database")
    with tempfile.TemporaryDirectory(prefix="cairn-restore-") as work:
        listing = _restore_list(pg_restore, source / DUMP, env, Path(work))
        connection.close()
        try:
            run([pg_restore, "--no-owner", "--no-privileges", "--exit-on-error",
                 "--single-transaction", "--use-list", listing, "--dbname", env["PGDATABASE"],
                 source / DUMP], what="restore the database", env=env)  # fmt: skip
        except BackupError as exc:
            hint = (
                " Creating an extension needs a superuser: run `CREATE EXTENSION vector; "
                "CREATE EXTENSION pg_trgm;` once as one in this database."
                if "extension" in str(exc)
                else ""
            )
            raise BackupError(
                f"{exc}.{hint} The database is empty now: fix the cause and run restore again, "
                "or `manage.py migrate` to start afresh."
            ) from exc
    ContentType.objects.clear_cache()  # ids are the snapshot's now
    result = RestoreResult(manifest=manifest)
    step("migrate")
    before = {(app, n) for app, names in migrations().items() for n in names}
    call_command("migrate", interactive=False, verbosity=0)
    after = {(app, n) for app, names in migrations().items() for n in names}
    result.migrated = sorted(f"{app}.{name}" for app, name in after - before)
    step("restore the mirror")
    result.mirror_kept_aside = _restore_mirror(source, manifest)
    step("verify")
    result.problems = check_counts(manifest)
    result.committed = mirror.drain().committed  # what the dump had pending
    result.problems += maintenance.verify()
    return result
