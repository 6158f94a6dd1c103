"""Runs: what one token (and its agent label) wrote, read as one thing (knowledge.runs).

Who sees a run, row by row: the person who made it, in the projects they may still read; a
maintainer, in the projects they maintain; a superuser, everywhere. A run that also wrote where
the reader may not look shows only the rest, and a run none of whose rows the reader may see is
not there for them (the same answer as a run that does not exist). A run is named by the number
of one of its revisions (its first that the reader may see).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.postgres.aggregates import ArrayAgg
from django.db.models import Count, Max, Min, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from knowledge.access import maintained_projects, signed_in, visible_projects
from knowledge.actors import Actor
from knowledge.errors import NotFound, ValidationFailed
from knowledge.models import ApiToken, HistoricalEntry, Project
from knowledge.runs import GENERATED, marked_by_client
from knowledge.selectors.projects import project_get

MAX_RUNS = 200  # rows of one listing
DEFAULT_DAYS = 30
MAX_DAYS = 366
UNDO_MARK = f"{GENERATED}undo"  # the runs an undo writes (knowledge/services/runs.py)
_WHO = ("history_user_id", "history_token_id", "history_run")


@dataclass(frozen=True)
class RunId:
    """What makes a revision part of a run: the same user, token and run id."""

    user_id: int | None
    token_id: int | None
    run: str

    def rows(self) -> QuerySet:
        """Every revision of the run, whoever may see it (the caller filters)."""
        return HistoricalEntry.objects.filter(
            history_run=self.run,
            history_user_id=self.user_id,
            history_token_id=self.token_id,
        )


@dataclass(frozen=True)
class Run:
    key: int  # the run's first revision that the reader may see: what names it
    id: RunId
    user: str  # the username ("" when the account is gone)
    token: str  # how the token is named: "laptop (cairn_ab12…)", "token 12 (deleted)", or ""
    token_revoked: bool
    token_gone: bool  # the token was deleted (or the history was restored without it)
    agent: str
    started: dt.datetime
    ended: dt.datetime
    revisions: int
    entries: int
    created: int
    changed: int
    deleted: int
    projects: tuple[str, ...]  # slugs, of the projects the reader may see

    @property
    def marked(self) -> bool:
        """The client marked its writes with this run id (X-Cairn-Run)."""
        return marked_by_client(self.id.run)

    @property
    def is_undo(self) -> bool:
        return self.id.run.startswith(UNDO_MARK)

    def may_revoke(self, actor: Actor) -> bool:
        """Whether `actor` may revoke the run's token (its owner or a superuser) now."""
        user = actor.user
        mine = getattr(user, "pk", None) == self.id.user_id or getattr(user, "is_superuser", False)
        live = self.id.token_id is not None and not (self.token_revoked or self.token_gone)
        return bool(mine and live and actor.token_id is None)


def seen_rows(actor: Actor) -> Q:
    """The revisions of runs the actor may see (see the module's docstring)."""
    if not signed_in(actor):
        return Q(pk__in=[])
    visible = visible_projects(actor).values("pk")
    maintained = maintained_projects(actor).values("pk")
    return Q(project_id__in=visible) & (
        Q(history_user_id=actor.user.pk) | Q(project_id__in=maintained)
    )


def _in_runs(actor: Actor) -> QuerySet:
    return HistoricalEntry.objects.filter(seen_rows(actor)).exclude(history_run="")


def runs_list(
    actor: Actor,
    *,
    days: int = DEFAULT_DAYS,
    token: int | None = None,
    project: str | int | None = None,
    mine: bool = False,
    limit: int = 50,
) -> list[Run]:
    """The runs the actor may see that wrote in the last `days` days, the latest first: at
    most `limit` (≤ MAX_RUNS), each counted over all its rows the actor may see."""
    if not 1 <= days <= MAX_DAYS:
        raise ValidationFailed(f"days is 1 to {MAX_DAYS}.", field="days")
    rows = _in_runs(actor).filter(history_date__gte=timezone.now() - dt.timedelta(days=days))
    if token is not None:
        rows = rows.filter(history_token_id=token)
    if project is not None:
        rows = rows.filter(project_id=project_get(actor, project).pk)
    if mine:
        rows = rows.filter(history_user_id=actor.user.pk)
    limit = max(1, min(limit, MAX_RUNS))
    latest = list(rows.values(*_WHO).annotate(last=Max("history_id")).order_by("-last")[:limit])
    if not latest:
        return []
    # Counted over each run's whole life, not only the days asked for.
    wanted = [RunId(*(g[name] for name in _WHO)) for g in latest]
    counted = _counts(_in_runs(actor).filter(history_run__in={w.run for w in wanted}))
    return _described([(w, counted[w]) for w in wanted if w in counted])


def run_get(actor: Actor, key: int | str) -> Run:
    """The run revision `key` belongs to, as far as the actor may see it."""
    number = _key(key)
    row = _in_runs(actor).filter(history_id=number).values(*_WHO).first()
    if row is None:
        raise NotFound(
            f"No run with revision {key} that you can see. The runs page lists the runs you "
            "may see; a run is named by the number of one of its revisions.",
            run=str(key),
        )
    run = RunId(*(row[name] for name in _WHO))
    counted = _counts(run.rows().filter(seen_rows(actor)))
    return _described([(run, counted[run])])[0]


def _key(key: int | str) -> int:
    text = str(key).strip().lower().removeprefix("r")
    if not text.isdigit() or int(text) > 2**63 - 1:
        raise NotFound(f"{str(key)[:40]!r} names no run: a run is named by a revision number.")
    return int(text)


def _counts(rows: QuerySet) -> dict[RunId, dict]:
    grouped = rows.values(*_WHO).annotate(
        key=Min("history_id"),
        started=Min("history_date"),
        ended=Max("history_date"),
        revisions=Count("history_id"),
        entries=Count("id", distinct=True),
        created=Count("id", distinct=True, filter=Q(history_type="+")),
        deleted=Count("id", distinct=True, filter=Q(history_type="-")),
        agent=Max("history_agent"),
        project_ids=ArrayAgg("project_id", distinct=True),
    )
    return {RunId(*(g[name] for name in _WHO)): g for g in grouped.order_by()}


def _described(found: list[tuple[RunId, dict]]) -> list[Run]:
    """Runs with their user, token and project names: one query for each kind of name."""
    users = dict(
        get_user_model()
        .objects.filter(pk__in={run.user_id for run, _ in found if run.user_id})
        .values_list("pk", "username")
    )
    tokens = {
        t.pk: t
        for t in ApiToken.objects.filter(pk__in={r.token_id for r, _ in found if r.token_id})
    }
    slugs = dict(
        Project.objects.filter(pk__in={p for _, c in found for p in c["project_ids"]}).values_list(
            "pk", "slug"
        )
    )
    runs = []
    for run, c in found:
        token = tokens.get(run.token_id)
        if run.token_id is None:
            named = ""
        elif token is None:
            named = f"token {run.token_id} (deleted)"
        else:
            named = f"{token.name} ({token.prefix}…)"
        runs.append(
            Run(
                key=c["key"],
                id=run,
                user=users.get(run.user_id, ""),
                token=named,
                token_revoked=bool(token and token.revoked_at),
                token_gone=run.token_id is not None and token is None,
                agent=c["agent"] or "",
                started=c["started"],
                ended=c["ended"],
                revisions=c["revisions"],
                entries=c["entries"],
                created=c["created"],
                deleted=c["deleted"],
                changed=max(c["entries"] - c["created"] - c["deleted"], 0),
                projects=tuple(sorted(slugs[p] for p in c["project_ids"] if p in slugs)),
            )
        )
    return runs


@dataclass(frozen=True)
class Touched:
    """One entry a run wrote: its first and last revision in the run, the revision before the
    run (None when the run created it), and its latest revision today."""

    entry_id: int
    first: int
    last: int
    before: int | None
    latest: int


def run_touched(run: RunId, *, limit: int, seen: Q | None = None) -> list[Touched]:
    """The entries the run wrote (among the rows `seen` lets through; None: all of them, which
    only a write that checks who may change each uses), in the order it first wrote them, at
    most `limit`: three queries whatever their number."""
    rows = run.rows() if seen is None else run.rows().filter(seen)
    spans = list(
        rows.values("id")
        .annotate(first=Min("history_id"), last=Max("history_id"))
        .order_by("first")[:limit]
    )
    if not spans:
        return []
    earlier = HistoricalEntry.objects.filter(
        id=OuterRef("id"), history_id__lt=OuterRef("history_id")
    ).order_by("-history_id")
    newest = HistoricalEntry.objects.filter(id=OuterRef("id")).order_by("-history_id")
    around = {
        row["id"]: row
        for row in HistoricalEntry.objects.filter(history_id__in=[s["first"] for s in spans])
        .annotate(
            before=Subquery(earlier.values("history_id")[:1]),
            latest=Subquery(newest.values("history_id")[:1]),
        )
        .values("id", "before", "latest")
    }
    return [
        Touched(s["id"], s["first"], s["last"], *(around[s["id"]][k] for k in ("before", "latest")))
        for s in spans
    ]


def run_size(run: RunId) -> int:
    """How many entries the run wrote, all of them (what an undo's bound is checked on)."""
    return run.rows().values("id").distinct().count()


def run_projects(run: RunId) -> set[int]:
    """Every project the run wrote in, whoever may see them (for the undo's permission)."""
    return set(run.rows().values_list("project_id", flat=True).distinct())
