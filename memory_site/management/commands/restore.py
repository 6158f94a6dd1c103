"""`manage.py restore DIR`: bring a snapshot from `manage.py backup` into an empty installation."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from memory_site.backup import BackupError, backup_restore

STEPS = 5  # check, restore into a new database, the mirror, swap, verify


class Command(BaseCommand):
    help = (
        "Restore the snapshot in DIR (written by `manage.py backup`): the database with "
        "pg_restore into a new database, checked there before it replaces the live one (which "
        "is kept under another name), then the git mirror, then check the counts and verify "
        "the mirror. Refuses a database that holds projects or entries unless --force."
    )

    def add_arguments(self, parser):
        parser.add_argument("directory", help="the directory `manage.py backup` wrote")
        parser.add_argument(
            "--force",
            action="store_true",
            help="replace the database (and the mirror) even if it holds projects or entries",
        )
        parser.add_argument(
            "--drop-old",
            action="store_true",
            help="drop the database that was here once the restored one replaced it (kept "
            "under another name by default)",
        )

    def handle(self, *args, directory, force, drop_old, **options):
        with tqdm(total=STEPS, desc="restore", unit="step", disable=None) as bar:
            seen: list[str] = []

            def step(name: str) -> None:
                if seen:
                    bar.update(1)
                seen.append(name)
                bar.set_postfix_str(name)

            try:
                result = backup_restore(Path(directory), force=force, drop_old=drop_old, step=step)
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
