"""Run a call in a forked child with a deadline, so a superlinear regression fails instead of
holding the suite. Unlike tests/watchdog.py the child is a fork: it has the test's settings
(rendering bounds, Cairn's own), but it must not touch the database."""

from __future__ import annotations

import multiprocessing
import time
import warnings

DEADLINE_SECONDS = 10


def _run(queue, fn, args, kwargs):
    # The child's CPU time: a child descheduled on a loaded machine has not done more work.
    start = time.process_time()
    result = fn(*args, **kwargs)
    queue.put((time.process_time() - start, result))


def timed(fn, *args, **kwargs):
    """(CPU seconds, what fn returned) in a fork; fails the test past DEADLINE_SECONDS."""
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_run, args=(queue, fn, args, kwargs), daemon=True)
    with warnings.catch_warnings():
        # The child only computes and answers through the queue: no lock it could inherit.
        warnings.simplefilter("ignore", DeprecationWarning)
        child.start()
    try:
        return queue.get(timeout=DEADLINE_SECONDS)
    except Exception:
        raise AssertionError(
            f"{fn.__qualname__} did not answer within {DEADLINE_SECONDS} s"
        ) from None
    finally:
        child.kill()
        child.join()
