"""Run a pure function in a child process and time it there, under a watchdog.

`measure` also reads the child's peak resident memory around the call: Linux resets the peak
(VmHWM) when "5" is written to /proc/self/clear_refs, so C and Rust allocations (libyaml, cmark,
nh3) count too, which tracemalloc would miss.

A backtracking regex loops inside the C `re` engine: no signal or timer in the test process
gets control back until it returns, so a regression would hang the whole suite. The child is
killed instead, and the test fails with the input's shape. Only functions that need no database
run here: the child loads the core apps (their modules import models), with a database it
never connects to.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import multiprocessing
import os
import time

WATCHDOG_SECONDS = 10
_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "django.contrib.sessions",
    "django.contrib.postgres",
    "pgvector.django",
    "simple_history",
    "knowledge",
    "history",
]


def _cairn_settings() -> dict:
    """The parent's CAIRN_* settings (rendering's bounds and the like), when it has any."""
    from django.conf import settings

    if not settings.configured:
        return {}
    plain = (str, int, float, bool, list, tuple, dict, type(None))
    return {
        k: getattr(settings, k)
        for k in dir(settings)
        if k.startswith("CAIRN_") and isinstance(getattr(settings, k), plain)
    }


def _init_child(extra: dict | None = None) -> None:
    os.environ.pop("DJANGO_SETTINGS_MODULE", None)
    import django
    from django.conf import settings

    settings.configure(
        INSTALLED_APPS=_APPS,
        DATABASES={"default": {"ENGINE": "django.db.backends.postgresql", "NAME": "unused"}},
        USE_TZ=True,
        TIME_ZONE="UTC",
        **(extra or {}),
    )
    django.setup()


def _time_call(dotted: str, args: tuple) -> float:
    module, name = dotted.rsplit(".", 1)
    fn = getattr(importlib.import_module(module), name)
    from knowledge.errors import KnowledgeError

    start = time.perf_counter()
    # A clear refusal (ValidationFailed, ValueError) is an answer too; only the time counts.
    # Anything else (a RecursionError on deep nesting) is a crash and fails the test.
    with contextlib.suppress(KnowledgeError, ValueError):
        fn(*args)
    return time.perf_counter() - start


def _status_kb(key: str) -> int:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith(key + ":"))
    return int(line.split()[1])


def _best_time(call, loops: int, target_seconds: float) -> tuple[float, int]:
    """(CPU seconds per call, loops): the best of three rounds of `loops` calls (0: as many
    calls as last `target_seconds`, so a fast call is timed well above the clock's noise).
    CPU time, not wall time: on a machine other processes share, a round that is preempted
    would otherwise count their time as the call's."""
    if not loops:
        loops, spent = 0, 0.0  # the calibration's calls warm caches and imports, too
        while spent < target_seconds:
            start = time.process_time()
            call()
            spent += time.process_time() - start
            loops += 1
    best = float("inf")
    # The cyclic collector's passes walk the child's whole heap (Django and every module it
    # loaded), a cost that is the process's, not the call's: it stays off while the call is timed.
    gc.disable()
    try:
        for _ in range(3):
            start = time.process_time()
            for _ in range(loops):
                call()
            best = min(best, (time.process_time() - start) / loops)
    finally:
        gc.enable()
    return best, loops


def linear_pass(text: str) -> None:
    """A plain linear pass that allocates as a parser does: every line, copied."""
    [line[::-1] for line in text.split("\n")]


def _measure(
    dotted: str, args: tuple, target_seconds: float, loops: tuple[int, int], reference: bool
) -> dict:
    """Time the call `dotted(*args)` prepares, its peak memory, and (`reference`) linear_pass
    over its input (the call's `text`)."""
    module, name = dotted.rsplit(".", 1)
    call = getattr(importlib.import_module(module), name)(*args)
    call()  # first calls import lexers and fill caches: not what the call costs again
    gc.collect()
    # What survived (Django, every module loaded so far) is the child's for good: frozen, the
    # next case's collect walks only what was made since (60 ms less per collect, two a case).
    gc.freeze()
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")
    before = _status_kb("VmRSS")
    seconds, call_loops = _best_time(call, loops[0], target_seconds)
    kb = _status_kb("VmHWM") - before
    passes, reference_loops = 0.0, loops[1]
    if reference:
        text = call.text
        passes, reference_loops = _best_time(lambda: linear_pass(text), loops[1], target_seconds)
    return {
        "seconds": seconds,
        "kb": kb,
        # What the last call gave, when the call can tell ("answered", a refusal, a cut).
        "outcome": call.outcome() if hasattr(call, "outcome") else None,
        "reference": passes,
        "loops": (call_loops, reference_loops),
    }


class Watchdog:
    """Times `dotted(*args)` in a spawned child; a call over WATCHDOG_SECONDS kills the child."""

    def __init__(self) -> None:
        self.worst: dict[str, tuple[float, int]] = {}
        self._settings = _cairn_settings()
        self._pool = self._start()

    def _start(self):
        pool = multiprocessing.get_context("spawn").Pool(1, _init_child, (self._settings,))
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

    def measure(
        self,
        dotted: str,
        *args,
        target_seconds: float = 0.02,
        loops: tuple[int, int] = (0, 0),
        reference: bool = False,
    ) -> dict:
        """Time the zero-argument call `dotted(*args)` returns (built and run in the child),
        which names its input as `.text`: {"seconds", "kb" (peak memory above the resident size
        before), "outcome" (the call's `.outcome()`, when it has one), "reference" (linear_pass
        over the text, when asked for), "loops" (calls per round: pass them back to time a
        larger input with as many calls)}. seconds is inf when the watchdog killed the child.
        The call must not raise: a refusal is an answer, so the preparing function catches
        what it expects."""
        try:
            return self._pool.apply_async(
                _measure, (dotted, args, target_seconds, loops, reference)
            ).get(WATCHDOG_SECONDS)
        except multiprocessing.TimeoutError:
            self._pool.terminate()
            self._pool = self._start()
            return {
                "seconds": float("inf"),
                "kb": 0,
                "reference": 0.0,
                "loops": loops,
                "outcome": None,
            }

    def close(self) -> None:
        self._pool.terminate()
