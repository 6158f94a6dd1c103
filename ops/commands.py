"""The base for operator commands: each run is timed as one `command` operation."""

from __future__ import annotations

from django.core.management.base import BaseCommand
from tqdm import tqdm

from ops import timing


class TimedCommand(BaseCommand):
    def execute(self, *args, **options):
        name = self.__module__.rpartition(".")[2]
        with timing.timed("command", name):
            result = super().execute(*args, **options)
        timing.flush()  # a command is short-lived: write its row now
        return result


def progress(desc: str, *, total: int | None = None, unit: str = "entries", **options) -> tqdm:
    """A progress bar that shows how far a run is and its rate, e.g. `12.5 entries/s`."""
    return tqdm(desc=desc, total=total, unit=f" {unit}", mininterval=0.5, **options)


def rate(count: int, seconds: float) -> str:
    return f"{count / seconds:.1f}" if seconds > 0 else "-"
