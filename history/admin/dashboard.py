"""The git mirror's part of the admin's index: parked revisions and the queue's backlog, with
what their plots show (revisions parked per day; the revisions waiting now, by the day they
were made, which is the mirror's lag as it stands: no history of the lag is kept).

The knowledge admin draws the index and knows nothing of the mirror; history hands it this part
through the index's context (`cairn`, which the knowledge dashboard merges into its own), as
plain values it draws like its own plots."""

from __future__ import annotations

import datetime as dt

from django.contrib import admin
from django.db.models import Count
from django.db.models.functions import TruncDate
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone

from history import mirror, selectors
from history.models import ParkedRevision

DAYS = 30


def _per_day(queryset, field: str) -> dict:
    rows = queryset.annotate(day=TruncDate(field)).values("day").annotate(n=Count("pk"))
    return {r["day"]: r["n"] for r in rows}


def mirror_plots(state: dict) -> list[dict]:
    today = timezone.localdate()
    days = [today - dt.timedelta(days=n) for n in range(DAYS - 1, -1, -1)]
    label = lambda d: f"{d:%b} {d.day}"  # noqa: E731
    url = reverse("admin:history_parkedrevision_changelist")
    parked = _per_day(ParkedRevision.objects.filter(parked_at__date__gte=days[0]), "parked_at")
    waiting = _per_day(mirror.pending().order_by(), "history_date")
    older = sum(n for d, n in waiting.items() if d < days[0])  # shown on the window's first day
    lag = state.get("lag_seconds") or 0
    return [
        {"key": "parked", "title": "Parked revisions: parked per day", "href": url,
         "summary": f"{state.get('parked', 0)} parked now",
         "points": [(label(d), parked.get(d, 0), url) for d in days]},
        {"key": "mirror", "title": "Waiting for the git mirror, by the day each was made",
         "href": url,
         "summary": f"{state.get('pending', 0)} waiting now"
         + (f", the oldest for {lag:.0f} s" if lag else ""),
         "points": [(label(d), waiting.get(d, 0) + (older if d == days[0] else 0), url)
                    for d in days]},
    ]  # fmt: skip


def add_mirror_state(site: admin.AdminSite) -> None:
    index = site.index

    def index_with_mirror(request: HttpRequest, extra_context=None):
        extra = extra_context or {}
        state = selectors.mirror_state()
        cairn = {"mirror": state, "more_plots": mirror_plots(state), **extra.get("cairn", {})}
        return index(request, {**extra, "cairn": cairn})

    site.index = index_with_mirror
