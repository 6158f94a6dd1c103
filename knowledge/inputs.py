"""Liberal input parsing shared by the surfaces: tags, lists and human dates.

Agents send `"a, b"` or `["a", "b"]`, `"7d"`, `"2 weeks"` or an ISO date: all are accepted.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta

from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from knowledge.errors import ValidationFailed

_UNITS = {
    "m": "minutes",
    "min": "minutes",
    "minute": "minutes",
    "h": "hours",
    "hour": "hours",
    "d": "days",
    "day": "days",
    "w": "weeks",
    "week": "weeks",
    "month": "days",
    "y": "days",
    "year": "days",
}
_SCALE = {"month": 30, "y": 365, "year": 365}
_RELATIVE = re.compile(r"^\s*(\d+)\s*([a-z]+?)s?\s*(ago)?\s*$")


def find_nul(value, path: str = "") -> str | None:
    """The path of the first string holding a NUL byte (PostgreSQL cannot store one), or None."""
    if isinstance(value, str):
        return path or "value" if "\x00" in value else None
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        if isinstance(key, str) and "\x00" in key:
            return f"{path}.{key}".strip(".")
        if (found := find_nul(item, f"{path}.{key}".strip("."))) is not None:
            return found
    return None


def str_list(value: list | str | None) -> list[str] | None:
    """`"a, b"`, `'["a","b"]'` or `["a", "b"]` → `["a", "b"]`; empty → None."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except ValueError:
                value = text.strip("[]").split(",")
        else:
            value = text.split(",")
    items = [str(v).strip().strip("'\"").lstrip("#") for v in value]
    return [i for i in items if i] or None


MAX_AGE = timedelta(days=36_525)  # a relative age of at most 100 years


def when(value: str | datetime | None, *, field: str = "date") -> datetime | None:
    """An ISO date/datetime or a relative age (`7d`, `2 weeks`, `3 hours ago`) → aware datetime."""
    if value is None or isinstance(value, datetime):
        return value
    text = str(value).strip().lower()
    if not text:
        return None
    if text in ("today", "yesterday"):
        start = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
        return start - timedelta(days=1 if text == "yesterday" else 0)
    problem = ValidationFailed(
        f"Cannot read {field}={value!r}. Use an ISO date (2026-08-01), a datetime "
        "(2026-08-01T14:00), or an age like '7d', '2 weeks', '12h' (at most 100 years).",
        field=field,
    )
    if len(text) > 64:
        raise problem
    if m := _RELATIVE.match(text):
        number, unit = int(m.group(1)), m.group(2)
        if unit in _UNITS:
            amount = number * _SCALE.get(unit, 1)
            try:
                age = timedelta(**{_UNITS[unit]: amount})
            except OverflowError:
                raise problem from None
            if age > MAX_AGE:
                raise problem
            return timezone.now() - age
    try:
        parsed = (
            parse_datetime(text.upper().replace(" ", "T")) if "t" in text or ":" in text else None
        )
        if parsed is None and (day := parse_date(text)) is not None:
            parsed = datetime(day.year, day.month, day.day)
    except (ValueError, OverflowError):  # 2026-02-30, hour 25: well-formed but not a time
        raise problem from None
    if parsed is None:
        raise problem
    try:
        return parsed if timezone.is_aware(parsed) else timezone.make_aware(parsed)
    except (ValueError, OverflowError):
        raise problem from None
