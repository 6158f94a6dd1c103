"""`manage.py export <destination>`: Markdown files in the mirror's layout, or JSON lines."""

from pathlib import Path

from django.core.management.base import CommandError
from tqdm import tqdm

from history import exporting
from knowledge.management.base import DataCommand


class Command(DataCommand):
    help = (
        "Export the current entries as Markdown with YAML frontmatter, one file per entry at "
        "<project>/<subtopic>/<slug>.md, into a folder, a .zip or a .tar.gz. "
        "--format jsonl writes one JSON object per entry with its full history instead."
    )

    def add_arguments(self, parser):
        parser.add_argument("destination", help="a new folder, or a name ending .zip/.tar.gz")
        parser.add_argument(
            "--project", action="append", help="only this project (slug); repeat for more"
        )
        parser.add_argument("--format", choices=["md", "jsonl"], default="md")

    def handle(self, *args, destination, project, format, **options):
        dest = Path(destination).expanduser()
        try:
            with tqdm(desc="export", unit="entry", disable=None) as bar:
                count = exporting.write(dest, fmt=format, projects=project, progress=bar)
        except (FileExistsError, exporting.UnknownProject) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(self.style.SUCCESS(f"Exported {count} file(s) to {dest}."))
