"""The backlogs' part of the admin's index: open items, the embedding backlog, the git mirror's
queue with its lag, and the parked revisions, each as it stood at the end of each day of the
last 30, from the snapshots a periodic task keeps (history/snapshots.py), so a lead sees whether
a backlog grows. Today's bar is the latest snapshot; the numbers above the plots are live.

The knowledge admin draws the index and knows nothing of the mirror; history hands it this part
through the index's context (`cairn`, which the knowledge dashboard merges into its own), as
plain values it draws like its own plots."""

from __future__ import annotations

import datetime as dt
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import admin
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone

from history import selectors
from knowledge.actors import Actor

DAYS = 30


def _every(seconds: float) -> str:
    return f"{seconds / 3600:g} h" if seconds >= 3600 else f"{seconds / 60:g} min"


def backlog_plots(actor: Actor, state: dict) -> list[dict]:
    today = timezone.localdate()
    days = [today - dt.timedelta(days=n) for n in range(DAYS - 1, -1, -1)]
    label = lambda d: f"{d:%b} {d.day}"  # noqa: E731
    history = selectors.backlogs_by_day(actor, since=days[0])
    entries = reverse("admin:knowledge_entry_changelist")
    parked = reverse("admin:history_parkedrevision_changelist")
    if history:
        start = min(history)
        since = f"; kept since {label(start)}" if start > days[0] else ""
    else:
        since = (
            "; no history yet: the first snapshot is taken when the worker starts, then every "
            + _every(settings.CAIRN_BACKLOG_SNAPSHOT_SECONDS)
        )

    def points(key: str, href: str) -> list[tuple]:
        # A day before the first snapshot has no value (no bar), not a zero.
        return [(label(d), history.get(d, {}).get(key), href) for d in days]

    lag = state.get("lag_seconds") or 0
    embedding = state.get("embedding", {})
    return [
        {"key": "waiting", "title": "Open items, at each day's end",
         "href": f"{entries}?{urlencode({'status__exact': 'open'})}",
         "summary": f"{state.get('open', 0)} open now" + since,
         "points": points("open", f"{entries}?status__exact=open")},
        {"key": "embedding", "title": "Embedding backlog, at each day's end", "href": entries,
         "summary": (f"the embedding provider fails: {embedding['error']}"
                     if embedding.get("error") else f"{embedding.get('backlog', 0)} waiting now")
         + since,
         "points": points("embedding", entries)},
        {"key": "mirror", "title": "Waiting for the git mirror, and its lag", "href": parked,
         "summary": f"{state.get('pending', 0)} waiting now"
         + (f", the oldest for {lag:.0f} s" if lag else "") + since,
         "points": points("pending", parked), "lines": ("lag",), "line_unit": "s",
         "line_points": [(history[d]["lag"],) if d in history else (None,) for d in days]},
        {"key": "parked", "title": "Parked revisions, at each day's end", "href": parked,
         "summary": f"{state.get('parked', 0)} parked now" + since,
         "points": points("parked", parked)},
    ]  # fmt: skip


def add_mirror_state(site: admin.AdminSite) -> None:
    index = site.index

    def index_with_mirror(request: HttpRequest, extra_context=None):
        extra = extra_context or {}
        state = selectors.mirror_state()
        cairn = {"mirror": state, **extra.get("cairn", {})}
        cairn["more_plots"] = lambda now: backlog_plots(request.actor, {**state, **now})
        return index(request, {**extra, "cairn": cairn})

    site.index = index_with_mirror
