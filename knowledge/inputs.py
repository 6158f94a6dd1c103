"""Liberal input parsing shared by the surfaces: tags, lists and human dates.

Agents send `"a, b"` or `["a", "b"]`, `"7d"`, `"2 weeks"` or an ISO date: all are accepted.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta

from django.conf import settings
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
            except (ValueError, RecursionError):  # `[[[…` past json's depth: read it as text
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


# --- source URLs: only schemes that cannot run script in a reader's browser --------------------

SAFE_URL_SCHEMES = frozenset({"http", "https", "mailto"})
# Never linkable, whatever CAIRN_SOURCE_URL_SCHEMES says: each runs or embeds content.
SCRIPT_URL_SCHEMES = frozenset({"javascript", "vbscript", "data", "blob", "file"})
_SCHEME = re.compile(r"([a-z][a-z0-9+.\-]*):", re.IGNORECASE)
# Browsers drop ASCII tab and newlines anywhere in a URL and C0 controls and spaces at its
# ends, so "java\tscript:" and " javascript:" run as javascript: — read the scheme the same way.
_DROPPED = dict.fromkeys(map(ord, "\t\n\r"))
_C0_AND_SPACE = "".join(map(chr, range(0x21)))
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def url_schemes() -> frozenset[str]:
    extra = {str(s).strip().lower() for s in settings.CAIRN_SOURCE_URL_SCHEMES}
    return SAFE_URL_SCHEMES | (extra - SCRIPT_URL_SCHEMES - {""})


def url_scheme(url: str) -> str | None:
    """The scheme a browser would read from `url` (lower case), or None when it has none."""
    text = url.translate(_DROPPED).strip(_C0_AND_SPACE)
    match = _SCHEME.match(text)
    return match.group(1).lower() if match else None


def linkable_url(url: str | None) -> bool:
    """Whether `url` may be a link target on a page: an allowed scheme and no control bytes."""
    if not url:
        return False
    cleaned = url.translate(_DROPPED).strip(_C0_AND_SPACE)
    if _CONTROL.search(cleaned):
        return False
    return url_scheme(cleaned) in url_schemes()


def source_url(url: object, *, field: str = "sources.url") -> str:
    """A source's URL as stored: trimmed, with an allowed scheme, or "" when none was given."""
    text = "" if url is None else str(url).translate(_DROPPED).strip(_C0_AND_SPACE)
    if not text or linkable_url(text):
        return text
    allowed = ", ".join(f"{s}:" for s in sorted(url_schemes()))
    scheme = url_scheme(text)
    raise ValidationFailed(
        f"{field} must be an absolute URL starting with one of {allowed} "
        f"(got {'scheme ' + repr(scheme + ':') if scheme else 'no scheme'}); "
        "give the full address, e.g. https://example.org/page, or leave the url out.",
        field=field,
        allowed=sorted(url_schemes()),
    )
