"""`manage.py backup DIR`: a consistent snapshot of the database and the git mirror."""

from pathlib import Path

from django.core.management.base import CommandError
from tqdm import tqdm

from memory_site.backup import BackupError, backup
from ops.commands import TimedCommand

STEPS = 5


class Command(TimedCommand):
    help = (
        "Write a consistent snapshot into the new directory DIR: the database (pg_dump, custom "
        "format), the git mirror (git bundle) and manifest.json (version, migrations, counts). "
        "`manage.py restore DIR` brings it back into an empty installation."
    )

    def add_arguments(self, parser):
        parser.add_argument("directory", help="a new (or empty) directory for the snapshot")

    def handle(self, *args, directory, **options):
        with tqdm(total=STEPS, desc="backup", unit="step", disable=None) as bar:

            def step(name: str) -> None:
                if bar.n or name != "check":
                    bar.update(1)
                bar.set_postfix_str(name)

            try:
                manifest = backup(Path(directory), step=step)
            except BackupError as exc:
                raise CommandError(str(exc)) from exc
            bar.update(STEPS - bar.n)
        c = manifest["counts"]
        self.stdout.write(
            f"Backed up {c['projects']} project(s), {c['entries']} entr(y/ies) and "
            f"{c['revisions']} revision(s) into {directory} ({manifest['bytes'] / 1e6:.1f} MB)."
        )
        head = manifest["mirror"]["head"]
        self.stdout.write(
            f"Mirror: {head[:12]} on {manifest['mirror']['branch']}" if head else
            "Mirror: no commit yet (nothing bundled)."
        )  # fmt: skip
        if manifest["mirror"]["pending"]:
            self.stdout.write(
                f"{manifest['mirror']['pending']} revision(s) were saved after the drain; they "
                "are in the dump and the restored installation's worker commits them."
            )
        self.stdout.write(
            self.style.WARNING(
                "The snapshot holds password hashes and token digests: keep it private."
            )
        )
