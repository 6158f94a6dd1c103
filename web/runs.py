"""The runs pages: what each agent token wrote, grouped into runs, a run's entries with one diff
each and what others changed since, the preview of its undo, the undo itself, and revoking the
token that wrote it. Reads through knowledge.selectors (runs, run_preview), writes through the
services (run_undo, token_revoke), like every page."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from knowledge.errors import Forbidden, KnowledgeError, NotFound, ValidationFailed
from knowledge.reads.run_preview import run_preview
from knowledge.selectors.runs import DEFAULT_DAYS, MAX_DAYS, run_get, runs_list
from knowledge.services import run_undo, token_revoke
from web.views import person

RUNS_SHOWN = 50
DAYS = (1, 7, 30, 90, 365)
MAX_CONFLICT_MESSAGES = 10


@require_GET
@person
def runs(request):
    actor = request.actor
    days = _number(request.GET.get("days"), DEFAULT_DAYS, 1, MAX_DAYS)
    mine = request.GET.get("mine") == "on"
    listing = runs_list(actor, days=days, mine=mine, limit=RUNS_SHOWN)
    context = {"runs": listing, "days": days, "choices": DAYS, "mine": mine, "limit": RUNS_SHOWN}
    return render(request, "web/runs.html", context)


@require_GET
@person
def run(request, key: str):
    actor = request.actor
    page = run_preview(actor, key)
    page["may_revoke"] = page["run"].may_revoke(actor)
    return render(request, "web/run.html", page)


@require_http_methods(["GET", "POST"])
@person
def undo(request, key: str):
    """GET: exactly what the undo would change; POST: the undo, checked against the versions
    the preview showed (a page left open while others write refuses, with nothing undone)."""
    actor = request.actor
    if request.method == "GET":
        return render(request, "web/run_undo.html", run_preview(actor, key))
    reason = (request.POST.get("reason") or "").strip()[:200]
    try:
        report = run_undo(
            actor=actor,
            run=key,
            reason=reason,
            expected=_expected(request.POST),
            resolutions=_resolutions(request.POST),
        )
    except (NotFound, Forbidden):
        raise
    except KnowledgeError as exc:  # no reason, changed since the preview: said, nothing undone
        messages.error(request, exc.message)
        return redirect("web:run_undo", key=key)
    messages.success(request, report.summary())
    for short_id, why in report.conflicts[:MAX_CONFLICT_MESSAGES]:
        messages.warning(request, f"Entry {short_id}: {why}.")
    return redirect("web:run", key=report.undo_run or key)


@require_POST
@person
def revoke(request, key: str):
    actor = request.actor
    found = run_get(actor, key)
    if not found.may_revoke(actor):
        raise Forbidden(
            "Only the token's owner or an administrator may revoke it (and it may be revoked "
            "already): ask them, or take away its owner's role in your project."
        )
    token_revoke(actor=actor, token_id=found.id.token_id)
    messages.success(request, f"Token {found.token} revoked: it can no longer read or write.")
    return redirect("web:run", key=key)


def _number(value: str | None, default: int, low: int, high: int) -> int:
    try:
        number = int(value) if value else default
    except ValueError:
        number = default
    return max(low, min(number, high))


def _expected(form) -> dict[int, int]:
    """The versions the preview showed: `v-<entry id>` = version (0: deleted)."""
    try:
        return {int(k[2:]): int(v) for k, v in form.items() if k.startswith("v-")}
    except ValueError as exc:
        raise ValidationFailed("The form was changed by hand: open the preview again.") from exc


def _resolutions(form) -> dict[int, dict]:
    """How the person resolved each conflict: `resolve-<id>` = keep, before or text (with
    `text-<id>`); keep is no resolution (the entry stays as it is)."""
    chosen: dict[int, dict] = {}
    for name, how in form.items():
        if not name.startswith("resolve-") or not name[8:].isdigit():
            continue
        pk = int(name[8:])
        if how == "before":
            chosen[pk] = {"take": "before"}
        elif how == "text":
            chosen[pk] = {"body": form.get(f"text-{pk}", "").replace("\r\n", "\n")}
    return chosen
