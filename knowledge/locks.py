"""Advisory locks that span every process on the database (web, workers, commands).

Session-level: held until released, or until a killed process's connection closes, so a crash
never leaves one behind. The keys are the callers' own (the mirror's, the embedding sweep's).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from django.db import connection


@contextlib.contextmanager
def advisory_lock(key: int, *, wait: bool = False) -> Iterator[bool]:
    """Hold lock `key` for the block; yields False at once when another process holds it,
    unless `wait` (then it waits, with no statement timeout, as long as the holder runs)."""
    with connection.cursor() as cur:
        if wait:
            cur.execute("SET statement_timeout = 0")
            cur.execute("SELECT pg_advisory_lock(%s)", [key])
            got = True
        else:
            cur.execute("SELECT pg_try_advisory_lock(%s)", [key])
            got = cur.fetchone()[0]
    try:
        yield got
    finally:
        if got:
            with connection.cursor() as cur:
                cur.execute("SELECT pg_advisory_unlock(%s)", [key])
                if wait:
                    cur.execute("RESET statement_timeout")
