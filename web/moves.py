"""Moving an entry from its page: to another subtopic or project, saying first who will read it
there (knowledge.reads.moves), then moving it as one revision (entry_move)."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from knowledge import limits, selectors
from knowledge.errors import Forbidden, KnowledgeError, NotFound
from knowledge.reads.moves import move_notice, move_targets
from knowledge.services import entry_move
from web.views import person


@require_http_methods(["GET", "POST"])
@person
def move(request, ref: str):
    actor = request.actor
    item = selectors.entry_get(actor, ref)
    form = request.POST if request.method == "POST" else request.GET
    targets = move_targets(actor)
    chosen = (form.get("project") or item.project.slug)[: limits.SLUG]
    target = next((p for p in targets if p.slug == chosen), None)
    here = item.subtopic.path if item.subtopic_id else ""
    subtopic = (form.get("subtopic", here) or "").strip()[: limits.PATH]
    if request.method == "POST" and target is not None:
        try:
            moved = entry_move(
                actor=actor,
                ref=item.pk,
                project=target.pk,
                subtopic=subtopic or None,
                expected_version=_version(form.get("version")),
                reason=(form.get("reason") or "").strip()[:200] or "moved on its page",
            )
        except NotFound:
            raise
        except (Forbidden, KnowledgeError) as exc:  # a members-only project, a taken title
            messages.error(request, exc.message)
        else:
            done = moved.entry
            messages.success(
                request, f"Moved: its address is now {done.permalink}; the old one leads here."
            )
            return redirect("web:entry", ref=done.short_id)
    context = {
        "entry": item,
        "targets": targets,
        "target": target,
        "subtopic": subtopic,
        "notice": move_notice(actor, [item.project], target) if target else "",
    }
    return render(request, "web/move.html", context)


def _version(value: str | None) -> int | None:
    """The version the page showed (the move refuses if the entry changed since)."""
    return int(value) if value and value.isdigit() and len(value) < 10 else None
