"""The base for operator commands: each run is timed as one `command` operation."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from ops import timing


class TimedCommand(BaseCommand):
    def execute(self, *args, **options):
        name = self.__module__.rpartition(".")[2]
        with timing.timed("command", name):
            result = super().execute(*args, **options)
        timing.flush()  # a command is short-lived: write its row now
        return result
