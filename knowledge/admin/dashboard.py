"""The admin's index opens on what needs a person, as plots over the last 30 days: writes by
people and by agents, searches and their p50/p95, items opened; entries by project and by note
type; then the latest changes and the open items.

Apps that build on knowledge add their parts through the index's context under `cairn` (history
adds the mirror's state and the backlogs over time: history/admin/dashboard.py), so this module
imports none of them. Each part is one grouped query, whatever the number of entries."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import admin
from django.db.models import Case, CharField, Count, F, Value, When
from django.db.models.functions import TruncDate
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone

from knowledge.admin.plots import Plot, Point, day_label, days_back
from knowledge.models import Entry, EntryStatus
from knowledge.reads.health import embedding_state
from knowledge.reads.listings import entry_list
from knowledge.selectors import visible_projects
from ops.report import searches_by_day

SHOWN = 8
DAYS = 30


def entries_url(**params) -> str:
    url = reverse("admin:knowledge_entry_changelist")
    return f"{url}?{urlencode(params)}" if params else url


def _day_params(day) -> dict:
    return {
        "updated_at__year": day.year,
        "updated_at__month": day.month,
        "updated_at__day": day.day,
    }


def writes_plot(actor, days: list) -> Plot:
    """Revisions per day, by people and by agents (an agent's write is `agent:…`)."""
    since = days[0]
    rows = (
        Entry.history.model.objects.filter(
            history_date__date__gte=since, project_id__in=visible_projects(actor).values("pk")
        )
        .annotate(
            day=TruncDate("history_date"),
            who=Case(
                When(generated_by__startswith="agent:", then=Value("agent")),
                default=Value("person"),
                output_field=CharField(),
            ),
        )
        .values("day", "who")
        .annotate(n=Count("pk"))
    )
    counts = {(r["day"], r["who"]): r["n"] for r in rows}
    points = [
        Point(day_label(d), (counts.get((d, "person"), 0), counts.get((d, "agent"), 0)),
              entries_url(**_day_params(d)))
        for d in days
    ]  # fmt: skip
    people = sum(p.values[0] for p in points)
    agents = sum(p.values[1] for p in points)
    return Plot("writes", "Writes per day", entries_url(), points, ("people", "agents"),
                summary=f"{people} by people, {agents} by agents")  # fmt: skip


def opened_plot(actor, days: list, open_now: int) -> Plot:
    """Items opened per day (created open), with how many are open now."""
    rows = (
        Entry.history.model.objects.filter(
            history_date__date__gte=days[0],
            history_type="+",
            status=EntryStatus.OPEN,
            project_id__in=visible_projects(actor).values("pk"),
        )
        .annotate(day=TruncDate("history_date"))
        .values("day")
        .annotate(n=Count("pk"))
    )
    counts = {r["day"]: r["n"] for r in rows}
    points = [Point(day_label(d), (counts.get(d, 0),), entries_url(status__exact="open"))
              for d in days]  # fmt: skip
    return Plot("open", "Open items: opened per day", entries_url(status__exact="open"), points,
                summary=f"{open_now} open now")  # fmt: skip


def searches_plot(days: list) -> Plot:
    """Searches per day on every surface (the MCP tool, the REST route, the pages), with the
    day's p50 and p95 in ms, from the operation timings."""
    since = timezone.now() - timezone.timedelta(days=len(days))
    by_day = searches_by_day(since=since, tz=timezone.get_current_timezone_name())
    url = reverse("admin:ops_operationtiming_changelist") + "?operation__exact=search"
    points, lines = [], []
    for d in days:
        n, p50, p95 = by_day.get(d, (0, None, None))
        points.append(Point(day_label(d), (n,), url))
        lines.append((p50, p95))
    total = sum(p.values[0] for p in points)
    recent = [row for row in lines if row[0] is not None]
    said = f"{total} searches" + (
        f"; latest day p50 {recent[-1][0]:.0f} ms, p95 {recent[-1][1]:.0f} ms" if recent else ""
    )
    return Plot("searches", "Searches per day, p50 and p95", url, points, ("searches",),
                lines=("p50", "p95"), line_points=lines, summary=said)  # fmt: skip


def breakdown_plots(actor) -> list[Plot]:
    """Entries by project and by note type (the entries this person may see)."""
    entries = entry_list(actor).order_by()
    by_project = (
        entries.values("project_id", name=F("project__name"))
        .annotate(n=Count("pk"))
        .order_by("-n")[:12]
    )
    by_kind = entries.values("kind").annotate(n=Count("pk")).order_by("-n")[:12]
    return [
        Plot("projects", "Entries by project", reverse("admin:knowledge_project_changelist"),
             [Point(r["name"], (r["n"],), entries_url(project__id__exact=r["project_id"]))
              for r in by_project]),
        Plot("kinds", "Entries by note type", entries_url(),
             [Point(r["kind"], (r["n"],), entries_url(kind__exact=r["kind"])) for r in by_kind]),
    ]  # fmt: skip


def dashboard(request: HttpRequest) -> dict:
    """What the index shows this person (entries scoped like every read; the backlogs and the
    timings are site-wide counts, no names; timings for those who may open them)."""
    actor = request.actor
    entries = entry_list(actor)
    days = days_back(timezone.localdate(), DAYS)
    open_items = list(entries.filter(status=EntryStatus.OPEN)[:SHOWN])
    open_now = entries.filter(status=EntryStatus.OPEN).count()
    state = embedding_state()
    plots = [writes_plot(actor, days)]
    if request.user.is_superuser:  # as the timings' own admin (ops/admin.py)
        plots.append(searches_plot(days))
    plots.append(opened_plot(actor, days, open_now))
    return {
        "recent": list(entries[:SHOWN]),
        "open": open_items,
        "open_count": open_now,
        "embedding": state,
        "plots": plots,
        "breakdowns": breakdown_plots(actor),
        "days": days,
        "entries_url": entries_url(),
    }


def _plot(part: dict) -> Plot:
    """A plot another app describes: {key, title, href, summary, points: [(label, n, href)]},
    n None for a point with no value (no bar), and optionally lines, line_points, line_unit."""
    points = [Point(label, () if n is None else (n,), href) for label, n, href in part["points"]]
    lines = {k: part[k] for k in ("lines", "line_points", "line_unit") if k in part}
    return Plot(part["key"], part["title"], part["href"], points, summary=part["summary"], **lines)


_stock_index = admin.site.index


def index(request: HttpRequest, extra_context=None):
    extra = extra_context or {}
    cairn = {**dashboard(request), **extra.get("cairn", {})}
    # History's plots (the backlogs over time), handed over as plain values, join the
    # knowledge ones; they are made from the live numbers this dashboard counted.
    now = {"open": cairn["open_count"], "embedding": cairn["embedding"]}
    more = [_plot(part) for part in cairn.pop("more_plots", lambda now: [])(now)]
    cairn["plots"] = [*cairn["plots"], *more]
    return _stock_index(request, {**extra, "cairn": cairn})


admin.site.index = index  # the default site's own view, with the dashboard in its context
