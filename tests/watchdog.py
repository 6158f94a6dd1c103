"""Run a pure function in a child process and time it there, under a watchdog.

A backtracking regex loops inside the C `re` engine: no signal or timer in the test process
gets control back until it returns, so a regression would hang the whole suite. The child is
killed instead, and the test fails with the input's shape. Only functions that need no database
run here: the child loads the core apps (their modules import models), with a database it
never connects to.
"""

from __future__ import annotations

import contextlib
import importlib
import multiprocessing
import os
import time

WATCHDOG_SECONDS = 10
_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "django.contrib.postgres",
    "pgvector.django",
    "simple_history",
    "knowledge",
    "history",
]


def _init_child() -> None:
    os.environ.pop("DJANGO_SETTINGS_MODULE", None)
    import django
    from django.conf import settings

    settings.configure(
        INSTALLED_APPS=_APPS,
        DATABASES={"default": {"ENGINE": "django.db.backends.postgresql", "NAME": "unused"}},
        USE_TZ=True,
        TIME_ZONE="UTC",
    )
    django.setup()


def _time_call(dotted: str, args: tuple) -> float:
    module, name = dotted.rsplit(".", 1)
    fn = getattr(importlib.import_module(module), name)
    start = time.perf_counter()
    # A clear refusal (ValidationFailed) is an answer too; only the time counts.
    with contextlib.suppress(Exception):
        fn(*args)
    return time.perf_counter() - start


class Watchdog:
    """Times `dotted(*args)` in a spawned child; a call over WATCHDOG_SECONDS kills the child."""

    def __init__(self) -> None:
        self.worst: dict[str, tuple[float, int]] = {}
        self._pool = self._start()

    @staticmethod
    def _start():
        pool = multiprocessing.get_context("spawn").Pool(1, _init_child)
        pool.apply_async(_time_call, ("os.getpid", ())).get(60)  # started, before any timing
        return pool

    def seconds(self, dotted: str, *args: str) -> float:
        try:
            elapsed = self._pool.apply_async(_time_call, (dotted, args)).get(WATCHDOG_SECONDS)
        except multiprocessing.TimeoutError:
            self._pool.terminate()
            self._pool = self._start()
            elapsed = float("inf")
        size = sum(len(a) for a in args)
        if elapsed > self.worst.get(dotted, (-1.0, 0))[0]:
            self.worst[dotted] = (elapsed, size)
        return elapsed

    def close(self) -> None:
        self._pool.terminate()
