"""`manage.py restore DIR`: bring a snapshot from `manage.py backup` into an empty installation."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from memory_site.backup import BackupError, backup_restore, reopen_database

STEPS = 5  # check, restore into a new database, the mirror, swap, verify


class Command(BaseCommand):
    help = (
        "Restore the snapshot in DIR (written by `manage.py backup`): the database with "
        "pg_restore into a new database, checked there before it replaces the live one (which "
        "is kept under another name), then the git mirror, then check the counts and verify "
        "the mirror. Refuses a database that holds projects or entries unless --force, and "
        "one that other sessions use (the web server, the worker) unless --end-sessions. "
        "Access taken away since the snapshot (tokens revoked, accounts deactivated) stays "
        "taken away, and revisions made since are listed; the old database is then kept."
    )

    def add_arguments(self, parser):
        parser.add_argument("directory", nargs="?", help="the directory `manage.py backup` wrote")
        parser.add_argument(
            "--force",
            action="store_true",
            help="replace the database (and the mirror) even if it holds projects or entries",
        )
        parser.add_argument(
            "--drop-old",
            action="store_true",
            help="drop the database that was here once the restored one replaced it (kept "
            "under another name by default; kept anyway when it holds revisions the snapshot "
            "lacks)",
        )
        parser.add_argument(
            "--end-sessions",
            action="store_true",
            help="end the sessions of the programs using the database (the web server, the "
            "worker) and keep them out until the restored database is in place, instead of "
            "refusing to start while they are connected",
        )
        parser.add_argument(
            "--reopen",
            action="store_true",
            help="only let sessions into the database again, after a restore that was killed "
            "while it kept them out",
        )

    def handle(self, *args, directory, force, drop_old, end_sessions, reopen, **options):
        if reopen:
            try:
                name = reopen_database()
            except BackupError as exc:
                raise CommandError(str(exc)) from exc
            self.stdout.write(self.style.SUCCESS(f"The database {name} lets sessions in again."))
            return
        if not directory:
            raise CommandError("Name the directory `manage.py backup` wrote: restore DIR.")
        with tqdm(total=STEPS, desc="restore", unit="step", disable=None) as bar:
            seen: list[str] = []

            def step(name: str) -> None:
                if seen:
                    bar.update(1)
                seen.append(name)
                bar.set_postfix_str(name)

            try:
                result = backup_restore(
                    Path(directory),
                    force=force,
                    drop_old=drop_old,
                    end_sessions=end_sessions,
                    step=step,
                )
            except BackupError as exc:
                raise CommandError(str(exc)) from exc
            bar.update(STEPS - bar.n)
        m = result.manifest
        c = m["counts"]
        self.stdout.write(
            f"Restored {c['projects']} project(s), {c['entries']} entr(y/ies) and "
            f"{c['revisions']} revision(s) from {directory} (Cairn {m['cairn_version']}, "
            f"{m['created_at']})."
        )
        if result.migrated:
            self.stdout.write(f"Applied {len(result.migrated)} newer migration(s) after it.")
        if result.sessions_ended:
            self.stdout.write(
                f"Ended {len(result.sessions_ended)} other session(s) on the database (they "
                f"reconnect to the restored one): {'; '.join(result.sessions_ended)}."
            )
        self._since(result, drop_old)
        if result.database_kept_as:
            self.stdout.write(
                f"The database that was here is kept as {result.database_kept_as}; drop it when "
                f'you no longer need it (psql: DROP DATABASE "{result.database_kept_as}";).'
            )
        if result.database_dropped:
            self.stdout.write(f"The database that was here ({result.database_dropped}) is dropped.")
        if result.mirror_kept_aside:
            self.stdout.write(f"The mirror that was here is kept as {result.mirror_kept_aside}.")
        if result.committed:
            self.stdout.write(f"Committed {result.committed} revision(s) the snapshot had pending.")
        if result.problems:
            for line in result.problems:
                self.stdout.write(f"  {line}")
            raise CommandError(
                f"After the restore, {len(result.problems)} check(s) failed (listed above): the "
                "counts against the snapshot's manifest, then `mirror verify`."
            )
        self.stdout.write(
            self.style.SUCCESS("The counts match the snapshot and the mirror matches the database.")
        )

    def _since(self, result, drop_old: bool) -> None:
        """What the database that was here held that the snapshot lacks."""
        since = result.since
        for line in since.carried:
            self.stdout.write(f"Taken away since the snapshot, and so in the restored one: {line}.")
        if not since.revisions:
            return
        self.stdout.write(
            self.style.WARNING(
                f"The database that was here holds {since.revisions} revision(s) made since the "
                f"snapshot, which the restored one lacks; the newest: {'; '.join(since.newest)}."
            )
        )
        self.stdout.write(
            self.style.WARNING(
                ("Not dropped (--drop-old): " if drop_old else "")
                + f"{result.database_kept_as} keeps them. To bring them back, export them from "
                f"it (DATABASE_URL pointing at {result.database_kept_as}: `manage.py export "
                "DIR`) and import what you need here (`manage.py import DIR`)."
            )
        )
