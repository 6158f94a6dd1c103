"""The dashboard's plots, drawn on the server as SVG: shapes only, their colours from classes in
cairn-admin.css (the Content-Security-Policy allows no inline style, and no script is needed).
Words (the axis, the numbers) stay in the HTML around them, so they read at a phone's size.

Every bar and point links to the list it summarises (`href`) and names itself (`<title>`)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

WIDTH, HEIGHT, GAP = 600, 150, 2


@dataclass
class Point:
    label: str  # what the bar or point is (a day, a project)
    values: tuple[float, ...]  # one per series, stacked
    href: str = ""


@dataclass
class Plot:
    """One plot of the dashboard: what it shows, its points, and the page it summarises."""

    key: str
    title: str
    href: str
    points: list[Point]
    series: tuple[str, ...] = ("",)
    lines: tuple[str, ...] = ()  # series drawn as lines over the bars (e.g. p50, p95)
    line_points: list[tuple[float, ...]] = field(default_factory=list)
    unit: str = ""
    line_unit: str = "ms"
    summary: str = ""  # the current value or total, said in words above the plot

    @property
    def peak(self) -> float:
        return max((sum(p.values) for p in self.points), default=0)

    @property
    def line_peak(self) -> float:
        return max((v for row in self.line_points for v in row if v is not None), default=0)

    @property
    def first(self) -> str:
        return self.points[0].label if self.points else ""

    @property
    def last(self) -> str:
        return self.points[-1].label if self.points else ""

    @property
    def svg(self) -> SafeString:
        return columns(self) if self.lines or len(self.points) > 12 else rows(self)


def _f(value: float) -> str:
    return f"{value:.1f}"


def _n(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 or value == int(value) else f"{value:.1f}"


def columns(plot: Plot) -> SafeString:
    """Stacked columns, one per point (a day), with the line series over them on their own
    scale."""
    count = max(len(plot.points), 1)
    step = WIDTH / count
    peak = plot.peak or 1
    shapes = []
    for i, point in enumerate(plot.points):
        x, base, parts = i * step + GAP / 2, float(HEIGHT), []
        for s, value in enumerate(point.values):
            if not value:
                continue
            h = max(value / peak * (HEIGHT - 4), 1.5)
            base -= h
            parts.append(
                format_html(
                    '<rect class="s{}" x="{}" y="{}" width="{}" height="{}"/>',
                    s,
                    _f(x),
                    _f(base),
                    _f(step - GAP),
                    _f(h),
                )
            )
        said = (
            ", ".join(
                f"{name + ': ' if name else ''}{_n(v)}{plot.unit}"
                for name, v in zip(plot.series, point.values, strict=False)
            )
            or "no record"
        )
        hit = format_html(
            '<rect class="hit" x="{}" y="0" width="{}" height="{}"/>', _f(x), _f(step - GAP), HEIGHT
        )
        body = format_html(
            "<title>{}: {}</title>{}{}", point.label, said, hit, mark_safe("".join(parts))
        )
        shapes.append(format_html('<a href="{}">{}</a>', point.href, body) if point.href else body)
    for s, _name in enumerate(plot.lines):
        top = plot.line_peak or 1
        coords = [
            f"{i * step + step / 2:.1f},{HEIGHT - row[s] / top * (HEIGHT - 6) - 3:.1f}"
            for i, row in enumerate(plot.line_points)
            if row[s] is not None
        ]
        if coords:
            shapes.append(format_html('<polyline class="l{}" points="{}"/>', s, " ".join(coords)))
    return format_html(
        '<svg class="cairn-plot" viewBox="0 0 {} {}" preserveAspectRatio="none" role="img" '
        'aria-label="{}">{}</svg>',
        WIDTH, HEIGHT, plot.title, mark_safe("".join(shapes)),
    )  # fmt: skip


def rows(plot: Plot) -> SafeString:
    """Few points with names (projects, note types): a list of labelled bars, the words in
    HTML and each bar a small SVG, so a long name wraps at a word and never squeezes a bar."""
    peak = plot.peak or 1
    items = format_html_join(
        "",
        '<li><a href="{}"><span class="cairn-row-label">{}</span><span class="cairn-row-n">{}'
        '</span><svg class="cairn-bar" viewBox="0 0 100 6" preserveAspectRatio="none" '
        'aria-hidden="true"><rect class="track" x="0" y="0" width="100" height="6"/>'
        '<rect class="s0" x="0" y="0" width="{}" height="6"/></svg></a></li>',
        (
            (p.href, p.label, _n(sum(p.values)), _f(max(sum(p.values) / peak * 100, 0.8)))
            for p in plot.points
        ),
    )
    return format_html('<ul class="cairn-rows">{}</ul>', items)


def days_back(today: dt.date, days: int) -> list[dt.date]:
    return [today - dt.timedelta(days=n) for n in range(days - 1, -1, -1)]


def day_label(day: dt.date) -> str:
    return f"{day:%b} {day.day}"
