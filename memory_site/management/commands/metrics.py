"""`manage.py metrics [--days N] [--operation X]`: how long operations take, and whether that
grows with the memory."""

from django.core.management.base import CommandError

from ops import report, timing
from ops.commands import TimedCommand


class Command(TimedCommand):
    help = (
        "Per-operation timings recorded by every surface: p50 / p90 / max per operation, then "
        "medians grouped by memory size, so a slowdown that comes with growth shows up as a "
        "rising row. --prune deletes rows older than CAIRN_TIMINGS_KEEP_DAYS."
    )

    def add_arguments(self, parser):
        parser.add_argument("--days", type=float, default=7, help="window (default 7 days)")
        parser.add_argument("--operation", default=None, help="only this operation")
        parser.add_argument("--prune", action="store_true", help="delete old rows first")

    def handle(self, *args, days, operation, prune, **options):
        if not 0 < days <= 3650:
            raise CommandError("--days must be between 0 and 3650.")
        timing.flush()  # what this process buffered counts too
        if prune:
            self.stdout.write(f"Pruned {timing.prune()} old row(s).")
        self.stdout.write(report.render(days=days, operation=operation))
