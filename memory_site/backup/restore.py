"""`manage.py restore DIR`: bring a snapshot made by `manage.py backup` (create.py) back: the
database with pg_restore into a new database, proven there while the live one lets no session in
(database_swap.py), compared with the live one (since.py: what would be lost, what access must
stay taken away) before it replaces it, then the mirror from its bundle, then the counts against
the manifest and the mirror against the database (`mirror verify`).
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connection
from django.db.migrations.loader import MigrationLoader

from history import maintenance, mirror
from memory_site.backup import database_swap
from memory_site.backup.create import (
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
from memory_site.backup.since import Since, compare

_CAIRN_TABLES = ("knowledge_project", "knowledge_entry", "knowledge_historicalentry")


@dataclass
class RestoreResult:
    manifest: dict
    migrated: list[str] = field(default_factory=list)  # migrations applied after the restore
    mirror_kept_aside: str = ""
    database_kept_as: str = ""  # the database that was here, under its new name
    database_dropped: str = ""  # or that name, when it was dropped after the swap
    committed: int = 0  # revisions the dump had pending, committed after the restore
    problems: list[str] = field(default_factory=list)  # counts or mirror differences
    sessions_ended: list[str] = field(default_factory=list)  # with end_sessions
    # What the database that was here held that the snapshot lacks (since.py).
    since: Since = field(default_factory=Since)


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


def _restore_list(toc: str, work: Path) -> Path:
    """pg_restore's table of contents without the extensions the database already has (and
    their comments): only their owner may touch them, and they are there."""
    with connection.cursor() as cur:
        cur.execute("SELECT extname FROM pg_extension")
        present = {row[0] for row in cur.fetchall()}
    skip = re.compile(r"^\d+; \d+ \d+ (?:COMMENT - )?EXTENSION (?:- )?(\S+)")
    kept = [
        line
        for line in toc.splitlines()
        if not ((found := skip.match(line)) and found.group(1) in present)
    ]
    path = work / "restore.list"
    path.write_text("\n".join(kept) + "\n")
    return path


def _stage_mirror(source: Path, manifest: dict) -> Path | None:
    """Clone the bundle next to the installation's mirror (before the database swap, so a bad
    bundle stops the restore while nothing is changed); None when the mirror had no commit."""
    if not manifest["mirror"].get("head"):
        return None  # the next drain starts a new one
    target = Path(settings.CAIRN_MIRROR_PATH)
    staged = target.with_name(database_swap.side_name(target.name, "restoring"))
    tool = git()
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        run([tool, "clone", "--bare", "--quiet", source / BUNDLE, staged],
            what="restore the mirror")  # fmt: skip
        run([tool, "-C", staged, "remote", "remove", "origin"], what="detach the restored mirror")
        branch = manifest["mirror"].get("branch") or settings.CAIRN_MIRROR_BRANCH
        run([tool, "-C", staged, "symbolic-ref", "HEAD", f"refs/heads/{branch}"],
            what="point the mirror's HEAD at its branch")  # fmt: skip
    except BackupError:
        shutil.rmtree(staged, ignore_errors=True)
        raise
    return staged


def _place_mirror(staged: Path | None) -> str:
    """Make the staged clone the installation's mirror; returns where an older one was kept."""
    target = Path(settings.CAIRN_MIRROR_PATH)
    kept = ""
    if target.exists():
        # Named as the old database is (time and 4 hex digits): two restores within one second
        # each keep their own, where a name by the second alone collided and failed the second.
        aside = target.with_name(database_swap.side_name(target.name, "old"))
        target.rename(aside)
        kept = str(aside)
    if staged is not None:
        staged.rename(target)
    return kept


def check_counts(manifest: dict) -> list[str]:
    now = counts()
    return [
        f"{name}: {now.get(name)} after the restore, {expected} in the snapshot"
        for name, expected in manifest["counts"].items()
        if now.get(name) != expected
    ]


def _read_dump(pg_restore: Path, dump: Path, env: dict) -> str:
    """The dump's table of contents; refuses a file pg_restore cannot read (cut short, not a
    dump at all) before anything is touched."""
    try:
        return run([pg_restore, "--list", dump], what="read the database dump", env=env)
    except BackupError as exc:
        raise BackupError(
            f"{exc}. The snapshot's {DUMP} is damaged; nothing was changed. Restore another "
            "snapshot."
        ) from exc


def _prove(source: Path, manifest: dict, pg_restore: Path, toc: str, env: dict,
           scratch: str) -> list[str]:  # fmt: skip
    """Restore the dump into the new database `scratch`, check it against the manifest (the
    migrations it records, the counts), then apply the migrations this Cairn has that it lacks
    there. Returns those migrations. Anything wrong raises, with the live database untouched."""
    untouched = "Refused: your database was not touched."
    with tempfile.TemporaryDirectory(prefix="cairn-restore-") as work, database_swap.using(scratch):
        listing = _restore_list(toc, Path(work))
        connection.close()
        try:
            run([pg_restore, "--no-owner", "--no-privileges", "--exit-on-error",
                 "--single-transaction", "--use-list", listing, "--dbname", scratch,
                 source / DUMP], what="restore the database dump", env=env)  # fmt: skip
        except BackupError as exc:
            hint = (
                " Creating an extension needs a superuser: as one, run `CREATE EXTENSION vector; "
                "CREATE EXTENSION pg_trgm;` once in the database `template1` (new databases "
                "copy it), or restore as a role that may."
                if "extension" in str(exc)
                else f" The snapshot's {DUMP} is damaged: restore another snapshot."
            )
            raise BackupError(f"{exc}.{hint} {untouched}") from exc
        ContentType.objects.clear_cache()  # ids are the snapshot's here
        problems = check_counts(manifest)
        if migrations() != manifest["migrations"]:
            problems.append("the migrations recorded differ from the manifest's")
        if problems:
            raise BackupError(
                f"The restored dump does not match the snapshot's {MANIFEST} "
                f"({'; '.join(problems)}): the snapshot is damaged. {untouched}"
            )
        before = {(app, n) for app, names in migrations().items() for n in names}
        try:
            call_command("migrate", interactive=False, verbosity=0)
        except Exception as exc:
            raise BackupError(
                f"This Cairn's migrations failed on the restored copy ({exc}). {untouched}"
            ) from exc
        after = {(app, n) for app, names in migrations().items() for n in names}
    ContentType.objects.clear_cache()
    return sorted(f"{app}.{name}" for app, name in after - before)


def _shut_out(live: str, ours: int, end_sessions: bool) -> list[database_swap.Session]:
    """Close the live database to every session but ours (the pid `ours`) until the restored
    one replaces it: a write that landed in it meanwhile would be lost with it. Refuses when
    others are connected unless `end_sessions`; returns the sessions it ended."""
    others = database_swap.sessions(live, besides=[ours])
    if others and not end_sessions:
        listed = "; ".join(str(s) for s in others[:5])
        more = f"; and {len(others) - 5} more" if len(others) > 5 else ""
        raise BackupError(
            f"{len(others)} other session(s) use the database {live}: {listed}{more}. A write "
            "they make while restore works would be lost with the database it replaces. Stop "
            "them (the web server and the worker: Ctrl-C on `make run`) and run restore again, "
            "or pass --end-sessions to end them: restore then keeps every session out until the "
            "restored database is in place (the web server and the worker answer 'retry' "
            "meanwhile and reconnect on their own). Nothing was changed."
        )
    database_swap.close(live, keep=[ours])
    return others


def _compare(old_db: psycopg.Connection, scratch: str) -> Since:
    """since.compare, the restored database's changes committed; refuses on a database error."""
    try:
        with database_swap.connect(scratch, autocommit=False) as restored:
            found = compare(old_db, restored)
            restored.commit()
            return found
    except psycopg.Error as exc:
        raise BackupError(
            f"Could not compare your database with the restored snapshot ({exc}). Refused: "
            "your database was not touched. Check that it is Cairn's, migrated by this "
            "version (`manage.py migrate`), and run restore again."
        ) from exc


def backup_restore(source: Path, *, force: bool = False, drop_old: bool = False,
                   end_sessions: bool = False,
                   step: Step = lambda name: None) -> RestoreResult:  # fmt: skip
    """Replace the database and the mirror by the snapshot in `source`, then check them.
    Refuses a database that holds projects or entries unless `force`, and one that other
    sessions use unless `end_sessions`.

    The dump is proven before the live database is touched: read (`pg_restore --list`), then
    restored into a new database on the same server, checked against the manifest and
    migrated there. Meanwhile the live database lets no session in (since.py needs it still):
    the restored one is compared with it (revisions it lacks, access taken away since the
    snapshot, the search generation), and only then does it take the live one's name, in one
    transaction. The old one is kept under another name (RestoreResult.database_kept_as), or
    dropped after the swap with `drop_old` unless it holds revisions the snapshot lacks."""
    step("check")
    source = Path(source)
    manifest = read_manifest(source)
    check_versions(manifest)
    pg_restore, _ = client_tool("pg_restore", manifest["database"]["pg_dump_major"])
    if manifest["mirror"].get("head"):
        run([git(), "bundle", "verify", "--quiet", source / BUNDLE],
            what="read the mirror's bundle")  # fmt: skip
    env = database_env()  # it starts the embedded server if needed
    toc = _read_dump(pg_restore, source / DUMP, env)
    if holds_data() and not force:
        raise BackupError(
            "The database already holds projects or entries. Restore into an empty "
            "installation (a new database, or after deleting var/postgres when embedded), or "
            "pass --force to replace everything in it (it is kept under another name)."
        )
    live = connection.settings_dict["NAME"]
    connection.close()
    old_db = database_swap.connect(live)  # ours, kept open while the database is closed
    result = RestoreResult(manifest=manifest)
    try:
        result.sessions_ended = [str(s) for s in _shut_out(live, old_db.info.backend_pid,
                                                            end_sessions)]  # fmt: skip
    except BaseException:
        old_db.close()
        raise
    step("restore into a new database")
    scratch = database_swap.side_name(live, "restore")
    staged = None
    try:
        database_swap.create(scratch)
        try:
            result.migrated = _prove(source, manifest, pg_restore, toc, env, scratch)
            result.since = _compare(old_db, scratch)
            old_db.close()
            step("restore the mirror")
            staged = _stage_mirror(source, manifest)
            step("swap the databases")
            old = database_swap.swap(live, scratch)
        except BaseException:
            database_swap.drop(scratch)
            raise
    except BaseException:
        old_db.close()
        database_swap.reopen(live)
        if staged is not None:
            shutil.rmtree(staged, ignore_errors=True)
        raise
    ContentType.objects.clear_cache()
    try:
        result.mirror_kept_aside = _place_mirror(staged)
        step("verify")
        result.problems = check_counts(manifest)
        result.committed = mirror.drain().committed  # what the dump had pending
        result.problems += maintenance.verify()
    except BackupError as exc:
        raise BackupError(
            f"{exc} The database was restored; the one that was here is kept as {old}."
        ) from exc
    if drop_old and not result.since.revisions:
        database_swap.drop(old)
        result.database_dropped = old
    else:
        result.database_kept_as = old
    return result


def reopen_database() -> str:
    """Let sessions into the live database again after a restore that was killed while it had
    it closed (`manage.py restore --reopen`); returns its name."""
    live = connection.settings_dict["NAME"]
    database_env()  # it starts the embedded server if needed
    database_swap.reopen(live)
    return live
