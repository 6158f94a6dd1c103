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


def xact_lock(space: int, name: str) -> None:
    """Wait for the lock on (`space`, `name`) until the transaction ends: two writers that
    would create the same named thing take turns (the name is hashed by the server)."""
    with connection.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", [space, name])


def try_xact_lock(key: int) -> bool:
    """Lock `key` until the transaction ends, if no one else holds it; never waits."""
    with connection.cursor() as cur:
        cur.execute("SELECT pg_try_advisory_xact_lock(%s)", [key])
        return cur.fetchone()[0]


def claim_entries(*, first: int | None, skip: list[int], take: int, space: int) -> list[int]:
    """Lock and return up to `take` entries waiting for vectors, oldest first, that no other
    process holds (per-entry session locks in the two-key `space`), with `first` ahead of them
    whether it waits or not. The ORM cannot put a try-lock after a LIMIT: the lock must be
    tried only on the rows the LIMIT kept."""
    with connection.cursor() as cur:
        cur.execute(
            """
            SELECT id FROM (
                (SELECT id, 0 AS o, NULL::timestamptz AS t FROM knowledge_entry WHERE id = %s)
                UNION ALL
                (SELECT id, 1, embed_pending_since FROM knowledge_entry
                 WHERE embed_pending_since IS NOT NULL AND id IS DISTINCT FROM %s
                   AND NOT id = ANY(%s)
                 ORDER BY embed_pending_since, id LIMIT %s)
            ) c
            WHERE pg_try_advisory_lock(%s, (c.id & 2147483647)::int)
            ORDER BY o, t, id
            """,
            [first, first, skip, take, space],
        )
        return [row[0] for row in cur.fetchall()]


def release_entries(ids: list[int], *, space: int) -> None:
    """Let go of the per-entry locks `claim_entries` took."""
    if ids:
        with connection.cursor() as cur:
            cur.execute(
                "SELECT pg_advisory_unlock(%s, (i & 2147483647)::int) FROM unnest(%s::bigint[]) i",
                [space, ids],
            )
