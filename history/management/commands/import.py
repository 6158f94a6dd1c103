"""`manage.py import <folder>`: Markdown with YAML frontmatter into Cairn, through the services."""

import time
from pathlib import Path

from django.core.management.base import CommandError

from history.importing import import_folder
from knowledge.management.base import DataCommand
from ops.commands import progress, rate


class Command(DataCommand):
    help = (
        "Import a folder of Markdown files with YAML frontmatter: a Cairn export, a Basic "
        "Memory project, an Obsidian vault or a brain-engine memory/ folder. Folders become "
        "subtopics. Re-importing changes nothing. Reports created / updated / unchanged / "
        "skipped (with the reason) per file."
    )

    def add_arguments(self, parser):
        parser.add_argument("folder")
        parser.add_argument(
            "--project",
            help="put everything into this project (its folders become subtopics); without it "
            "the first folder level names the project, as in a Cairn export",
        )
        self.add_acting_argument(
            parser, "--user", help="who imports (username; default: the first superuser)"
        )
        parser.add_argument("--agent", default="", help="label recorded as generated_by")
        parser.add_argument("--dry-run", action="store_true", help="report, change nothing")
        parser.add_argument("--verbose-skips", action="store_true", help="list every file")
        parser.add_argument(
            "--strict-schemas",
            action="store_true",
            help="skip entries that do not fit their schema where the project's mode is strict "
            "(default: import them and list what they lack)",
        )

        parser.add_argument(
            "--keep-verified",
            action="store_true",
            help="keep the files' verification marks (verified_by), mapped by username to an "
            "existing account; without it they are dropped (a file can name anyone)",
        )

    def agent_label(self, user, options):
        return options["agent"]

    def handle(self, *args, folder, project, dry_run, **options):
        root = Path(folder).expanduser()
        if not root.is_dir():
            raise CommandError(f"{root} is not a folder. Unpack an archive first.")
        started = time.perf_counter()
        with progress("import", unit="files", disable=None) as bar:
            report = import_folder(
                root,
                actor=self.actor,
                project=project,
                dry_run=dry_run,
                progress=bar,
                strict_schemas=options["strict_schemas"],
                keep_verified=options["keep_verified"],
            )
        verbose = options["verbose_skips"] or options["verbosity"] > 1
        for result in report.results:
            if result.outcome == "skipped" or result.reason or verbose:
                detail = f" ({result.reason})" if result.reason else ""
                self.stdout.write(f"  {result.outcome:9} {result.path}{detail}")
        counts = report.counts
        summary = ", ".join(
            f"{counts.get(k, 0)} {k}" for k in ("created", "updated", "unchanged", "skipped")
        )
        seconds = time.perf_counter() - started
        files = len(report.results)
        prefix = "Dry run, nothing saved: " if dry_run else ""
        self.stdout.write(
            self.style.SUCCESS(
                f"{prefix}{summary} in {seconds:.1f} s ({rate(files, seconds)} files/s)."
            )
        )
        if report.dropped_marks:
            self.stdout.write(
                f"Dropped the verification marks (verified_by) of {report.dropped_marks} "
                "file(s): a file can name anyone. Pass --keep-verified to keep them, or verify "
                "the entries again in Cairn."
            )
        written = counts.get("created", 0) + counts.get("updated", 0)
        if written and not dry_run:
            self.stdout.write(
                f"The worker embeds the {written} new or changed entries next; until then they "
                "are found by their words. /readyz shows how many still wait."
            )
