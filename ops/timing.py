"""Per-operation timings: each surface's choke point times its call and records one row.

`timed(surface, operation)` measures the whole call and the part spent in database queries (an
execute wrapper on this thread's connection), counts it in the Prometheus metrics, and buffers
an OperationTiming row. Rows are written in batches (every CAIRN_TIMINGS_FLUSH_SECONDS or
CAIRN_TIMINGS_BATCH rows, and at exit) after the operation is over, so recording costs a few
microseconds per call; any failure to record is logged once and never reaches the caller.

The interval is kept by a daemon thread per process (started on the first record, again in a
forked child): without it the last calls before a quiet spell would wait for the next call.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import logging
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.utils import timezone
from django.utils.module_loading import import_string

from ops import metrics
from ops.logs import REQUEST_ID, new_request_id

log = logging.getLogger(__name__)

# Background tasks whose time outside the database is the named part.
PART_OF_TASK = {
    "knowledge.tasks.embed_entry": "embed",
    "knowledge.tasks.embedding_sweep": "embed",
    "history.tasks.mirror_drain": "git",
}


@functools.cache
def _hook(path: str):
    return import_string(path)


def refused_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that mean the caller was refused, not an error of ours (from the settings,
    so ops imports no other Cairn app)."""
    return tuple(_hook(path) for path in settings.CAIRN_OPS_REFUSED_ERRORS)


def memory_size() -> int | None:
    """The memory's size that each row is kept with."""
    path = settings.CAIRN_OPS_MEMORY_SIZE
    return _hook(path)() if path else None


@dataclass
class Timer:
    surface: str
    operation: str
    content_bytes: int | None = None
    outcome: str = "ok"
    error: str = ""
    db_seconds: float = 0.0
    parts: dict[str, float] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)
    at: object = field(default_factory=timezone.now)
    seconds: float = 0.0

    def __call__(self, execute, sql, params, many, context):
        # The execute wrapper: time spent in each query on this connection.
        start = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.db_seconds += time.perf_counter() - start

    def failed(self, exc: BaseException) -> None:
        self.outcome = "refused" if isinstance(exc, refused_errors()) else "error"
        self.error = type(exc).__name__[:120]

    def start(self) -> Timer:
        with contextlib.suppress(Exception):
            connection.execute_wrappers.append(self)
        return self

    def stop(self, exc: BaseException | None = None) -> None:
        """End the measurement and record it; never raises."""
        try:
            self.seconds = time.perf_counter() - self.started
            with contextlib.suppress(ValueError):
                connection.execute_wrappers.remove(self)
            if exc is not None and self.outcome == "ok":
                self.failed(exc)
            part = PART_OF_TASK.get(self.operation)
            if part:
                self.parts[part] = max(0.0, self.seconds - self.db_seconds)
            record(self)
        except Exception:  # recording must never fail the operation
            _warn_once("Could not record an operation's timing")


CONTENT_FIELDS = ("body", "content")


def content_size(fields: dict) -> int | None:
    """Bytes of the Markdown a write carries (its body or edit content); None for reads."""
    texts = [v for k in CONTENT_FIELDS if isinstance(v := fields.get(k), str)]
    return sum(len(t.encode()) for t in texts) if texts else None


@contextlib.contextmanager
def timed(surface: str, operation: str, *, content_bytes: int | None = None) -> Iterator[Timer]:
    """Time the block as one operation of `surface`; an exception marks it refused or error.

    The block gets a request id for its logs when the surface has not set one already."""
    rid = None if REQUEST_ID.get() else REQUEST_ID.set(new_request_id())
    timer = Timer(surface, operation, content_bytes=content_bytes).start()
    try:
        yield timer
    except BaseException as exc:
        timer.stop(exc)
        raise
    else:
        timer.stop()
    finally:
        if rid is not None:
            REQUEST_ID.reset(rid)


COLUMNS = ("at", "surface", "operation", "outcome", "error", "total_ms", "db_ms", "embed_ms",
           "git_ms", "entries", "content_bytes")  # fmt: skip
COPY_SQL = f"COPY site_operationtiming ({', '.join(COLUMNS)}) FROM STDIN"

# --- the buffer -------------------------------------------------------------------------------

_lock = threading.Lock()
_buffer: list[Timer] = []
_last_flush = time.monotonic()
_last_prune = 0.0
_warned: set[str] = set()
_flusher_pid: int | None = None  # the process whose flush thread runs
_wake = threading.Event()  # set at exit: the thread stops waiting


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        log.warning("%s; later failures are not logged.", message, exc_info=True)


def record(timer: Timer) -> None:
    metrics.observe(timer.surface, timer.operation, timer.outcome, timer.seconds)
    if not settings.CAIRN_TIMINGS_RECORD:  # benchmarks; the metrics are still counted
        return
    if _flusher_pid != os.getpid() and settings.CAIRN_TIMINGS_FLUSH_THREAD:
        _start_flusher()
    with _lock:
        _buffer.append(timer)
        due = (
            len(_buffer) >= settings.CAIRN_TIMINGS_BATCH
            or time.monotonic() - _last_flush >= settings.CAIRN_TIMINGS_FLUSH_SECONDS
        )
    if due:
        flush()


def _start_flusher() -> None:
    global _flusher_pid
    with _lock:
        if _flusher_pid == os.getpid():
            return
        _flusher_pid = os.getpid()
    try:
        threading.Thread(target=_flush_every_interval, name="cairn-timings", daemon=True).start()
    except Exception:
        _warn_once("Could not start the timings flush thread")


def _flush_every_interval() -> None:
    while not _wake.wait(settings.CAIRN_TIMINGS_FLUSH_SECONDS):
        try:
            if _buffer:
                close_old_connections()  # this thread's own connection, as a request would
                flush()
            else:
                # Quiet: no connection held open for a thread that may not write for hours.
                connection.close()
        except Exception:
            _warn_once("The timings flush thread failed")


def _after_fork_in_child() -> None:
    # The parent writes what it buffered, and its lock may have been held by another thread at
    # the fork; the child starts empty, with its own thread on its first record.
    global _lock, _wake, _flusher_pid
    _lock, _wake = threading.Lock(), threading.Event()
    _buffer.clear()
    _flusher_pid = None


os.register_at_fork(after_in_child=_after_fork_in_child)


def discard() -> None:
    """Drop what is buffered (tests start clean)."""
    with _lock:
        _buffer.clear()


def flush() -> int:
    """Write the buffered rows (one INSERT) and prune old ones now and then; never raises."""
    global _last_flush, _last_prune
    with _lock:
        timers = list(_buffer)
        _buffer.clear()
        _last_flush = time.monotonic()
    if not timers:
        return 0
    try:
        # A savepoint when some caller's transaction is open: a failed write rolls back to it
        # and leaves the caller's transaction usable.
        with transaction.atomic(), connection.cursor() as cur:
            entries = memory_size()  # once per batch: "the size then"
            # COPY: half the time of the ORM's INSERT of the same rows (bench/ops_overhead).
            with cur.copy(COPY_SQL) as copy:
                for t in timers:
                    copy.write_row(
                        (t.at, t.surface[:16], t.operation[:120], t.outcome, t.error,
                         t.seconds * 1000, t.db_seconds * 1000, _ms(t.parts.get("embed")),
                         _ms(t.parts.get("git")), entries, t.content_bytes)
                    )  # fmt: skip
        if time.monotonic() - _last_prune > 3600:
            _last_prune = time.monotonic()
            prune()
    except Exception:
        _warn_once("Could not write operation timings")
        return 0
    return len(timers)


def prune(*, days: float | None = None) -> int:
    from ops.models import OperationTiming

    days = settings.CAIRN_TIMINGS_KEEP_DAYS if days is None else days
    cutoff = timezone.now() - timezone.timedelta(days=days)
    deleted, _ = OperationTiming.objects.filter(at__lt=cutoff).delete()
    return deleted


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1000


def _flush_at_exit() -> None:
    _wake.set()
    with contextlib.suppress(Exception):
        flush()


atexit.register(_flush_at_exit)
