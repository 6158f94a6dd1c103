"""The timings table: p50 / p90 / max per operation, then medians by memory size.

Shared by `manage.py metrics` and the admin's timing page. Percentiles are computed by
PostgreSQL (percentile_cont) over the window, so the rows never travel to Python.
"""

from __future__ import annotations

import datetime as dt
import math

from django.db import connection
from django.utils import timezone

from ops.models import OperationTiming

TABLE = OperationTiming._meta.db_table
# Memory size buckets: 0-99 entries, 100-999, 1k-9.9k, …
BUCKETS = [0, 100, 1_000, 10_000, 100_000, 1_000_000]


def _where(days: float, operation: str | None) -> tuple[str, list]:
    clauses, params = ["at >= %s"], [timezone.now() - dt.timedelta(days=days)]
    if operation:
        clauses.append("operation = %s")
        params.append(operation)
    return " AND ".join(clauses), params


def per_operation(*, days: float = 7, operation: str | None = None) -> list[dict]:
    where, params = _where(days, operation)
    sql = f"""
        SELECT surface, operation, count(*),
               percentile_cont(0.5) WITHIN GROUP (ORDER BY total_ms),
               percentile_cont(0.9) WITHIN GROUP (ORDER BY total_ms),
               max(total_ms),
               percentile_cont(0.5) WITHIN GROUP (ORDER BY db_ms),
               count(*) FILTER (WHERE outcome <> 'ok')
        FROM {TABLE} WHERE {where}
        GROUP BY surface, operation ORDER BY surface, operation
    """  # the table name is ours; values are parameters
    with connection.cursor() as cur:
        cur.execute(sql, params)
        keys = ("surface", "operation", "calls", "p50", "p90", "max", "db_p50", "failed")
        return [dict(zip(keys, row, strict=True)) for row in cur.fetchall()]


def bucket_label(low: int) -> str:
    i = BUCKETS.index(low)
    high = BUCKETS[i + 1] if i + 1 < len(BUCKETS) else None
    short = lambda n: f"{n // 1000}k" if n >= 1000 else str(n)  # noqa: E731
    return f"{short(low)}+" if high is None else f"{short(low)}-{short(high)}"


def by_size(*, days: float = 7, operation: str | None = None) -> tuple[list[str], list[dict]]:
    """(bucket labels present, rows of {operation, bucket label: median ms})."""
    where, params = _where(days, operation)
    cases = " ".join(f"WHEN entries >= {low} THEN {low}" for low in reversed(BUCKETS))
    sql = f"""
        SELECT surface || ' ' || operation, CASE {cases} ELSE 0 END AS bucket,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY total_ms), count(*)
        FROM {TABLE} WHERE {where} AND entries IS NOT NULL
        GROUP BY 1, 2 ORDER BY 1, 2
    """
    with connection.cursor() as cur:
        cur.execute(sql, params)
        found = cur.fetchall()
    lows = sorted({row[1] for row in found})
    rows: dict[str, dict] = {}
    for name, low, median, calls in found:
        rows.setdefault(name, {"operation": name})[bucket_label(low)] = (median, calls)
    return [bucket_label(low) for low in lows], list(rows.values())


def render(*, days: float = 7, operation: str | None = None) -> str:
    """Both tables as plain text (what `manage.py metrics` prints)."""
    ops = per_operation(days=days, operation=operation)
    if not ops:
        return f"No operations recorded in the last {_window(days)}."
    name_width = max(len(f"{r['surface']} {r['operation']}") for r in ops)
    lines = [
        f"Operations in the last {_window(days)}, times in ms:",
        f"{'operation':<{name_width}}  {'calls':>7}  {'p50':>8}  {'p90':>8}  {'max':>8}  "
        f"{'db p50':>8}  {'failed':>6}",
    ]
    for r in ops:
        lines.append(
            f"{r['surface'] + ' ' + r['operation']:<{name_width}}  {r['calls']:>7}  "
            f"{r['p50']:>8.1f}  {r['p90']:>8.1f}  {r['max']:>8.1f}  "
            f"{_num(r['db_p50']):>8}  {r['failed']:>6}"
        )
    labels, rows = by_size(days=days, operation=operation)
    if rows:
        lines += ["", "Median ms by memory size (entries at the time; calls in brackets):"]
        head = f"{'operation':<{name_width}}" + "".join(f"  {label:>16}" for label in labels)
        lines.append(head)
        for row in rows:
            cells = []
            for label in labels:
                cell = row.get(label)
                cells.append(f"  {f'{cell[0]:.1f} ({cell[1]})' if cell else '-':>16}")
            lines.append(f"{row['operation']:<{name_width}}" + "".join(cells))
    return "\n".join(lines)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _window(days: float) -> str:
    if days >= 1:
        return f"{days:g} day(s)"
    return f"{days * 24:.1f} hour(s)" if days * 24 >= 1 else f"{math.ceil(days * 1440)} minute(s)"


def searches_by_day(*, since: dt.datetime, tz: str) -> dict[dt.date, tuple[int, float, float]]:
    """Searches per day (in `tz`) since `since`, on every surface (the MCP tool, the REST
    route, the pages): {day: (count, p50 ms, p95 ms)}."""
    sql = f"""
        SELECT (at AT TIME ZONE %s)::date AS day, count(*),
               percentile_cont(0.5) WITHIN GROUP (ORDER BY total_ms),
               percentile_cont(0.95) WITHIN GROUP (ORDER BY total_ms)
        FROM {TABLE}
        WHERE at >= %s AND (operation = 'search' OR operation LIKE %s)
        GROUP BY 1
    """
    with connection.cursor() as cur:
        cur.execute(sql, [tz, since, "%/search%"])
        return {day: (n, p50, p95) for day, n, p50, p95 in cur.fetchall()}
