"""Database connection hygiene for MCP calls, which run outside Django's request cycle."""

from __future__ import annotations

import time

from django.db import connections


def recycle_connection() -> None:
    """What Django does around each request, which MCP calls don't get: drop a connection that
    is past CONN_MAX_AGE, broken, or left outside autocommit. Unlike close_old_connections it
    does not force a health-check ping before the next query (a round trip per call): after a
    database restart one call fails and the next one reconnects."""
    for conn in connections.all(initialized_only=True):
        if conn.connection is None:
            continue
        if (
            conn.get_autocommit() != conn.settings_dict["AUTOCOMMIT"]
            or (conn.errors_occurred and not conn.is_usable())
            or (conn.close_at is not None and time.monotonic() >= conn.close_at)
        ):
            conn.close()
        else:
            conn.errors_occurred = False
